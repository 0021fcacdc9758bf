// linattn-opt lists the linattn passes, with their summaries, beside the
// upstream ones, and knows the upstream dialects users combine it with.
// RUN: linattn-opt --help | FileCheck %s

// CHECK: Available Dialects:{{.*}} linalg, linattn, llvm,
// CHECK: --canonicalize
// CHECK: --linattn-chunk-scan {{.*}}- Rewrite linattn.scan into the chunkwise form
// CHECK-NEXT: --chunk-size=<long> {{.*}}- Tokens per chunk for scans without a chunk_size hint
// CHECK: --linattn-decompose {{.*}}- Rewrite linattn.attention into feature maps and the quadratic form
// CHECK: --linattn-masked-to-scan {{.*}}- Rewrite causally masked quadratic attention into a scan
// CHECK: --linattn-raise {{.*}}- Raise attention written in linalg, tensor, arith and math to linattn ops
// CHECK: --linattn-reassociate {{.*}}- Reassociate the quadratic form (φ(Q)φ(K)ᵀ)V into φ(Q)(φ(K)ᵀV)
// CHECK-NEXT: --mode=<value> {{.*}}- When to rewrite: auto (by the cost model), always, never
// CHECK: --linattn-scan-to-steps {{.*}}- Unroll scans over short static sequences into linattn.step chains
// CHECK-NEXT: --max-length=<long> {{.*}}- Longest static sequence to unroll
