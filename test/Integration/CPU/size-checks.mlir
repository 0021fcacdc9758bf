// Sizes that only the arguments fix are checked per call: arrays that
// disagree stop the call with a message naming the op, its location and the
// two dimensions (linattn-check-sizes, linattn-lower-asserts), on the CPU and
// in the GPU pipeline's host code, instead of reading past a buffer.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; r = np.random.default_rng(0); [np.save('%t/' + n + '.npy', r.uniform(-1, 1, s).astype(np.float32)) for n, s in (('q5', (2, 5, 8)), ('k5', (2, 5, 8)), ('k7', (2, 7, 8)), ('v5', (2, 5, 4)), ('v7', (2, 7, 4)), ('q3', (3, 5, 8)))]"

// Matching sizes run.
// RUN: linattn-run %s --input=%t/q5.npy --input=%t/k5.npy --input=%t/v5.npy --output-dir=%t | FileCheck %s --check-prefix=OK
// OK: result #0: 2x5x4xf32

// A causal mask over 5 queries and 7 keys (before: 7 rows, the queries read
// past their buffer).
// RUN: not --crash linattn-run %s --input=%t/q5.npy --input=%t/k7.npy --input=%t/v7.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: linattn.attention at {{.*}}size-checks.mlir:{{[0-9]+}}:8: a causal mask needs as many keys as queries: key sequence length does not match query sequence length
// CAUSAL: linattn-run: the compiled function stopped the process; a failed check prints why above.

// Keys and values of different lengths.
// RUN: not --crash linattn-run %s --input=%t/q5.npy --input=%t/k5.npy --input=%t/v7.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=VALUES
// VALUES: linattn.attention at {{.*}}: value sequence length does not match key sequence length

// A batch of 3 queries beside 2 keys.
// RUN: not --crash linattn-run %s --input=%t/q3.npy --input=%t/k5.npy --input=%t/v5.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: linattn.attention at {{.*}}: key batch dimension 0 does not match query batch dimension 0

// The GPU pipeline's host code checks the same before any launch.
// RUN: not --crash linattn-run %s --target=cuda --emulate-gpu --input=%t/q5.npy --input=%t/k7.npy --input=%t/v7.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=CAUSAL

// Through the generic lowering as well.
// RUN: not --crash linattn-run %s --pipeline="linattn-lower-to-cpu{kernels=false rewrite-forms=false}" --input=%t/q5.npy --input=%t/k7.npy --input=%t/v7.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=CAUSAL

func.func @main(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x4xf32> -> tensor<?x?x4xf32>
  return %o : tensor<?x?x4xf32>
}
