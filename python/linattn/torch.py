"""PyTorch CPU tensors in, tensors out (needs torch; not a dependency).

    import torch, linattn.torch as lt
    o = lt.linear_attention(q, k, v)          # q, k, v: CPU tensors [B, H, N, D]

Tensors are shared with numpy without a copy when they are contiguous CPU
float16/float32/float64 tensors that do not require grad; the result is a
tensor sharing the output's memory. Autograd is not supported: inputs that require
grad raise an error (call ``.detach()`` to run the forward only).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

try:
    import torch as _torch
except ImportError as e:  # pragma: no cover - exercised without torch
    raise ImportError("linattn.torch needs PyTorch (pip install torch)") from e

from . import attention as _attention

__all__ = ["RecurrentState", "linear_attention"]


def _to_numpy(name: str, t: Any) -> np.ndarray:
    if not isinstance(t, _torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got "
                        f"{type(t).__name__}")
    if t.device.type != "cpu":
        raise ValueError(f"{name} is on {t.device}; linattn.torch takes CPU "
                         "tensors")
    if t.requires_grad:
        raise ValueError(f"{name} requires grad; linattn.torch has no "
                         "backward: pass {name}.detach()")
    if t.dtype not in (_torch.float16, _torch.float32, _torch.float64):
        raise TypeError(f"{name} has dtype {t.dtype}; linattn computes in "
                        "float16, float32 or float64")
    if not t.is_contiguous():
        raise ValueError(f"{name} is not contiguous; pass {name}.contiguous()")
    return t.numpy()


def linear_attention(q: "_torch.Tensor", k: "_torch.Tensor",
                     v: "_torch.Tensor", *, feature_map: str = "elu",
                     causal: bool = True, normalize: bool = True,
                     eps: float = 1e-6,
                     projection: Optional["_torch.Tensor"] = None,
                     backend: str = "cpu") -> "_torch.Tensor":
    """`linattn.linear_attention` on CPU tensors; returns a tensor."""
    p = None if projection is None else _to_numpy("projection", projection)
    o = _attention.linear_attention(
        _to_numpy("q", q), _to_numpy("k", k), _to_numpy("v", v),
        feature_map=feature_map, causal=causal, normalize=normalize, eps=eps,
        projection=p, backend=backend)
    return _torch.from_numpy(o)


class RecurrentState(_attention.RecurrentState):
    """`linattn.RecurrentState` taking and returning CPU tensors."""

    def __init__(self, batch: int, heads: int, head_dim: int,
                 value_dim: Optional[int] = None, *,
                 dtype: Any = _torch.float32,
                 projection: Optional["_torch.Tensor"] = None,
                 **options: Any) -> None:
        np_dtype = {_torch.float32: np.float32,
                    _torch.float64: np.float64}.get(dtype, dtype)
        p = None if projection is None else _to_numpy("projection", projection)
        super().__init__(batch, heads, head_dim, value_dim, dtype=np_dtype,
                         projection=p, **options)

    @property
    def S(self) -> "_torch.Tensor":  # type: ignore[override]
        """The key-value state, [B, H, F, Dv] (shares memory)."""
        return _torch.from_numpy(self._s)

    @property
    def z(self) -> "_torch.Tensor":  # type: ignore[override]
        """The normalizer state, [B, H, F] (shares memory)."""
        return _torch.from_numpy(self._z)

    def step(self, q: Any, k: Any, v: Any) -> "_torch.Tensor":
        return _torch.from_numpy(super().step(
            _to_numpy("q", q), _to_numpy("k", k), _to_numpy("v", v)))

    def update(self, q: Any, k: Any, v: Any) -> "_torch.Tensor":
        return _torch.from_numpy(super().update(
            _to_numpy("q", q), _to_numpy("k", k), _to_numpy("v", v)))
