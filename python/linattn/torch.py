"""PyTorch tensors in, tensors out (needs torch; not a dependency).

    import torch, linattn.torch as lt
    o = lt.linear_attention(q, k, v)          # q, k, v: tensors [B, H, N, D]

CPU tensors are shared with numpy without a copy when they are contiguous
float16/float32/float64 tensors that do not require grad; the result is a
tensor sharing the output's memory.

CUDA tensors (float16, bfloat16, float32 or float64, contiguous, on one GPU)
run on that GPU with no copy: the kernels read the tensors' memory, write a
new tensor allocated by torch, and are enqueued on torch's current stream of
that device, like a torch operation (`linattn.linear_attention_device`).
They are compiled once per head sizes, dtype, options, chip and SM count
(any batch, heads and lengths): GPUs of different compute capabilities or
sizes each get code for their own.

`RecurrentState(..., device="cuda")` keeps its state on the GPU and decodes
there, on torch's current stream (capturable in a CUDA graph).

`linear_attention` is differentiable: when q, k or v require grad (and
grad mode is on), the backward pass is `linattn.linear_attention_grad`
on CPU tensors and `linattn.linear_attention_grad_device` on CUDA tensors
(GPU kernels throughout, on torch's current stream), recomputed from q, k,
v and the output's gradient: the forward pass keeps nothing but its
inputs. There is no gradient with respect to favor's `projection` (its
random features are drawn, not learned; one that requires grad raises) and
no double backward. `RecurrentState` has no backward (its inputs must not
require grad).

Training a long sequence in segments (truncated backpropagation through
time, or a context longer than memory): `linear_attention(...,
initial_state=(S, z), output_final_state=True)` starts the causal scan from
a state and returns the one it ends with, both differentiable. Gradients
flow into the initial state from the segment's outputs and from its final
state's uses, so chained segments give the whole sequence's gradients.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

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


def _check_tensor(name: str, t: Any, differentiable: bool = False) -> None:
    if not isinstance(t, _torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got "
                        f"{type(t).__name__}")
    if t.requires_grad and not differentiable:
        raise ValueError(f"{name} requires grad; linattn.torch has no "
                         f"backward for it: pass {name}.detach()")
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
        raise ValueError(f"{name} is on {t.device}, not {device}")
    if t.dtype not in _DEVICE_ELEMENTS:
        raise TypeError(f"{name} has dtype {t.dtype}; on the GPU linattn "
                        "computes in float16, bfloat16, float32 or float64")
    return DeviceArray(t.data_ptr(), tuple(t.shape), _DEVICE_ELEMENTS[t.dtype])


def _cuda_linear_attention(q: "_torch.Tensor", k: Any, v: Any,
                           backend: str, projection: Any = None,
                           **options: Any) -> "_torch.Tensor":
    device = _cuda_device(q.device)
    dq, dk, dv = (_to_device_array(n, t, device)
                  for n, t in (("q", q), ("k", k), ("v", v)))
    dp = (None if projection is None
          else _to_device_array("projection", projection, device))
    for name, x in (("q", dq), ("k", dk), ("v", dv)):
        if len(x.shape) != 4:
            raise ValueError(f"{name} must have rank 4 ([B, H, N, D]), got "
                             f"shape {x.shape}")
    out = _torch.empty(dq.shape[:3] + dv.shape[3:], dtype=q.dtype,
                       device=device)
    # linattn's CUDA runtime acts in the calling thread's current context:
    # within this block torch's for `device`.
    with _torch.cuda.device(device):
        stream = _torch.cuda.current_stream(device).cuda_stream
        _attention.linear_attention_device(
            dq, dk, dv, _to_device_array("out", out, device), stream=stream,
            projection=dp, backend=backend, **options)
    return out


def _cuda_device(device: "_torch.device") -> "_torch.device":
    """`device` with its index (torch's current device where it has none)."""
    if device.index is None:
        return _torch.device("cuda", _torch.cuda.current_device())
    return device


def _cuda_linear_attention_grad(
        q: "_torch.Tensor", k: "_torch.Tensor", v: "_torch.Tensor",
        grad_out: "_torch.Tensor", backend: str, projection: Any = None,
        state: Optional[Tuple["_torch.Tensor", ...]] = None,
        final_grad: Optional[Tuple["_torch.Tensor", ...]] = None,
        **options: Any) -> Tuple["_torch.Tensor", ...]:
    device = _cuda_device(q.device)
    inputs = [_to_device_array(n, t, device) for n, t in
              (("q", q), ("k", k), ("v", v), ("grad_out", grad_out))]
    dp = (None if projection is None
          else _to_device_array("projection", projection, device))
    grads = [_torch.empty_like(t) for t in (q, k, v)]
    pairs = {}
    for name, pair in (("initial_state", state),
                       ("final_state_grad", final_grad)):
        if pair is not None:
            pairs[name] = tuple(_to_device_array(f"{name}'s {part}", t,
                                                 device)
                                for part, t in zip("Sz", pair))
    if state is not None:
        grads += [_torch.empty_like(t) for t in state]
        pairs["initial_state_grad"] = tuple(
            _to_device_array(n, t, device)
            for n, t in zip(("dS0", "dz0"), grads[3:]))
    with _torch.cuda.device(device):
        stream = _torch.cuda.current_stream(device).cuda_stream
        _attention.linear_attention_grad_device(
            *inputs, *(_to_device_array(n, g, device)
                       for n, g in zip(("dq", "dk", "dv"), grads)),
            stream=stream, projection=dp, backend=backend, **pairs,
            **options)
    return tuple(grads)


def _linear_attention(q: "_torch.Tensor", k: "_torch.Tensor",
                      v: "_torch.Tensor", backend: Optional[str],
                      projection: Optional["_torch.Tensor"],
                      options: Dict[str, Any]) -> "_torch.Tensor":
    """The forward pass (of q, k, v detached: the autograd function's
    forward sees the tensors that require grad)."""
    q, k, v = (t.detach() for t in (q, k, v))
    if q.device.type == "cuda":
        return _cuda_linear_attention(q, k, v, backend or "cuda",
                                      projection=projection, **options)
    p = None if projection is None else _to_numpy("projection", projection)
    return _torch.from_numpy(_attention.linear_attention(
        _to_numpy("q", q), _to_numpy("k", k), _to_numpy("v", v),
        projection=p, backend=backend or "cpu", **options))


def _linear_attention_grad(q: "_torch.Tensor", k: "_torch.Tensor",
                           v: "_torch.Tensor", grad_out: "_torch.Tensor",
                           backend: Optional[str],
                           projection: Optional["_torch.Tensor"],
                           options: Dict[str, Any],
                           state: Optional[Tuple["_torch.Tensor", ...]] = None,
                           final_grad: Optional[Tuple["_torch.Tensor", ...]]
                           = None) -> Tuple["_torch.Tensor", ...]:
    """dq, dk, dv of the forward pass for `grad_out`; with the initial
    `state` of a causal scan, also dS₀, dz₀; `final_grad` the gradients of
    its final state."""
    q, k, v = (t.detach() for t in (q, k, v))
    grad_out = grad_out.detach().contiguous()
    if final_grad is not None:
        final_grad = tuple(t.detach().contiguous() for t in final_grad)
    if q.device.type == "cuda":
        return _cuda_linear_attention_grad(q, k, v, grad_out,
                                           backend or "cuda",
                                           projection=projection, state=state,
                                           final_grad=final_grad, **options)
    p = None if projection is None else _to_numpy("projection", projection)
    pairs = {name: None if pair is None else
             tuple(_to_numpy(f"{name}'s {part}", t)
                   for part, t in zip("Sz", pair))
             for name, pair in (("initial_state", state),
                                ("final_state_grad", final_grad))}
    return tuple(_torch.from_numpy(g) for g in _attention.linear_attention_grad(
        _to_numpy("q", q), _to_numpy("k", k), _to_numpy("v", v),
        _to_numpy("grad_out", grad_out), projection=p,
        backend=backend or "cpu", **pairs, **options))


def _zeros_state(q: "_torch.Tensor", v: "_torch.Tensor", f: int,
                 dtype: "_torch.dtype") -> Tuple["_torch.Tensor", ...]:
    b, h = q.shape[:2]
    return (_torch.zeros(b, h, f, v.shape[3], dtype=dtype, device=q.device),
            _torch.zeros(b, h, f, dtype=dtype, device=q.device))


def _state_dtype(dtype: "_torch.dtype") -> "_torch.dtype":
    """The dtype of the scan's state for data of `dtype`
    (`device_state_element`)."""
    element = _attention.device_state_element(_DEVICE_ELEMENTS[dtype])
    return next(t for t, e in _DEVICE_ELEMENTS.items() if e == element)


def _stateful_forward(q: "_torch.Tensor", k: "_torch.Tensor",
                      v: "_torch.Tensor",
                      state: Optional[Tuple["_torch.Tensor", ...]],
                      backend: Optional[str],
                      projection: Optional["_torch.Tensor"],
                      options: Dict[str, Any]
                      ) -> Tuple["_torch.Tensor", ...]:
    """O, S₁, z₁ of the causal scan from `state` (zeros when None)."""
    q, k, v = (t.detach() for t in (q, k, v))
    if state is not None:
        state = tuple(t.detach() for t in state)
    if q.device.type == "cuda":
        device = _cuda_device(q.device)
        # q, k and v checked (device, dtype) before a zero state is made.
        arrays = [_to_device_array(n, t, device)
                  for n, t in (("q", q), ("k", k), ("v", v))]
        if state is None:
            f = _attention.feature_dim(options["feature_map"], q.shape[-1],
                                       projection)
            state = _zeros_state(q, v, f, _state_dtype(q.dtype))
        arrays += [_to_device_array(f"initial_state's {part}", t, device)
                   for part, t in zip("Sz", state)]
        results = (_torch.empty(q.shape[:3] + v.shape[3:], dtype=q.dtype,
                                device=device),
                   _torch.empty_like(state[0]), _torch.empty_like(state[1]))
        with _torch.cuda.device(device):
            _attention.recurrent_device(
                *arrays, *(_to_device_array(n, t, device) for n, t in
                           zip(("out", "S", "z"), results)),
                stream=_torch.cuda.current_stream(device).cuda_stream,
                feature_map=options["feature_map"],
                normalize=options["normalize"], eps=options["eps"],
                projection=None if projection is None else
                _to_device_array("projection", projection, device),
                backend=backend or "cuda",
                compile_options=options["compile_options"])
        return results
    p = None if projection is None else _to_numpy("projection", projection)
    o, (s1, z1) = _attention.linear_attention(
        _to_numpy("q", q), _to_numpy("k", k), _to_numpy("v", v),
        projection=p, backend=backend or "cpu",
        initial_state=None if state is None else
        tuple(_to_numpy(n, t) for n, t in zip(("initial_state's S",
                                               "initial_state's z"), state)),
        output_final_state=True, **options)
    return tuple(_torch.from_numpy(x) for x in (o, s1, z1))


class _StatefulAttentionFunction(_torch.autograd.Function):
    """The causal scan from a state, returning O and the final state (S, z):
    the backward pass takes the gradients of all three and returns those of
    q, k, v and the initial state."""

    @staticmethod
    def forward(ctx: Any, q: "_torch.Tensor", k: "_torch.Tensor",
                v: "_torch.Tensor", s0: Optional["_torch.Tensor"],
                z0: Optional["_torch.Tensor"], backend: Optional[str],
                projection: Optional["_torch.Tensor"],
                options: Dict[str, Any]) -> Tuple["_torch.Tensor", ...]:
        state = None if s0 is None else (s0, z0)
        ctx.save_for_backward(q, k, v, *(state or ()))
        ctx.backend, ctx.projection, ctx.options = backend, projection, options
        ctx.set_materialize_grads(False)
        return _stateful_forward(q, k, v, state, backend, projection, options)

    @staticmethod
    @_torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad_out: Optional["_torch.Tensor"],
                 grad_s: Optional["_torch.Tensor"],
                 grad_z: Optional["_torch.Tensor"]) -> Tuple[Any, ...]:
        q, k, v, *state = (t.detach() for t in ctx.saved_tensors)
        if grad_out is None:
            grad_out = _torch.zeros(q.shape[:3] + v.shape[3:], dtype=q.dtype,
                                    device=q.device)
        final_grad = None
        if grad_s is not None or grad_z is not None:
            f = _attention.feature_dim(ctx.options["feature_map"],
                                       q.shape[-1], ctx.projection)
            zeros = _zeros_state(q, v, f, _state_dtype(q.dtype))
            final_grad = (zeros[0] if grad_s is None else grad_s,
                          zeros[1] if grad_z is None else grad_z)
        grads = _linear_attention_grad(q, k, v, grad_out, ctx.backend,
                                       ctx.projection, ctx.options,
                                       tuple(state) or None, final_grad)
        wanted = ctx.needs_input_grad
        return tuple(g if w else None for g, w in
                     zip(grads + (None, None), wanted[:5])) + (None,) * 3


