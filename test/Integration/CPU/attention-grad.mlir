// Numerical test of the CPU backend: the "attention_grad" cases of
// cpu_cases.py (linattn.attention_grad, causal through scan_grad and
// non-causal through the linear form, every feature map, and
// linattn.feature_map_grad alone) are lowered with linattn-lower-to-cpu, run
// by linattn-run and compared with the float64 references of reference.py,
// themselves checked against central differences first.
// RUN: rm -rf %t && %linattn_python %S/cpu_cases.py --group=attention_grad --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: attention_grad: {{[0-9]+}} of {{[0-9]+}} cases passed
