"""PyTorch tensors in, tensors out (needs torch; not a dependency).

    import torch, linattn.torch as lt
    o = lt.linear_attention(q, k, v)          # q, k, v: tensors [B, H, N, D]

CPU tensors are shared with numpy without a copy when they are contiguous
float16/float32/float64 tensors that do not require grad; the result is a
tensor sharing the output's memory.

CUDA tensors (float16, bfloat16, float32 or float64, contiguous, on the first
GPU) run on the GPU with no copy: the kernels read the tensors' memory, write
a new tensor allocated by torch, and are enqueued on torch's current stream,
like a torch operation (`linattn.linear_attention_device`). They are compiled
once per shape, dtype and options.

Autograd is not supported: inputs that require grad raise an error (call
``.detach()`` to run the forward only). `RecurrentState` takes CPU tensors.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

try:
    import torch as _torch
except ImportError as e:  # pragma: no cover - exercised without torch
    raise ImportError("linattn.torch needs PyTorch (pip install torch)") from e

from . import attention as _attention
from .jit import DeviceArray

__all__ = ["RecurrentState", "linear_attention"]

_NUMPY_DTYPES = {_torch.float16: np.float16, _torch.float32: np.float32,
                 _torch.float64: np.float64}
_DEVICE_ELEMENTS = {_torch.float16: "f16", _torch.bfloat16: "bf16",
                    _torch.float32: "f32", _torch.float64: "f64"}


def _check_tensor(name: str, t: Any) -> None:
    if not isinstance(t, _torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got "
                        f"{type(t).__name__}")
    if t.requires_grad:
        raise ValueError(f"{name} requires grad; linattn.torch has no "
                         f"backward: pass {name}.detach()")
    if not t.is_contiguous():
        raise ValueError(f"{name} is not contiguous; pass {name}.contiguous()")


def _to_numpy(name: str, t: Any) -> np.ndarray:
    _check_tensor(name, t)
    if t.device.type != "cpu":
        raise ValueError(f"{name} is on {t.device}; this takes CPU tensors")
    if t.dtype not in _NUMPY_DTYPES:
        raise TypeError(f"{name} has dtype {t.dtype}; on the CPU linattn "
                        "computes in float16, float32 or float64")
    return t.numpy()


def _to_device_array(name: str, t: Any, device: "_torch.device"
                     ) -> DeviceArray:
    _check_tensor(name, t)
    if t.device != device:
        raise ValueError(f"{name} is on {t.device}, q on {device}")
    if t.dtype not in _DEVICE_ELEMENTS:
        raise TypeError(f"{name} has dtype {t.dtype}; on the GPU linattn "
                        "computes in float16, bfloat16, float32 or float64")
    return DeviceArray(t.data_ptr(), tuple(t.shape), _DEVICE_ELEMENTS[t.dtype])


def _cuda_linear_attention(q: "_torch.Tensor", k: Any, v: Any,
                           backend: str, **options: Any) -> "_torch.Tensor":
    device = q.device
    # linattn's CUDA runtime uses the primary context of the first GPU.
    if device.index not in (None, 0):
        raise ValueError(f"q is on {device}; linattn runs on the first GPU "
                         "(cuda:0; choose it with CUDA_VISIBLE_DEVICES)")
    dq, dk, dv = (_to_device_array(n, t, device)
                  for n, t in (("q", q), ("k", k), ("v", v)))
    for name, x in (("q", dq), ("k", dk), ("v", dv)):
        if len(x.shape) != 4:
            raise ValueError(f"{name} must have rank 4 ([B, H, N, D]), got "
                             f"shape {x.shape}")
    out = _torch.empty(dq.shape[:3] + dv.shape[3:], dtype=q.dtype,
                       device=device)
    stream = _torch.cuda.current_stream(device).cuda_stream
    _attention.linear_attention_device(
        dq, dk, dv, DeviceArray(out.data_ptr(), tuple(out.shape), dq.element),
        stream=stream, backend=backend, **options)
    return out


def linear_attention(q: "_torch.Tensor", k: "_torch.Tensor",
                     v: "_torch.Tensor", *, feature_map: str = "elu",
                     causal: bool = True, normalize: bool = True,
                     eps: float = 1e-6,
                     projection: Optional["_torch.Tensor"] = None,
                     backend: Optional[str] = None) -> "_torch.Tensor":
    """`linattn.linear_attention` on tensors; returns a tensor on their
    device. CPU tensors run on `backend` (default ``"cpu"``); CUDA tensors
    run on the GPU (``"cuda"``; the elu, relu and identity feature maps)
    on torch's current stream, without copies."""
    if isinstance(q, _torch.Tensor) and q.device.type == "cuda":
        if projection is not None:
            raise ValueError("projection is only used by feature_map='favor', "
                             "which has no GPU kernel")
        return _cuda_linear_attention(
            q, k, v, backend or "cuda", feature_map=feature_map,
            causal=causal, normalize=normalize, eps=eps)
    backend = backend or "cpu"
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
        np_dtype = _NUMPY_DTYPES.get(dtype, dtype)
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