class _LinearAttentionFunction(_torch.autograd.Function):
    """linear_attention with linattn's backward pass: the inputs are saved,
    the gradients recomputed from them and the output's gradient."""

    @staticmethod
    def forward(ctx: Any, q: "_torch.Tensor", k: "_torch.Tensor",
                v: "_torch.Tensor", backend: Optional[str],
                projection: Optional["_torch.Tensor"],
                options: Dict[str, Any]) -> "_torch.Tensor":
        ctx.save_for_backward(q, k, v)
        ctx.backend, ctx.projection, ctx.options = backend, projection, options
        return _linear_attention(q, k, v, backend, projection, options)

    @staticmethod
    @_torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad_out: "_torch.Tensor") -> Tuple[Any, ...]:
        q, k, v = ctx.saved_tensors
        dq, dk, dv = _linear_attention_grad(q, k, v, grad_out, ctx.backend,
                                            ctx.projection, ctx.options)
        wanted = ctx.needs_input_grad
        return (dq if wanted[0] else None, dk if wanted[1] else None,
                dv if wanted[2] else None, None, None, None)


def linear_attention(q: "_torch.Tensor", k: "_torch.Tensor",
                     v: "_torch.Tensor", *, feature_map: str = "elu",
                     causal: bool = True, normalize: bool = True,
                     eps: float = 1e-6,
                     projection: Optional["_torch.Tensor"] = None,
                     backend: Optional[str] = None,
                     compile_options: Optional[Dict[str, Any]] = None,
                     initial_state: Optional[Tuple["_torch.Tensor",
                                                   "_torch.Tensor"]] = None,
                     output_final_state: bool = False) -> Any:
    """`linattn.linear_attention` on tensors; returns a tensor on their
    device. CPU tensors run on `backend` (default ``"cpu"``); CUDA tensors
    run on the GPU (``"cuda"``; every feature map, favor's `projection` a
    CUDA tensor too) on torch's current stream, without copies.
    `compile_options` as for `linattn.linear_attention` (e.g.
    ``{"tf32": True}`` for float32 CUDA tensors on tensor cores,
    ``{"tf32x3": True}`` the same at about float32's accuracy).

    Differentiable with respect to q, k and v (the module's docstring):
    when one of them requires grad, the result does, and its backward pass
    is linattn's, with the same options.

    Causal only, `initial_state` (S₀ [B, H, F, Dv], z₀ [B, H, F], tensors on
    q's device, float32 for 16-bit data, else q's dtype) is the scan's state
    before the first token, and `output_final_state` returns
    ``(O, (S, z))``, the state after the last token, as
    `flash-linear-attention`'s chunk functions do. Both are differentiable:
    the initial state receives gradients when it requires grad, and the
    final state passes its gradients back into q, k, v and the initial
    state."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        _check_tensor(name, t, differentiable=True)
    if projection is not None:
        _check_tensor("projection", projection)
    options = dict(feature_map=feature_map, causal=causal,
                   normalize=normalize, eps=eps,
                   compile_options=compile_options)
    if initial_state is not None or output_final_state:
        return _stateful_linear_attention(q, k, v, backend, projection,
                                          options, initial_state,
                                          output_final_state)
    if _torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)):
        return _LinearAttentionFunction.apply(q, k, v, backend, projection,
                                              options)
    return _linear_attention(q, k, v, backend, projection, options)


def _stateful_linear_attention(q: "_torch.Tensor", k: "_torch.Tensor",
                               v: "_torch.Tensor", backend: Optional[str],
                               projection: Optional["_torch.Tensor"],
                               options: Dict[str, Any],
                               initial_state: Any,
                               output_final_state: bool) -> Any:
    """`linear_attention` with `initial_state` or `output_final_state`."""
    if not options["causal"]:
        raise ValueError("initial_state and output_final_state are the "
                         "states of the causal scan: they need causal=True")
    state = None
    if initial_state is not None:
        if (not isinstance(initial_state, (tuple, list))
                or len(initial_state) != 2):
            raise TypeError("initial_state must be a pair (S, z) of tensors, "
                            f"got {type(initial_state).__name__}")
        for part, t in zip("Sz", initial_state):
            _check_tensor(f"initial_state's {part}", t, differentiable=True)
        state = tuple(initial_state)
    inputs = (q, k, v) + (state or ())
    if _torch.is_grad_enabled() and any(t.requires_grad for t in inputs):
        o, s, z = _StatefulAttentionFunction.apply(
            q, k, v, *(state or (None, None)), backend, projection, options)
    else:
        o, s, z = _stateful_forward(q, k, v, state, backend, projection,
                                    options)
    return (o, (s, z)) if output_final_state else o


class RecurrentState(_attention.RecurrentState):
    """`linattn.RecurrentState` taking and returning tensors.

    With ``device="cpu"`` (the default) it takes CPU tensors and keeps the
    state in numpy arrays shared with `S` and `z`. With ``device="cuda"``
    the state lives on the GPU: `S` in one buffer that `step` and `update`
    update in place, `z` in two that they alternate between (read one,
    write the other: every block of a head reads it). q, k, v are CUDA
    tensors of `dtype` (float16, bfloat16, float32 or float64; the state is
    float32 for the 16-bit types), the kernels run on torch's current stream
    without copies, and once a shape is compiled a call only launches
    kernels, so calls can be captured in a CUDA graph (capture two steps to
    come back to the same `z` buffer). Every feature map runs on the GPU
    (favor's `projection` a CUDA tensor).
    """

    def __init__(self, batch: int, heads: int, head_dim: int,
                 value_dim: Optional[int] = None, *,
                 dtype: Any = _torch.float32,
                 projection: Optional["_torch.Tensor"] = None,
                 device: Any = "cpu", **options: Any) -> None:
        self.device = _torch.device(device)
        if self.device.type == "cuda":
            self._init_cuda(batch, heads, head_dim, value_dim, dtype,
                            projection, **options)
            return
        if self.device.type != "cpu":
            raise ValueError(f"device must be cpu or cuda, got {self.device}")
        np_dtype = _NUMPY_DTYPES.get(dtype, dtype)
        p = None if projection is None else _to_numpy("projection", projection)
        super().__init__(batch, heads, head_dim, value_dim, dtype=np_dtype,
                         projection=p, **options)

    def _init_cuda(self, batch: int, heads: int, head_dim: int,
                   value_dim: Optional[int], dtype: Any,
                   projection: Optional["_torch.Tensor"], *,
                   feature_map: str = "elu", normalize: bool = True,
                   eps: float = 1e-6, backend: str = "cuda",
                   compile_options: Optional[Dict[str, Any]] = None) -> None:
        self.device = _cuda_device(self.device)
        if dtype not in _DEVICE_ELEMENTS:
            raise TypeError(f"dtype must be float16, bfloat16, float32 or "
                            f"float64 on the GPU, got {dtype}")
        _attention._check_options(feature_map, normalize, eps, backend)
        self.compile_options = _attention._compile_options(compile_options)
        value_dim = head_dim if value_dim is None else value_dim
        for name, size in (("batch", batch), ("heads", heads),
                           ("head_dim", head_dim), ("value_dim", value_dim)):
            if not isinstance(size, int) or size < 1:
                raise ValueError(f"{name} must be a positive integer, got "
                                 f"{size!r}")
        self.dtype = dtype
        self.state_dtype = _state_dtype(dtype)
        self.batch, self.heads = batch, heads
        self.head_dim, self.value_dim = head_dim, value_dim
        # favor's projection stays a CUDA tensor; recurrent_device checks it.
        if projection is not None:
            _to_device_array("projection", projection, self.device)
        self.projection = projection
        self.feature_dim = _attention.feature_dim(feature_map, head_dim,
                                                  projection)
        self.feature_map, self.normalize, self.eps = (feature_map,
                                                      bool(normalize),
                                                      float(eps))
        self.backend = backend
        self.reset()

    @property
    def _cuda(self) -> bool:
        return self.device.type == "cuda"

    def reset(self) -> None:
        """Back to the empty prefix. On the GPU the state's buffers are
        zeroed in place (on the current stream), so a CUDA graph captured
        on this state stays valid."""
        if not self._cuda:
            return super().reset()
        if not hasattr(self, "_s"):
            b, h, f, dv = (self.batch, self.heads, self.feature_dim,
                           self.value_dim)
            options = dict(dtype=self.state_dtype, device=self.device)
            self._s = _torch.empty((b, h, f, dv), **options)
            self._z = [_torch.empty((b, h, f), **options) for _ in range(2)]
        self._current = 0
        self._s.zero_()
        self._z[0].zero_()
        self.position = 0

    def copy(self) -> "RecurrentState":
        if not self._cuda:
            return super().copy()
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._s = self._s.clone()
        other._z = [z.clone() for z in self._z]
        return other

    @property
    def S(self) -> "_torch.Tensor":  # type: ignore[override]
        """The key-value state, [B, H, F, Dv] (shares memory)."""
        if self._cuda:
            return self._s
        return _torch.from_numpy(self._hand_out()[0])

    @property
    def z(self) -> "_torch.Tensor":  # type: ignore[override]
        """The normalizer state, [B, H, F] (shares memory; on the GPU the
        buffer alternates between calls)."""
        if self._cuda:
            return self._z[self._current]
        return _torch.from_numpy(self._hand_out()[1])

    def _run_cuda(self, q: Any, k: Any, v: Any, tokens: bool
                  ) -> "_torch.Tensor":
        dq, dk, dv = (_to_device_array(n, t, self.device)
                      for n, t in (("q", q), ("k", k), ("v", v)))
        if any(x.element != _DEVICE_ELEMENTS[self.dtype]
               for x in (dq, dk, dv)):
            raise TypeError(f"q, k and v must have the state's dtype "
                            f"{self.dtype}, got {q.dtype}, {k.dtype}, "
                            f"{v.dtype}")
        if len(dq.shape) != (4 if tokens else 3):
            raise ValueError(f"q must have rank {4 if tokens else 3}, got "
                             f"shape {dq.shape}")
        out = _torch.empty(dq.shape[:-1] + dv.shape[-1:], dtype=self.dtype,
                           device=self.device)
        # S in place; z read from the current buffer, written to the other.
        s = _to_device_array("S", self._s, self.device)
        z0, z1 = (_to_device_array("z", self._z[i], self.device)
                  for i in (self._current, 1 - self._current))
        with _torch.cuda.device(self.device):  # its context current
            _attention.recurrent_device(
                dq, dk, dv, s, z0, _to_device_array("out", out, self.device),
                s, z1,
                stream=_torch.cuda.current_stream(self.device).cuda_stream,
                feature_map=self.feature_map, normalize=self.normalize,
                eps=self.eps,
                projection=None if self.projection is None else
                _to_device_array("projection", self.projection, self.device),
                backend=self.backend,
                compile_options=dict(option.split("=", 1)
                                     for option in self.compile_options))
        self._current = 1 - self._current
        self.position += dq.shape[2] if tokens else 1
        return out

    def step(self, q: Any, k: Any, v: Any) -> "_torch.Tensor":
        if self._cuda:
            return self._run_cuda(q, k, v, tokens=False)
        return _torch.from_numpy(super().step(
            _to_numpy("q", q), _to_numpy("k", k), _to_numpy("v", v)))

    def update(self, q: Any, k: Any, v: Any) -> "_torch.Tensor":
        if self._cuda:
            return self._run_cuda(q, k, v, tokens=True)
        return _torch.from_numpy(super().update(
            _to_numpy("q", q), _to_numpy("k", k), _to_numpy("v", v)))

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", device={self.device})"
