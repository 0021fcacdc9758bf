// Numerical test of the chunked tensor-core scan: the "chunked" cases of
// gpu_cases.py (f16 and bf16 data, f32 state, fused elu/relu/identity maps)
// run on the GPU by linattn-run --target=cuda and compared with float64
// references within the 16-bit tolerances of gpu_cases.py.
// RUN: rm -rf %t && %linattn_python %S/gpu_cases.py --group=chunked --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: chunked: {{[0-9]+}} of {{[0-9]+}} cases passed
