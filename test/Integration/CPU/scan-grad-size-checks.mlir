// linattn.scan_grad's sizes that only the arguments fix are checked per call
// like every linattn op's (its shape signature, linattn-check-sizes): values
// longer than the queries stop the call with a message, on the CPU and in
// the GPU pipeline's host code, instead of reading past a buffer.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; r = np.random.default_rng(0); [np.save('%t/' + n + '.npy', r.uniform(0, 1, s).astype(np.float32)) for n, s in (('q', (5, 4)), ('v', (5, 3)), ('v7', (7, 3)))]"

// RUN: linattn-run %s --input=%t/q.npy --input=%t/q.npy --input=%t/v.npy --input=%t/v.npy --output-dir=%t | FileCheck %s --check-prefix=OK
// OK: result #0: 5x4xf32
// OK: result #1: 5x4xf32
// OK: result #2: 5x3xf32

// RUN: not --crash linattn-run %s --input=%t/q.npy --input=%t/q.npy --input=%t/v7.npy --input=%t/v.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=LENGTH
// RUN: not --crash linattn-run %s --target=cuda --emulate-gpu --input=%t/q.npy --input=%t/q.npy --input=%t/v7.npy --input=%t/v.npy --output-dir=%t 2>&1 | FileCheck %s --check-prefix=LENGTH
// LENGTH: linattn.scan_grad at {{.*}}scan-grad-size-checks.mlir:{{[0-9]+}}:19: value sequence length does not match query sequence length
// LENGTH: linattn-run: the compiled function stopped the process; a failed check prints why above.

func.func @main(%fq: tensor<?x4xf32>, %fk: tensor<?x4xf32>, %v: tensor<?x3xf32>, %do: tensor<?x3xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>) {
  %dq, %dk, %dv = linattn.scan_grad forward %fq, %fk, %v, %do normalize(eps = 1.0e-6)
      : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>, tensor<?x3xf32>
      -> tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>
  return %dq, %dk, %dv : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>
}
