// linattn-opt lists the linattn passes, with their summaries, beside the
// upstream ones, and knows the upstream dialects users combine it with.
// RUN: linattn-opt --help | FileCheck %s

// CHECK: Available Dialects:{{.*}} linalg, linattn, llvm,
// CHECK: --canonicalize
// CHECK: --linattn-decompose {{.*}}- Rewrite linattn.attention into feature maps and the quadratic form
