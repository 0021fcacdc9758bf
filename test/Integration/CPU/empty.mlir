// Sizes of 0 (batch, tokens, features, values, head size) through every path
// that slices the operands: the CPU kernels, the generic lowering
// (kernels=false), linattn-chunk-scan, linattn-scan-to-steps, the
// reassociated and scanned attention forms, and poly2's lone constant
// feature for a head of size 0, each against the float64 reference.
// RUN: rm -rf %t && %linattn_python %S/cpu_cases.py --group=empty --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: empty: {{[0-9]+}} of {{[0-9]+}} cases passed
