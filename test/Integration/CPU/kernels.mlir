// Numerical test of the CPU backend: the "kernels" cases (the vectorized scan and step kernels) of cpu_cases.py are
// lowered with linattn-lower-to-cpu, run by linattn-run and compared with the
// float64 references of reference.py.
// RUN: rm -rf %t && %linattn_python %S/cpu_cases.py --group=kernels --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: kernels: {{[0-9]+}} of {{[0-9]+}} cases passed
