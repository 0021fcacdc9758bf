// linattn.attention_grad's and linattn.feature_map_grad's sizes that only the
// arguments fix are checked per call (their shape signatures,
// linattn-check-sizes): a result gradient of another length than the
// queries, or a feature gradient of another width than the features, stops
// the call with a message, on the CPU and in the GPU pipeline's host code,
// instead of reading past a buffer.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; r = np.random.default_rng(0); [np.save('%t/' + n + '.npy', r.uniform(-1, 1, s).astype(np.float32)) for n, s in (('q', (5, 4)), ('k', (7, 4)), ('v', (7, 3)), ('do', (5, 3)), ('do6', (6, 3)), ('g', (5, 4)), ('g3', (5, 3)))]"

// RUN: linattn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/do.npy --input=%t/g.npy --output-dir=%t | FileCheck %s --check-prefix=OK
// OK: result #0: 5x4xf32
// OK: result #1: 7x4xf32
// OK: result #2: 7x3xf32
// OK: result #3: 5x4xf32

// RUN: not --crash linattn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/do6.npy --input=%t/g.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=LENGTH
// RUN: not --crash linattn-run %s --target=cuda --emulate-gpu --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/do6.npy --input=%t/g.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=LENGTH
// LENGTH: linattn.attention_grad at {{.*}}attention-grad-size-checks.mlir:{{[0-9]+}}:19: result gradient sequence length does not match query sequence length
// LENGTH: linattn-run: the compiled function stopped the process; a failed check prints why above.

// RUN: not --crash linattn-run %s --input=%t/q.npy --input=%t/k.npy --input=%t/v.npy --input=%t/do.npy --input=%t/g3.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=WIDTH
// WIDTH: linattn.feature_map_grad at {{.*}}attention-grad-size-checks.mlir:{{[0-9]+}}:9: result gradient feature size does not match input feature size

func.func @main(%q: tensor<?x4xf32>, %k: tensor<?x4xf32>, %v: tensor<?x3xf32>, %do: tensor<?x3xf32>, %g: tensor<?x?xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>, tensor<?x4xf32>) {
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do normalize(eps = 1.0e-6)
      : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>, tensor<?x3xf32>
      -> tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>
  %dx = linattn.feature_map_grad elu %q, %g : tensor<?x4xf32>, tensor<?x?xf32> -> tensor<?x4xf32>
  return %dq, %dk, %dv, %dx : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>, tensor<?x4xf32>
}
