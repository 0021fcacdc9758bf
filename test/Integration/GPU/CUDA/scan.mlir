// Numerical test of the GPU backend: the "scan" cases of gpu_cases.py are
// lowered with linattn-lower-to-nvvm, run on the GPU by linattn-run
// --target=cuda and compared with the float64 references of reference.py.
// RUN: rm -rf %t && %linattn_python %S/gpu_cases.py --group=scan --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: scan: {{[0-9]+}} of {{[0-9]+}} cases passed
