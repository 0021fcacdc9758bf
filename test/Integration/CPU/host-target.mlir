// Code compiled for another CPU than the host's. linattn-run JIT-compiles it
// only if the host has the instruction sets that CPU and the target features
// give; before, code for a CPU with more (AVX512-FP16 on an AMD Zen 4, f16
// data) stopped the process at an illegal instruction, without a message.
// REQUIRES: host-lacks-isa-feature
// RUN: linattn-run %s --random-seed=1 --pipeline="linattn-lower-to-cpu{target-cpu=x86-64-v2}" | FileCheck %s --check-prefix=OK
// RUN: not linattn-run %s --random-seed=1 --pipeline="linattn-lower-to-cpu{target-features=+%host_lacked_feature}" 2>&1 | FileCheck %s --check-prefix=LACKS -DFEATURE=%host_lacked_feature
// RUN: not linattn-run %s --random-seed=1 --pipeline="linattn-lower-to-cpu{target-cpu=x86-64-v2 target-features=+avx2,+%host_lacked_feature}" 2>&1 | FileCheck %s --check-prefix=BOTH -DFEATURE=%host_lacked_feature
// OK: result #0: 2x64x32xf16
// LACKS: error: code generated for target features '+[[FEATURE]]' may use instructions this host's CPU ({{.*}}) does not have: {{.*}}[[FEATURE]]{{.*}}; run it on such a CPU, or compile for this host (no target-cpu or target-features)
// LACKS-NOT: result
// BOTH: error: code generated for target CPU 'x86-64-v2' with target features '+avx2,+[[FEATURE]]' may use {{.*}}[[FEATURE]]

func.func @main(%q: tensor<2x64x32xf16>, %k: tensor<2x64x32xf16>, %v: tensor<2x64x32xf16>) -> tensor<2x64x32xf16> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<2x64x32xf16>, tensor<2x64x32xf16>, tensor<2x64x32xf16> -> tensor<2x64x32xf16>
  return %o : tensor<2x64x32xf16>
}
