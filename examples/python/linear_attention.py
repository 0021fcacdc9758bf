"""Causal linear attention on numpy arrays with the linattn Python package.

Run after `make demo` and `pip install ./python`:

    python3 examples/python/linear_attention.py
"""

import numpy as np

import linattn
from linattn import reference

rng = np.random.default_rng(0)
B, H, N, D = 1, 8, 1024, 64
q, k, v = (rng.uniform(-1, 1, (B, H, N, D)).astype(np.float32)
           for _ in range(3))

# Causal, elu+1 features, normalized: the paper's decoder attention. The first
# call compiles a kernel for these shapes; later calls reuse it.
o = linattn.linear_attention(q, k, v)
print("output:", o.shape, o.dtype)
want = reference.linear_attention(q, k, v)  # float64, quadratic form
print(f"max relative error vs float64 numpy: "
      f"{np.abs(o - want).max() / np.abs(want).max():.1e}")

# Decoding: feed a 1000-token prompt, then the last 24 tokens one at a time.
state = linattn.RecurrentState(batch=B, heads=H, head_dim=D)
state.update(q[:, :, :1000].copy(), k[:, :, :1000].copy(),
             v[:, :, :1000].copy())
steps = [state.step(q[:, :, i].copy(), k[:, :, i].copy(), v[:, :, i].copy())
         for i in range(1000, N)]
print("decoded tokens 1000..1023 match the full pass:",
      np.allclose(np.stack(steps, axis=2), o[:, :, 1000:], rtol=1e-5,
                  atol=1e-6))
print("state:", state)

# Cross-attention: 100 queries over 1024 keys, values of another width.
v_wide = rng.uniform(-1, 1, (B, H, N, 32)).astype(np.float32)
x = linattn.linear_attention(q[:, :, :100].copy(), k, v_wide, causal=False,
                             feature_map="relu")
print("cross-attention output:", x.shape)
print(linattn.cache_info())

# MLIR diagnostics are Python exceptions with the message and location.
try:
    linattn.Module.parse(
        "func.func @f(%x: tensor<4x8xf32>) -> tensor<4x9xf32> {\n"
        "  %0 = linattn.feature_map elu %x : tensor<4x8xf32> -> tensor<4x9xf32>\n"
        "  return %0 : tensor<4x9xf32>\n"
        "}\n", name="bad.mlir")
except linattn.MLIRError as e:
    print("MLIRError:", e.location, e.message)
