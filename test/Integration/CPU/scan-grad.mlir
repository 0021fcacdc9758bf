// Numerical test of the CPU backend: the "scan_grad" cases of cpu_cases.py
// (the gradients of unnormalized scans, decomposed into three scans) are
// lowered with linattn-lower-to-cpu, run by linattn-run and compared with the
// float64 references of reference.py, themselves checked against central
// differences first.
// RUN: rm -rf %t && %linattn_python %S/cpu_cases.py --group=scan_grad --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: scan_grad: {{[0-9]+}} of {{[0-9]+}} cases passed
