// Numerical before/after test of every rewrite pass: the "rewrites" cases of
// cpu_cases.py run the same inputs through the quadratic form as written and
// through linattn-raise (on importer-style linalg), linattn-masked-to-scan,
// linattn-reassociate, linattn-chunk-scan
// (several chunk sizes, lengths they do not divide, reverse, init) and
// linattn-scan-to-steps, each checked against the float64 reference.
// RUN: rm -rf %t && %linattn_python %S/cpu_cases.py --group=rewrites --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: rewrites: {{[0-9]+}} of {{[0-9]+}} cases passed
