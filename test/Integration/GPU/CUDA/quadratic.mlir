// Numerical test of the GPU backend: the "quadratic" cases of gpu_cases.py (the
// quadratic form lowered as written, rewrite-forms=false) run on the GPU by
// linattn-run --target=cuda and compared with the float64 references.
// RUN: rm -rf %t && %linattn_python %S/gpu_cases.py --group=quadratic --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: quadratic: {{[0-9]+}} of {{[0-9]+}} cases passed
