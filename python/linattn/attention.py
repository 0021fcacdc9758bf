"""Linear attention on numpy arrays: `linear_attention`, its gradients
(`linear_attention_grad`) and `RecurrentState`.

Each call builds a small MLIR module for the shapes, dtype and options at
hand -- a destination-passing function whose inputs and outputs are memrefs
over the caller's numpy buffers -- compiles it once through the backend
(``linattn-lower-to-cpu`` on the CPU, ``linattn-lower-to-nvvm`` for the GPU)
and keeps it in a compile cache keyed by shapes, dtype, options and (on a
GPU) the device's chip and SM count. Later calls with the same key reuse the
compiled code; `cache_info` and `clear_cache` inspect and empty the cache.

The generated function for `linear_attention` (elu, causal, normalized)::

    func.func @linattn(%q: memref<BxHxNxDxf32>, %k: memref<BxHxNxDxf32>,
                       %v: memref<BxHxNxDvxf32>, %o: memref<BxHxNxDvxf32>) {
      %tq = bufferization.to_tensor %q restrict : ... to tensor<...>
      ...
      %r = linattn.attention elu %tq, %tk, %tv causal normalize(eps = ...)
      bufferization.materialize_in_destination %r in restrict writable %o
      return
    }
"""

from __future__ import annotations

import collections
import math
import re
import threading
from typing import (Any, Callable, Dict, Hashable, List, Mapping, NamedTuple,
                    Optional, Sequence, Tuple)

import numpy as np

from .backends import get_backend
from .ir import MLIRError
from .jit import DeviceArray, host_empty
from .reference import FEATURE_MAPS, feature_dim

__all__ = [
    "CacheInfo",
    "DEVICE_ELEMENTS",
    "DEVICE_FEATURE_MAPS",
    "RecurrentState",
    "cache_info",
    "clear_cache",
    "linear_attention",
    "linear_attention_grad",
    "linear_attention_grad_device",
    "device_state_element",
    "linear_attention_device",
    "recurrent_device",
]

SUPPORTED_DTYPES = (np.dtype(np.float16), np.dtype(np.float32),
                    np.dtype(np.float64))
_MLIR_ELEMENT = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
                 np.dtype(np.float64): "f64"}


def state_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype sums over tokens accumulate in: float32 for float16 data
    (a float16 sum over a few thousand tokens keeps only its top bits), the
    data's own otherwise."""
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)

#===------------------------------------------------------------------------===#
# Compile cache
#===------------------------------------------------------------------------===#


class CacheInfo(NamedTuple):
    """Compile cache statistics (like `functools.lru_cache`'s)."""

    hits: int
    misses: int
    maxsize: int
    currsize: int


class _KernelCache:
    def __init__(self, maxsize: int = 128) -> None:
        self.maxsize = maxsize
        self.entries: "collections.OrderedDict[Hashable, Any]" = (
            collections.OrderedDict())
        self.hits = 0
        self.misses = 0
        self.lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        with self.lock:
            if key in self.entries:
                self.hits += 1
                self.entries.move_to_end(key)
                return self.entries[key]
            self.misses += 1
            # Compile under the lock: concurrent callers of one key compile it
            # once, and MLIR compilation runs one at a time anyway.
            value = build()
            self.entries[key] = value
            while len(self.entries) > self.maxsize:
                self.entries.popitem(last=False)
            return value


_cache = _KernelCache()


def cache_info() -> CacheInfo:
    """Hits, misses, maximum and current size of the compile cache."""
    with _cache.lock:
        return CacheInfo(_cache.hits, _cache.misses, _cache.maxsize,
                         len(_cache.entries))


def clear_cache() -> None:
    """Drops every compiled kernel and resets the statistics."""
    with _cache.lock:
        _cache.entries.clear()
        _cache.hits = 0
        _cache.misses = 0


def _compile(backend: str, text: str, options: Tuple[str, ...],
             device_buffers: bool = False) -> Any:
    """`text` compiled by `backend` with `options` (`_compile_options`); a
    pipeline that does not take them is the caller's error."""
    kwargs: Dict[str, Any] = {"device_buffers": True} if device_buffers else {}
    if options:
        kwargs["options"] = options
    try:
        return get_backend(backend).compile(text, **kwargs)
    except MLIRError as e:
        if options and "cannot parse the pass pipeline" in str(e):
            raise ValueError(f"compile_options {', '.join(options)} are not "
                             f"options of backend={backend!r}'s pipeline: "
                             f"{e}") from None
        raise


def _attention_key(kind: str, backend: str, element: str, d: int, dv: int,
                   p_shape: Optional[Tuple[int, ...]], feature_map: str,
                   causal: bool, normalize: bool, eps: float) -> Tuple:
    """The compile cache key of an attention function: what its text and
    code depend on (eps only when normalized)."""
    return (kind, backend, element, d, dv, p_shape, feature_map, bool(causal),
            bool(normalize), float(eps) if normalize else None)


def _compiled(key: Hashable, backend: str, text: Callable[[], str],
              num_inputs: int, options: Tuple[str, ...] = ()
              ) -> Callable[..., Any]:
    """The function @linattn of the module `text()` builds, compiled by
    `backend` with `options`, from the cache when `key` is there. Its first
    `num_inputs` arguments are only read (bufferization.to_tensor)."""
    def build() -> Callable[..., Any]:
        return _compile(backend, text(), options).function(
            "linattn", read_only=range(num_inputs))
    return _cache.get(key + options + get_backend(backend).cache_key(), build)


def _compiled_device(key: Hashable, backend: str, text: Callable[[], str],
                     options: Tuple[str, ...] = ()) -> Callable[..., Any]:
    """The function @linattn of the module `text()` builds, compiled by the
    GPU backend `backend` for device buffers with `options`, from the cache
    when `key` is there."""
    def build() -> Callable[..., Any]:
        return _compile(backend, text(), options,
                        device_buffers=True).device_function("linattn")
    return _cache.get(key + options + get_backend(backend).cache_key(), build)


#===------------------------------------------------------------------------===#
# MLIR text
#===------------------------------------------------------------------------===#


def _shape_str(shape: Sequence[Optional[int]], elt: str) -> str:
    return "x".join(["?" if d is None else str(d) for d in shape] + [elt])


def _open(shape: Sequence[int]) -> Tuple[Optional[int], ...]:
    """`shape` with every size but the last open (``?`` in the MLIR text):
    batch, heads and the sequence length. One compiled function serves them
    all; the kernels read those sizes at run time, and measured as fast as
    with them fixed, so only the head sizes and the options key the
    cache."""
    return (None,) * (len(shape) - 1) + (shape[-1],)


def _float_literal(x: float) -> str:
    # 17 significant digits round-trip a double; MLIR needs the decimal point.
    return f"{x:.16e}"


class _Builder:
    """Accumulates the body of one function: destination-passing on memrefs
    over the caller's arrays, or, with `tensors`, on tensors in and out (the
    device-buffer convention, where results are the caller's out-params)."""

    def __init__(self, elt: str, tensors: bool = False) -> None:
        self.elt = elt
        self.tensors = tensors
        self.args: List[str] = []
        self.body: List[str] = []
        self.results: List[Tuple[str, str]] = []

    def input(self, name: str, shape: Sequence[int],
              elt: Optional[str] = None) -> Tuple[str, str]:
        t = _shape_str(shape, elt or self.elt)
        if self.tensors:
            self.args.append(f"%{name}: tensor<{t}>")
            return f"%{name}", f"tensor<{t}>"
        self.args.append(f"%{name}: memref<{t}>")
        self.body.append(f"%t{name} = bufferization.to_tensor %{name} restrict "
                         f": memref<{t}> to tensor<{t}>")
        return f"%t{name}", f"tensor<{t}>"

    def output(self, name: str, value: str, shape: Sequence[int],
               elt: Optional[str] = None) -> None:
        t = _shape_str(shape, elt or self.elt)
        if self.tensors:
            self.results.append((value, f"tensor<{t}>"))
            return
        self.args.append(f"%{name}: memref<{t}>")
        self.body.append(f"bufferization.materialize_in_destination {value} in "
                         f"restrict writable %{name} : (tensor<{t}>, "
                         f"memref<{t}>) -> ()")

    def swap_heads(self, x: str, x_type: str, shape: Sequence[Optional[int]],
                   name: str) -> Tuple[str, str]:
        """`x` [B, N, H, X] (of `shape`, None where open) transposed into
        [B, H, N, X]; the same swaps back."""
        swapped = _swap_heads(shape)
        t = f"tensor<{_shape_str(swapped, self.elt)}>"
        sizes = []
        for d, size in enumerate(swapped):
            if size is None:
                source = (0, 2, 1, 3)[d]
                self.body.append(f"%{name}_c{d} = arith.constant {source} : "
                                 "index")
                self.body.append(f"%{name}_d{d} = tensor.dim {x}, "
                                 f"%{name}_c{d} : {x_type}")
                sizes.append(f"%{name}_d{d}")
        self.body.append(f"%{name}_e = tensor.empty({', '.join(sizes)}) : {t}")
        self.body.append(f"%{name}_h = linalg.transpose ins({x} : {x_type}) "
                         f"outs(%{name}_e : {t}) permutation = [0, 2, 1, 3]")
        return f"%{name}_h", t

    def feature_map(self, kind: str, x: str, x_type: str, out_shape:
                    Sequence[int], projection: Optional[Tuple[str, str]],
                    name: str) -> str:
        out_type = f"tensor<{_shape_str(out_shape, self.elt)}>"
        if kind == "favor":
            assert projection is not None
            p, p_type = projection
            self.body.append(f"%{name} = linattn.feature_map favor {x} "
                             f"projection({p}) : {x_type}, {p_type} -> "
                             f"{out_type}")
        else:
            self.body.append(f"%{name} = linattn.feature_map {kind} {x} : "
                             f"{x_type} -> {out_type}")
        return f"%{name}"

    def text(self) -> str:
        body = "\n".join("  " + line for line in self.body)
        values = ", ".join(v for v, _ in self.results)
        types = ", ".join(t for _, t in self.results)
        signature = f" -> ({types})" if self.results else ""
        ret = f"return {values} : {types}" if self.results else "return"
        return (f"func.func @linattn({', '.join(self.args)}){signature} {{\n"
                f"{body}\n  {ret}\n}}\n")


def _normalize_clause(normalize: bool, eps: float) -> str:
    return f" normalize(eps = {_float_literal(eps)})" if normalize else ""


#===------------------------------------------------------------------------===#
# Argument checks
#===------------------------------------------------------------------------===#


def _check_options(feature_map: str, normalize: bool, eps: float,
                   backend: str) -> None:
    if feature_map not in FEATURE_MAPS:
        raise ValueError(f"unknown feature_map {feature_map!r}; expected one "
                         "of " + ", ".join(repr(f) for f in FEATURE_MAPS))
    if normalize and not (isinstance(eps, (int, float, np.floating))
                          and math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps!r}")
    get_backend(backend).check_available()


# Options the backends set themselves.
_BACKEND_OPTIONS = ("c-interface", "chip", "device-buffers", "emulate")


def _compile_options(options: Optional[Mapping[str, Any]]
                     ) -> Tuple[str, ...]:
    """`compile_options` as ``name=value`` options of the backend's pipeline,
    sorted (they are part of the cache key)."""
    if options is None:
        return ()
    if not isinstance(options, Mapping):
        raise TypeError("compile_options must be a mapping of option names "
                        f"to values, got {type(options).__name__}")
    texts = []
    for name, value in options.items():
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9-]*",
                                                         name):
            raise ValueError(f"compile_options: {name!r} is not an option "
                             "name (lower-case words joined by '-', as in "
                             "'chunk-size')")
        if name in _BACKEND_OPTIONS:
            raise ValueError(f"compile_options: {name!r} is set by the "
                             "backend")
        if isinstance(value, (bool, np.bool_)):
            text = "true" if value else "false"
        elif isinstance(value, (int, np.integer)):
            text = str(int(value))
        elif isinstance(value, str) and re.fullmatch(r"[\w.,+-]+", value):
            text = value
        else:
            raise ValueError(f"compile_options: the value of {name!r} must "
                             f"be a bool, an integer or a word, got {value!r}")
        texts.append(f"{name}={text}")
    return tuple(sorted(texts))


def _check_array(name: str, x: Any, rank: int, layout: str) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got "
                        f"{type(x).__name__}")
    if x.dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{name} has dtype {x.dtype}; linattn computes in "
                        "float16, float32 or float64 (convert with "
                        "x.astype(np.float32))")
    if x.ndim != rank:
        raise ValueError(f"{name} must have rank {rank} ({layout}), got shape "
                         f"{x.shape}")
    if not x.flags.c_contiguous:
        raise ValueError(f"{name} is not C-contiguous (strides {x.strides}); "
                         "pass np.ascontiguousarray(" + name + ")")
    if not x.flags.aligned:
        raise ValueError(f"{name} is not aligned to its element size")
    for d, size in enumerate(x.shape):
        if size == 0:
            raise ValueError(f"{name} has an empty dimension {d} (shape "
                             f"{x.shape}); every size must be at least 1")
    return x


def _check_same_dtype(**arrays: Optional[np.ndarray]) -> np.dtype:
    present = {k: a for k, a in arrays.items() if a is not None}
    dtypes = {a.dtype for a in present.values()}
    if len(dtypes) > 1:
        listing = ", ".join(f"{k}: {a.dtype}" for k, a in present.items())
        raise TypeError(f"all arrays must have the same dtype, got {listing}")
    return next(iter(dtypes))


def _check_projection(feature_map: str, projection: Any, head_dim: int,
                      check: Callable[..., Any] = _check_array,
                      what: str = "array") -> Any:
    """favor's [D, m] projection checked by `check` (`_check_array`, or
    `_check_device_array` for a DeviceArray, `what`); None for the other
    maps, which take none."""
    if feature_map != "favor":
        if projection is not None:
            raise ValueError("projection is only used by feature_map='favor'")
        return None
    if projection is None:
        raise ValueError("feature_map='favor' needs a projection: a "
                         f"[head_dim, num_features] {what} of random "
                         "features")
    p = check("projection", projection, 2, "[D, num_features]")
    if p.shape[0] != head_dim:
        raise ValueError(f"projection has {p.shape[0]} rows, the head "
                         f"dimension is {head_dim}")
    return p


def _check_output(out: Any, shape: Tuple[int, ...], dtype: np.dtype
                  ) -> np.ndarray:
    if out is None:
        return host_empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
    if out.shape != shape or out.dtype != dtype:
        raise ValueError(f"out must have shape {shape} and dtype {dtype}, got "
                         f"{out.shape} {out.dtype}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be C-contiguous and writeable")
    return out


#===------------------------------------------------------------------------===#
# linear_attention
#===------------------------------------------------------------------------===#


def linear_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, *,
                     feature_map: str = "elu", causal: bool = True,
                     normalize: bool = True, eps: float = 1e-6,
                     projection: Optional[np.ndarray] = None,
                     backend: str = "cpu",
                     out: Optional[np.ndarray] = None,
                     compile_options: Optional[Mapping[str, Any]] = None,
                     initial_state: Optional[Tuple[np.ndarray,
                                                   np.ndarray]] = None,
                     output_final_state: bool = False,
                     layout: str = "bhnd") -> Any:
    """Linear attention (Katharopoulos et al. 2020) on [B, H, N, D] arrays.

    Computes, per batch and head, with φ the feature map,

        O_i = Σ_j φ(q_i)·φ(k_j) v_j / (Σ_j φ(q_i)·φ(k_j) + eps)

    over j ≤ i when `causal` (as a linear-time scan), over all j otherwise
    (as φ(Q)(φ(K)ᵀV), linear in N + M), without the denominator when
    `normalize` is false.

    Args:
      q: queries, [B, H, N, D].
      k: keys, [B, H, M, D] (M = N when causal).
      v: values, [B, H, M, Dv]; Dv may differ from D.
      feature_map: ``"elu"`` (elu+1, the paper's), ``"relu"``,
        ``"identity"``, ``"poly2"`` (F = 1 + D + D²) or ``"favor"`` (random
        features; needs `projection`).
      causal: mask j > i (decoder self-attention). Needs N = M.
      normalize: divide by φ(q_i)·Σφ(k_j) + eps.
      eps: the denominator's stabilizer, > 0.
      projection: for ``"favor"``, the [D, F] random projection.
      backend: ``"cpu"``, ``"cuda"`` (the first NVIDIA GPU) or
        ``"gpu-emulator"`` (the GPU kernels interpreted on the CPU).
      out: optional C-contiguous [B, H, N, Dv] array to write the result to
        (in place; through a temporary when it overlaps an input).
      compile_options: options of the backend's lowering pipeline
        (``linattn-lower-to-cpu`` on the CPU, ``linattn-lower-to-nvvm`` on
        the GPU; README), name to value: e.g. ``{"tf32": True}`` puts the
        causal scans of float32 data on tf32 tensor cores (``{"tf32x3":
        True}``: three tf32 products each, about float32's accuracy;
        ``{"simt-chunks": True}`` keeps them strict float32, chunk by chunk
        on CUDA cores),
        ``{"chunk-size":
        32, "value-tile": 32}`` shapes the chunked scan, ``{"num-threads":
        4}`` limits the CPU's threads. Each distinct set is compiled once.
      initial_state: (S₀ [B, H, F, Dv], z₀ [B, H, F]), the causal scan's
        state before the first token (the state a previous segment ended
        with), in `state_dtype(q.dtype)`; F is the feature map's size
        (`feature_dim`). Default zeros: the sequence starts here.
      output_final_state: also return the state after the last token, for
        the next segment or for decoding on (`RecurrentState`).
      layout: ``"bhnd"`` (the default: q [B, H, N, D], k [B, H, M, D],
        v [B, H, M, Dv], O [B, H, N, Dv]) or ``"bnhd"``, tokens before
        heads (q [B, N, H, D], k [B, M, H, D], v [B, M, H, Dv], O
        [B, N, H, Dv]), as JAX, Flax and fast-transformers keep them; the
        kernels read and write that layout in place. Not with
        `initial_state` or `output_final_state`.

    All arrays must be C-contiguous numpy arrays of one dtype, float16,
    float32 or float64; nothing is copied on the way in or out. float16 data
    is summed over tokens in float32 (the scan's state, the non-causal
    summary) and products accumulate in float32; on a GPU its causal scans
    take the tensor-core kernels.

    Returns:
      O, [B, H, N, Dv], same dtype as the inputs; with `output_final_state`,
      (O, (S, z)), the final state in `state_dtype(q.dtype)`.

    Raises:
      TypeError: a non-array argument, an unsupported or mixed dtype (a
        state not of `state_dtype(q.dtype)`).
      ValueError: wrong rank, mismatched or empty dimensions, a
        non-contiguous array, causal with N != M, a state with
        causal=False or of the wrong shape, bad options (also
        compile_options the pipeline does not take).
      NotImplementedError: an unavailable backend.
      linattn.backends.GPURuntimeError: the GPU runtime failed.
      linattn.MLIRError: compilation failed: a pass rejected a
        compile_options value (its message says which), else a bug (please
        report it).
    """
    _check_options(feature_map, normalize, eps, backend)
    options = _compile_options(compile_options)
    if layout not in _LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(map(repr, _LAYOUTS))}"
                         f", got {layout!r}")
    token_major = layout == "bnhd"
    if token_major and (initial_state is not None or output_final_state):
        raise ValueError("layout='bnhd' takes no initial_state or "
                         "output_final_state; use [B, H, N, D] arrays")
    tokens = "N, H" if token_major else "H, N"
    keys = "M, H" if token_major else "H, M"
    q = _check_array("q", q, 4, f"[B, {tokens}, D]")
    k = _check_array("k", k, 4, f"[B, {keys}, D]")
    v = _check_array("v", v, 4, f"[B, {keys}, Dv]")
    dtype = _check_same_dtype(q=q, k=k, v=v, projection=projection
                              if isinstance(projection, np.ndarray) else None)
    swap = _swap_heads if token_major else tuple
    o_shape = swap(_attention_output_shape(swap(q.shape), swap(k.shape),
                                           swap(v.shape), causal))
    p = _check_projection(feature_map, projection, q.shape[3])
    o = _check_output(out, o_shape, dtype)
    if initial_state is not None or output_final_state:
        return _linear_attention_from_state(
            q, k, v, o, p, feature_map=feature_map, causal=causal,
            normalize=normalize, eps=eps, backend=backend, options=options,
            initial_state=initial_state,
            output_final_state=output_final_state)

    key = _attention_key("attention", backend, dtype.str, q.shape[3],
                         v.shape[3], None if p is None else p.shape,
                         feature_map, causal, normalize, eps) + (layout,)

    def text() -> str:
        return _attention_text(_MLIR_ELEMENT[dtype], _open(q.shape),
                               _open(k.shape), _open(v.shape),
                               None if p is None else p.shape,
                               feature_map, causal, normalize, eps,
                               token_major=token_major)

    fn = _compiled(key, backend, text, 3 if p is None else 4, options)
    return _call_into(fn, [q, k, v] if p is None else [q, k, v, p], o)


_LAYOUTS = ("bhnd", "bnhd")


def _swap_heads(shape: Sequence[Any]) -> Tuple[Any, ...]:
    """[B, N, H, X] <-> [B, H, N, X]."""
    return (shape[0], shape[2], shape[1], shape[3])


def _call_into(fn: Callable[..., Any], inputs: Sequence[np.ndarray],
               out: np.ndarray, *results: np.ndarray) -> np.ndarray:
    """fn(*inputs, out, *results), returning `out`. The kernels write `out`
    in place while they read the inputs, so an `out` that overlaps one of
    them gets the result through a temporary."""
    o = out
    if any(np.may_share_memory(out, x) for x in inputs):
        o = np.empty(out.shape, out.dtype)
    fn(*inputs, o, *results)
    if o is not out:
        out[...] = o
    return out


def _linear_attention_from_state(
        q: np.ndarray, k: np.ndarray, v: np.ndarray, out: np.ndarray,
        p: Optional[np.ndarray], *, feature_map: str, causal: bool,
        normalize: bool, eps: float, backend: str, options: Tuple[str, ...],
        initial_state: Optional[Tuple[np.ndarray, np.ndarray]],
        output_final_state: bool) -> Any:
    """`linear_attention` from a state or returning its final state: the
    ``linattn.scan`` from (S₀, z₀) that `RecurrentState.update` runs."""
    if not causal:
        raise ValueError("initial_state and output_final_state are the "
                         "states of the causal scan: they need causal=True")
    b, h, _, d = q.shape
    dv = v.shape[3]
    f = feature_dim(feature_map, d, p)
    sdtype = state_dtype(q.dtype)
    if initial_state is None:
        s0 = np.zeros((b, h, f, dv), sdtype)
        z0 = np.zeros((b, h, f), sdtype)
    else:
        s0, z0 = _check_state("initial_state", initial_state,
                              ((b, h, f, dv), (b, h, f)), sdtype)
    fn = _recurrent_function("scan", backend, q.dtype, d, dv, f, p,
                             feature_map, normalize, eps, options)
    s1, z1 = host_empty(s0.shape, sdtype), host_empty(z0.shape, sdtype)
    o = _call_into(fn, [q, k, v, s0, z0] + ([] if p is None else [p]), out,
                   s1, z1)
    return (o, (s1, z1)) if output_final_state else o


def _recurrent_function(op: str, backend: str, dtype: np.dtype, d: int,
                        dv: int, f: int, p: Optional[np.ndarray],
                        feature_map: str, normalize: bool, eps: float,
                        options: Tuple[str, ...]) -> Callable[..., Any]:
    """The compiled `_recurrent_text` of `op` on the host: arguments q, k,
    v, S₀, z₀ (the projection), then O, S₁, z₁ to write."""
    p_shape = None if p is None else p.shape
    dtype = np.dtype(dtype)
    key = (op, backend, dtype.str, d, dv, p_shape, feature_map,
           bool(normalize), float(eps) if normalize else None)
    lead = (None,) * (3 if op == "scan" else 2)

    def text() -> str:
        return _recurrent_text(op, _MLIR_ELEMENT[dtype],
                               _MLIR_ELEMENT[state_dtype(dtype)], lead + (d,),
                               lead + (dv,), f, p_shape, feature_map,
                               normalize, eps)

    return _compiled(key, backend, text, 5 if p is None else 6, options)


def _attention_output_shape(q: Tuple[int, ...], k: Tuple[int, ...],
                            v: Tuple[int, ...], causal: bool
                            ) -> Tuple[int, int, int, int]:
    """Checks that the shapes of q [B, H, N, D], k [B, H, M, D] and
    v [B, H, M, Dv] fit together; returns O's, [B, H, N, Dv]."""
    b, h, n, d = q
    if k[:2] != (b, h) or v[:2] != (b, h):
        raise ValueError(f"q, k and v must share batch and head dimensions "
                         f"[B, H], got {q}, {k}, {v}")
    if k[3] != d:
        raise ValueError(f"q and k must have the same head dimension D, got "
                         f"{d} and {k[3]}")
    m = k[2]
    if v[2] != m:
        raise ValueError(f"k and v must have the same sequence length M, got "
                         f"{m} and {v[2]}")
    if causal and n != m:
        raise ValueError(f"causal attention needs as many queries as keys, got "
                         f"N = {n} and M = {m}; use causal=False for "
                         "cross-attention")
    return (b, h, n, v[3])


def _attention_text(elt: str, q: Sequence[Optional[int]],
                    k: Sequence[Optional[int]], v: Sequence[Optional[int]],
                    p: Optional[Sequence[int]],
                    feature_map: str, causal: bool, normalize: bool,
                    eps: float, tensors: bool = False,
                    token_major: bool = False) -> str:
    """The function @linattn computing `linear_attention` on these shapes
    (None: a size known at run time): destination-passing on memrefs, or on
    tensors (`tensors`). With `token_major`, the arrays are [B, N, H, X] and
    the shapes given theirs: transposed into [B, H, N, X] for the attention
    and its result back."""
    bld = _Builder(elt, tensors)
    tq, q_type = bld.input("q", q)
    tk, k_type = bld.input("k", k)
    tv, v_type = bld.input("v", v)
    if token_major:
        (tq, q_type), (tk, k_type), (tv, v_type) = (
            bld.swap_heads(x, x_type, shape, name) for x, x_type, shape, name in
            ((tq, q_type, q, "q"), (tk, k_type, k, "k"), (tv, v_type, v, "v")))
        q, k, v = _swap_heads(q), _swap_heads(k), _swap_heads(v)
    operands = f"{tq}, {tk}, {tv}"
    types = f"{q_type}, {k_type}, {v_type}"
    proj = ""
    if p is not None:
        tp, p_type = bld.input("p", p)
        proj = f" projection({tp})"
        types += f", {p_type}"
    o_shape = tuple(q[:3]) + (v[3],)
    o_type = f"tensor<{_shape_str(o_shape, elt)}>"
    bld.body.append(
        f"%r = linattn.attention {feature_map} {operands}{proj}"
        f"{' causal' if causal else ''}"
        f"{_normalize_clause(normalize, eps)} : {types} -> {o_type}")
    if token_major:
        r, _ = bld.swap_heads("%r", o_type, o_shape, "r")
        bld.output("o", r, _swap_heads(o_shape))
    else:
        bld.output("o", "%r", o_shape)
    return bld.text()


#===------------------------------------------------------------------------===#
# linear_attention_grad
#===------------------------------------------------------------------------===#


def linear_attention_grad(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                          grad_out: np.ndarray, *, feature_map: str = "elu",
                          causal: bool = True, normalize: bool = True,
                          eps: float = 1e-6,
                          projection: Optional[np.ndarray] = None,
                          backend: str = "cpu",
                          compile_options: Optional[Mapping[str, Any]] = None,
                          initial_state: Optional[Tuple[np.ndarray,
                                                        np.ndarray]] = None,
                          final_state_grad: Optional[Tuple[np.ndarray,
                                                           np.ndarray]] = None
                          ) -> Tuple[np.ndarray, ...]:
    """The backward pass of `linear_attention`: the gradients of a loss with
    respect to q, k and v, given its gradient `grad_out` with respect to the
    output O = linear_attention(q, k, v, ...) with the same options.

    Nothing of the forward pass is kept or needed: causal gradients are
    three (normalized, four) scans with the roles of the operands exchanged,
    non-causal ones the linear form's summaries and readouts, linear in the
    sequence length either way; then the chain rule through the feature map
    (`linattn.attention_grad`, docs/Dialect.md). No gradient is returned
    for a ``"favor"`` projection (random features are drawn, not learned).

    Training over a long sequence in segments (causal only): the forward
    pass of a segment is `RecurrentState.update` from the state (S₀, z₀)
    the previous segment ended with; its backward pass takes that
    `initial_state` and returns the gradients of S₀ and z₀ too, and
    `final_state_grad` (dS, dz) adds to the loss the gradients of the state
    the segment ends with (the next segment's dS₀, dz₀), so that the
    segments' gradients are those of the whole sequence
    (``linattn.scan_grad`` with ``init`` and ``final_grad``).

    Args:
      q, k, v, feature_map, causal, normalize, eps, projection, backend,
      compile_options: as for `linear_attention`.
      grad_out: dL/dO, [B, H, N, Dv], the dtype of q, k and v.
      initial_state: (S₀ [B, H, F, Dv], z₀ [B, H, F]), the state the
        forward pass started from, in `state_dtype(q.dtype)` (a
        RecurrentState's `S` and `z`; F its `feature_dim`).
      final_state_grad: (dS [B, H, F, Dv], dz [B, H, F]), dL with respect
        to the final state, in the same dtype.

    Returns:
      (dq, dk, dv), the shapes and dtype of q, k and v; with
      `initial_state`, (dq, dk, dv, dS₀, dz₀).

    Raises:
      As `linear_attention`, for `grad_out` too; ValueError for states of
      the wrong shape or with causal=False, TypeError for states of the
      wrong dtype.
    """
    if initial_state is not None or final_state_grad is not None:
        return _linear_attention_segment_grad(
            q, k, v, grad_out, feature_map=feature_map, causal=causal,
            normalize=normalize, eps=eps, projection=projection,
            backend=backend, compile_options=compile_options,
            initial_state=initial_state, final_state_grad=final_state_grad)
    _check_options(feature_map, normalize, eps, backend)
    options = _compile_options(compile_options)
    q, k, v, do, dtype, p = _check_grad_arguments(q, k, v, grad_out,
                                                  feature_map, projection,
                                                  causal)

    key = _attention_key("attention_grad", backend, dtype.str, q.shape[3],
                         v.shape[3], None if p is None else p.shape,
                         feature_map, causal, normalize, eps)

    def text() -> str:
        return _attention_grad_text(_MLIR_ELEMENT[dtype], _open(q.shape),
                                    _open(k.shape), _open(v.shape),
                                    None if p is None else p.shape,
                                    feature_map, causal, normalize, eps)

    inputs = [q, k, v, do] if p is None else [q, k, v, do, p]
    fn = _compiled(key, backend, text, len(inputs), options)
    grads = tuple(host_empty(x.shape, dtype) for x in (q, k, v))
    fn(*inputs, *grads)
    return grads


def _check_grad_arguments(q: Any, k: Any, v: Any, grad_out: Any,
                          feature_map: str, projection: Any, causal: bool
                          ) -> Tuple[np.ndarray, np.ndarray, np.ndarray,
                                     np.ndarray, np.dtype,
                                     Optional[np.ndarray]]:
    """The arrays of `linear_attention_grad` checked: (q, k, v, grad_out,
    their dtype, the projection)."""
    q = _check_array("q", q, 4, "[B, H, N, D]")
    k = _check_array("k", k, 4, "[B, H, M, D]")
    v = _check_array("v", v, 4, "[B, H, M, Dv]")
    do = _check_array("grad_out", grad_out, 4, "[B, H, N, Dv]")
    dtype = _check_same_dtype(q=q, k=k, v=v, grad_out=do,
                              projection=projection if isinstance(
                                  projection, np.ndarray) else None)
    o_shape = _attention_output_shape(q.shape, k.shape, v.shape, causal)
    if do.shape != o_shape:
        raise ValueError(f"grad_out must have the output's shape {o_shape} "
                         f"[B, H, N, Dv], got {do.shape}")
    p = _check_projection(feature_map, projection, q.shape[3])
    return q, k, v, do, dtype, p


def _check_state(name: str, pair: Any, shapes: Tuple[Tuple[int, ...], ...],
                 dtype: np.dtype) -> Tuple[np.ndarray, np.ndarray]:
    """A (S [B, H, F, Dv], z [B, H, F]) pair of arrays of `dtype`."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise TypeError(f"{name} must be a pair (S, z) of arrays, got "
                        f"{type(pair).__name__}")
    arrays = []
    for part, x, shape in zip(("S", "z"), pair, shapes):
        x = _check_array(f"{name}'s {part}", x, len(shape),
                         "[B, H, F, Dv]" if part == "S" else "[B, H, F]")
        if x.shape != shape:
            raise ValueError(f"{name}'s {part} must have shape {shape}, got "
                             f"{x.shape}")
        if x.dtype != dtype:
            raise TypeError(f"{name}'s {part} has dtype {x.dtype}; the state "
                            f"of this data is {np.dtype(dtype)}")
        arrays.append(x)
    return arrays[0], arrays[1]


def _linear_attention_segment_grad(
        q: np.ndarray, k: np.ndarray, v: np.ndarray, grad_out: np.ndarray, *,
        feature_map: str, causal: bool, normalize: bool, eps: float,
        projection: Optional[np.ndarray], backend: str,
        compile_options: Optional[Mapping[str, Any]],
        initial_state: Optional[Tuple[np.ndarray, np.ndarray]],
        final_state_grad: Optional[Tuple[np.ndarray, np.ndarray]]
        ) -> Tuple[np.ndarray, ...]:
    """`linear_attention_grad` with an initial state or the final state's
    gradients: the feature maps, ``linattn.scan_grad`` with ``init`` and
    ``final_grad``, the chain rule."""
    _check_options(feature_map, normalize, eps, backend)
    if not causal:
        raise ValueError("initial_state and final_state_grad are the states "
                         "of the causal scan: they need causal=True")
    options = _compile_options(compile_options)
    q, k, v, do, dtype, p = _check_grad_arguments(q, k, v, grad_out,
                                                  feature_map, projection,
                                                  causal)
    b, h, _, d = q.shape
    f = feature_dim(feature_map, d, p)
    shapes = ((b, h, f, v.shape[3]), (b, h, f))
    sdtype = state_dtype(dtype)
    init = (None if initial_state is None else
            _check_state("initial_state", initial_state, shapes, sdtype))
    final = (None if final_state_grad is None else
             _check_state("final_state_grad", final_state_grad, shapes,
                          sdtype))

    key = _attention_key("attention_grad_segment", backend, dtype.str, d,
                         v.shape[3], None if p is None else p.shape,
                         feature_map, True, normalize, eps) + (
                             init is not None, final is not None)

    def text() -> str:
        return _segment_grad_text(_MLIR_ELEMENT[dtype], _MLIR_ELEMENT[sdtype],
                                  _open(q.shape), _open(v.shape), f,
                                  None if p is None else p.shape, feature_map,
                                  normalize, eps, init is not None,
                                  final is not None)

    inputs = [q, k, v, do] + ([] if p is None else [p]) + \
        ([] if init is None else list(init)) + \
        ([] if final is None else list(final))
    fn = _compiled(key, backend, text, len(inputs), options)
    grads = [host_empty(x.shape, dtype) for x in (q, k, v)]
    if init is not None:
        grads += [host_empty(x.shape, sdtype) for x in init]
    fn(*inputs, *grads)
    return tuple(grads)


def _segment_grad_text(elt: str, state_elt: str, q: Sequence[Optional[int]],
                       v: Sequence[Optional[int]], f: int,
                       p: Optional[Sequence[int]], feature_map: str,
                       normalize: bool, eps: float, init: bool,
                       final: bool, tensors: bool = False) -> str:
    """The function @linattn of `_linear_attention_segment_grad`:
    arguments q, k, v, dO (the projection, S₀, z₀, dS, dz), results dq, dk,
    dv (dS₀, dz₀), destination-passing on memrefs, or on tensors
    (`tensors`)."""
    b, h = q[0], q[1]
    s_shape, z_shape = (b, h, f, v[3]), (b, h, f)
    f_shape = tuple(q[:3]) + (f,)
    bld = _Builder(elt, tensors)
    tq, q_type = bld.input("q", q)
    tk, k_type = bld.input("k", q)
    tv, v_type = bld.input("v", v)
    tdo, do_type = bld.input("do", tuple(q[:3]) + (v[3],))
    proj = bld.input("p", p) if p is not None else None
    fq = bld.feature_map(feature_map, tq, q_type, f_shape, proj, "fq")
    fk = bld.feature_map(feature_map, tk, k_type, f_shape, proj, "fk")
    f_type = f"tensor<{_shape_str(f_shape, elt)}>"
    clauses, state_types = "", []
    for present, clause, names in ((init, "init", ("s0", "z0")),
                                   (final, "final_grad", ("ds", "dz"))):
        if not present:
            continue
        (ts, s_type), (tz, z_type) = (
            bld.input(names[0], s_shape, state_elt),
            bld.input(names[1], z_shape, state_elt))
        clauses += f" {clause}({ts}, {tz} : {s_type}, {z_type})"
        state_types = [s_type, z_type]
    results = "%dfq, %dfk, %gdv" + (", %gds0, %gdz0" if init else "")
    types = [f_type, f_type, v_type] + (state_types if init else [])
    bld.body.append(
        f"{results} = linattn.scan_grad forward {fq}, {fk}, {tv}, {tdo}"
        f"{clauses}{_normalize_clause(normalize, eps)} : {f_type}, {f_type}, "
        f"{v_type}, {do_type} -> {', '.join(types)}")
    projection = f" projection({proj[0]})" if proj else ""
    p_type = f", {proj[1]}" if proj else ""
    for x, x_type, df, name in ((tq, q_type, "%dfq", "gdq"),
                                (tk, k_type, "%dfk", "gdk")):
        bld.body.append(
            f"%{name} = linattn.feature_map_grad {feature_map} {x}, {df}"
            f"{projection} : {x_type}, {f_type}{p_type} -> {x_type}")
    bld.output("dq_out", "%gdq", q)
    bld.output("dk_out", "%gdk", q)
    bld.output("dv_out", "%gdv", v)
    if init:
        bld.output("ds0_out", "%gds0", s_shape, state_elt)
        bld.output("dz0_out", "%gdz0", z_shape, state_elt)
    return bld.text()


def _attention_grad_text(elt: str, q: Sequence[Optional[int]],
                         k: Sequence[Optional[int]], v: Sequence[Optional[int]],
                         p: Optional[Sequence[int]], feature_map: str,
                         causal: bool, normalize: bool, eps: float,
                         tensors: bool = False) -> str:
    """The function @linattn computing `linear_attention_grad` on these
    shapes (None: a size known at run time), destination-passing on
    memrefs, or on tensors (`tensors`)."""
    bld = _Builder(elt, tensors)
    o_shape = tuple(q[:3]) + (v[3],)
    operands, types = [], []
    for name, shape in (("q", q), ("k", k), ("v", v), ("do", o_shape)):
        value, value_type = bld.input(name, shape)
        operands.append(value)
        types.append(value_type)
    proj = ""
    if p is not None:
        tp, p_type = bld.input("p", p)
        proj = f" projection({tp})"
        types.append(p_type)
    results = ", ".join(types[:3])
    bld.body.append(
        f"%dq, %dk, %dv = linattn.attention_grad {feature_map} "
        f"{', '.join(operands)}{proj}{' causal' if causal else ''}"
        f"{_normalize_clause(normalize, eps)} : {', '.join(types)} -> "
        f"{results}")
    for name, shape in (("dq", q), ("dk", k), ("dv", v)):
        bld.output(f"{name}_out", f"%{name}", shape)
    return bld.text()


#===------------------------------------------------------------------------===#
# linear_attention_device
#===------------------------------------------------------------------------===#

_DEVICE_ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}
DEVICE_ELEMENTS = tuple(_DEVICE_ELEMENT_BYTES)
"""The element types `linear_attention_device` takes."""

DEVICE_FEATURE_MAPS = FEATURE_MAPS
"""The feature maps on device memory: all of them (poly2 and favor by
kernels of their own, the others applied as the kernels that read the
features load them)."""


def _check_device_options(feature_map: str, normalize: bool, eps: float,
                          backend: str, stream: Any) -> None:
    _check_options(feature_map, normalize, eps, backend)
    if not isinstance(stream, (int, np.integer)) or isinstance(stream, bool):
        raise TypeError(f"stream must be a CUstream handle (an int), got "
                        f"{type(stream).__name__}")


def device_state_element(element: str) -> str:
    """The element type of the state (S, z) for data of `element`: f32 for
    the 16-bit types, as `state_dtype`, else the data's own."""
    return "f32" if element in ("f16", "bf16") else element


def _check_same_element(**arrays: DeviceArray) -> str:
    elements = {name: a.element for name, a in arrays.items()}
    if len(set(elements.values())) > 1:
        *first, last = elements
        raise TypeError(f"{', '.join(first)} and {last} must have the same "
                        "element type, got " + ", ".join(
                            f"{n}: {e}" for n, e in elements.items()))
    return next(iter(elements.values()))


def _check_device_array(name: str, x: Any, rank: int, layout: str
                        ) -> DeviceArray:
    if not isinstance(x, DeviceArray):
        raise TypeError(f"{name} must be a linattn.DeviceArray, got "
                        f"{type(x).__name__}")
    if x.element not in DEVICE_ELEMENTS:
        raise TypeError(f"{name} has element type {x.element}; on the GPU "
                        "linattn computes in " + ", ".join(DEVICE_ELEMENTS))
    if len(x.shape) != rank:
        raise ValueError(f"{name} must have rank {rank} ({layout}), got shape "
                         f"{tuple(x.shape)}")
    if any(size < 1 for size in x.shape):
        raise ValueError(f"{name} has an empty dimension (shape "
                         f"{tuple(x.shape)}); every size must be at least 1")
    if not x.pointer:
        raise ValueError(f"{name} is a null pointer")
    if x.pointer % _DEVICE_ELEMENT_BYTES[x.element]:
        raise ValueError(f"{name} at {x.pointer:#x} is not aligned to its "
                         f"{x.element} elements")
    return DeviceArray(int(x.pointer), tuple(int(d) for d in x.shape),
                       x.element)


def _check_disjoint(outputs: Dict[str, DeviceArray],
                    inputs: Dict[str, DeviceArray]) -> None:
    """Raises ValueError when an output's memory overlaps an input's or
    another output's: the kernels write the outputs while they read the
    inputs, so an overlap would give a wrong answer."""
    def extent(a: DeviceArray) -> Tuple[int, int]:
        size = int(np.prod(a.shape, dtype=np.int64))
        return a.pointer, a.pointer + size * _DEVICE_ELEMENT_BYTES[a.element]

    named = list(outputs.items())
    for i, (name, a) in enumerate(named):
        lo, hi = extent(a)
        for other, b in list(inputs.items()) + named[i + 1:]:
            other_lo, other_hi = extent(b)
            if lo < other_hi and other_lo < hi:
                raise ValueError(f"{name} overlaps {other}: the outputs need "
                                 "memory of their own (the kernels write "
                                 "them while they read the inputs)")


def linear_attention_device(q: DeviceArray, k: DeviceArray, v: DeviceArray,
                            out: DeviceArray, *, stream: int,
                            feature_map: str = "elu", causal: bool = True,
                            normalize: bool = True, eps: float = 1e-6,
                            projection: Optional[DeviceArray] = None,
                            backend: str = "cuda",
                            compile_options: Optional[Mapping[str, Any]] = None
                            ) -> None:
    """`linear_attention` on GPU memory, enqueued on a stream: what a
    framework calls on its own tensors (``linattn.torch`` does on CUDA
    tensors).

    q [B, H, N, D], k [B, H, M, D], v [B, H, M, Dv] and out [B, H, N, Dv] are
    dense row-major `DeviceArray`s of one element type (``"f16"``,
    ``"bf16"``, ``"f32"`` or ``"f64"``) in memory of the device whose CUDA
    context is current on the calling thread (a framework makes its
    device's current: ``torch.cuda.device``; with none, the first GPU's
    primary context, which CUDA's runtime API and the frameworks share). `out`
    must not overlap the inputs (ValueError). The kernels (compiled with
    ``linattn-lower-to-nvvm{device-buffers=true}``, once per head sizes,
    element type, options and the device's chip and SM count: batch, heads
    and lengths are read at run time)
    are enqueued on `stream` (a ``CUstream``; 0 is the legacy
    default stream), and nothing is copied or synchronized: `out` is ready
    when the stream gets there. 16-bit data takes the tensor-core kernels
    for causal scans, with the state and every sum in float32.

    `projection` is favor's [D, m] random projection, a `DeviceArray` of
    the same element type. `compile_options` are those of
    `linear_attention`.

    Raises as `linear_attention` does; also TypeError for an element type
    without GPU kernels and `BackendUnavailable` for a backend that does not
    run on device memory (``"cpu"``).
    """
    _check_device_options(feature_map, normalize, eps, backend, stream)
    options = _compile_options(compile_options)
    q = _check_device_array("q", q, 4, "[B, H, N, D]")
    k = _check_device_array("k", k, 4, "[B, H, M, D]")
    v = _check_device_array("v", v, 4, "[B, H, M, Dv]")
    out = _check_device_array("out", out, 4, "[B, H, N, Dv]")
    inputs = {"q": q, "k": k, "v": v}
    projection = _check_projection(feature_map, projection, q.shape[3],
                                   _check_device_array, "DeviceArray")
    if projection is not None:
        inputs["projection"] = projection
    elt = _check_same_element(**inputs, out=out)
    o_shape = _attention_output_shape(q.shape, k.shape, v.shape, causal)
    if out.shape != o_shape:
        raise ValueError(f"out must have shape {o_shape}, got {out.shape}")
    _check_disjoint({"out": out}, inputs)
    p_shape = None if projection is None else projection.shape

    key = _attention_key("attention-device", backend, elt, q.shape[3],
                         v.shape[3], p_shape, feature_map, causal, normalize,
                         eps)

    def text() -> str:
        return _attention_text(elt, _open(q.shape), _open(k.shape),
                               _open(v.shape), p_shape,
                               feature_map, causal, normalize, eps,
                               tensors=True)

    _compiled_device(key, backend, text, options)(list(inputs.values()),
                                                  [out], int(stream))


def linear_attention_grad_device(q: DeviceArray, k: DeviceArray,
                                 v: DeviceArray, grad_out: DeviceArray,
                                 dq: DeviceArray, dk: DeviceArray,
                                 dv: DeviceArray, *, stream: int,
                                 feature_map: str = "elu", causal: bool = True,
                                 normalize: bool = True, eps: float = 1e-6,
                                 projection: Optional[DeviceArray] = None,
                                 backend: str = "cuda",
                                 compile_options: Optional[Mapping[str, Any]]
                                 = None,
                                 initial_state: Optional[
                                     Tuple[DeviceArray, DeviceArray]] = None,
                                 final_state_grad: Optional[
                                     Tuple[DeviceArray, DeviceArray]] = None,
                                 initial_state_grad: Optional[
                                     Tuple[DeviceArray, DeviceArray]] = None
                                 ) -> None:
    """`linear_attention_grad` on GPU memory, enqueued on a stream: dq, dk
    and dv (the shapes of q, k and v) for the loss gradient `grad_out`
    ([B, H, N, Dv]), with the options and conventions of
    `linear_attention_device` (`projection`: favor's, a `DeviceArray`; no
    gradient is returned for it).

    Training in segments on the GPU (causal only), as
    `linear_attention_grad` does on the host: `initial_state` (S₀, z₀) is
    the state the segment's forward pass (`recurrent_device`) started from,
    `final_state_grad` (dS, dz) the gradients of the state it ended with,
    and `initial_state_grad` (dS₀, dz₀), needed with `initial_state`,
    receives the gradients of S₀ and z₀: [B, H, F, Dv] and [B, H, F]
    `DeviceArray`s of the state's element type (`device_state_element`).

    Every configuration is GPU kernels throughout: the scans (causal) or
    the linear form's summaries and readouts (non-causal), 16-bit data on
    the tensor-core kernels; the feature maps and their chain rule; and what
    joins them (normalized: the normalizer's scaling of dO, [V, 1]; the
    transposed summaries) as kernels of their own
    (``linattn-gpu-linalg-kernels``). The gradients must not overlap the
    inputs or each other (ValueError).
    """
    _check_device_options(feature_map, normalize, eps, backend, stream)
    options = _compile_options(compile_options)
    q = _check_device_array("q", q, 4, "[B, H, N, D]")
    k = _check_device_array("k", k, 4, "[B, H, M, D]")
    v = _check_device_array("v", v, 4, "[B, H, M, Dv]")
    do = _check_device_array("grad_out", grad_out, 4, "[B, H, N, Dv]")
    outputs = {"dq": _check_device_array("dq", dq, 4, "[B, H, N, D]"),
               "dk": _check_device_array("dk", dk, 4, "[B, H, M, D]"),
               "dv": _check_device_array("dv", dv, 4, "[B, H, M, Dv]")}
    inputs = {"q": q, "k": k, "v": v, "grad_out": do}
    projection = _check_projection(feature_map, projection, q.shape[3],
                                   _check_device_array, "DeviceArray")
    if projection is not None:
        inputs["projection"] = projection
    elt = _check_same_element(**inputs, **outputs)
    o_shape = _attention_output_shape(q.shape, k.shape, v.shape, causal)
    if do.shape != o_shape:
        raise ValueError(f"grad_out must have the output's shape {o_shape}, "
                         f"got {do.shape}")
    for name, x in (("dq", q), ("dk", k), ("dv", v)):
        if outputs[name].shape != x.shape:
            raise ValueError(f"{name} must have shape {x.shape}, got "
                             f"{outputs[name].shape}")
    p_shape = None if projection is None else projection.shape
    segment = initial_state is not None or final_state_grad is not None
    if segment:
        if not causal:
            raise ValueError("initial_state and final_state_grad are the "
                             "states of the causal scan: they need "
                             "causal=True")
        if (initial_state is None) != (initial_state_grad is None):
            raise ValueError("initial_state and initial_state_grad go "
                             "together: the gradients of the initial state "
                             "need a buffer")
        b, h, _, d = q.shape
        f = p_shape[1] if p_shape else feature_dim(feature_map, d)
        shapes = ((b, h, f, v.shape[3]), (b, h, f))
        state_elt = device_state_element(elt)
        for name, pair, into in (("initial_state", initial_state, inputs),
                                 ("final_state_grad", final_state_grad,
                                  inputs),
                                 ("initial_state_grad", initial_state_grad,
                                  outputs)):
            if pair is None:
                continue
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"{name} must be a pair (S, z) of "
                                f"DeviceArrays, got {type(pair).__name__}")
            for part, x, shape in zip(("S", "z"), pair, shapes):
                x = _check_device_array(f"{name}'s {part}", x, len(shape),
                                        "[B, H, F, Dv]" if part == "S"
                                        else "[B, H, F]")
                if x.shape != shape:
                    raise ValueError(f"{name}'s {part} must have shape "
                                     f"{shape}, got {x.shape}")
                if x.element != state_elt:
                    raise TypeError(f"{name}'s {part} has element type "
                                    f"{x.element}; the state of {elt} data "
                                    f"is {state_elt}")
                into[f"{name} {part}"] = x
    _check_disjoint(outputs, inputs)

    key = _attention_key("attention-grad-device", backend, elt, q.shape[3],
                         v.shape[3], p_shape, feature_map, causal, normalize,
                         eps) + ((initial_state is not None,
                                  final_state_grad is not None)
                                 if segment else ())

    def text() -> str:
        if segment:
            return _segment_grad_text(elt, state_elt, _open(q.shape),
                                      _open(v.shape), f, p_shape, feature_map,
                                      normalize, eps,
                                      initial_state is not None,
                                      final_state_grad is not None,
                                      tensors=True)
        return _attention_grad_text(elt, _open(q.shape), _open(k.shape),
                                    _open(v.shape), p_shape, feature_map,
                                    causal, normalize, eps, tensors=True)

    _compiled_device(key, backend, text, options)(
        list(inputs.values()), list(outputs.values()), int(stream))


#===------------------------------------------------------------------------===#
# RecurrentState
#===------------------------------------------------------------------------===#


def _recurrent_text(op: str, elt: str, state_elt: str,
                    q: Sequence[Optional[int]], v: Sequence[Optional[int]],
                    feature_dim: int,
                    p: Optional[Sequence[int]], feature_map: str,
                    normalize: bool, eps: float, tensors: bool = False) -> str:
    """The function @linattn advancing a recurrent state: ``linattn.step``
    on one token (`op` ``"step"``, q [B, H, D]) or ``linattn.scan`` from the
    state over T tokens (``"scan"``, q [B, H, T, D]); arguments q, k, v,
    s0, z0 (and the projection), results o, s1, z1."""
    b, h = q[0], q[1]
    dv = v[-1]
    s_shape = (b, h, feature_dim, dv)
    z_shape = (b, h, feature_dim)
    f_shape = tuple(q[:-1]) + (feature_dim,)
    o_shape = tuple(q[:-1]) + (dv,)
    bld = _Builder(elt, tensors)
    tq, q_type = bld.input("q", q)
    tk, k_type = bld.input("k", q)
    tv, v_type = bld.input("v", v)
    ts, s_type = bld.input("s0", s_shape, state_elt)
    tz, z_type = bld.input("z0", z_shape, state_elt)
    proj = bld.input("p", p) if p is not None else None
    fq = bld.feature_map(feature_map, tq, q_type, f_shape, proj, "fq")
    fk = bld.feature_map(feature_map, tk, k_type, f_shape, proj, "fk")
    f_type = f"tensor<{_shape_str(f_shape, elt)}>"
    o_type = f"tensor<{_shape_str(o_shape, elt)}>"
    if op == "step":
        head = f"linattn.step {fq}, {fk}, {tv}, {ts}, {tz}"
    else:
        head = f"linattn.scan forward {fq}, {fk}, {tv} init({ts}, {tz})"
    bld.body.append(
        f"%ro, %rs, %rz = {head}{_normalize_clause(normalize, eps)} : "
        f"{f_type}, {f_type}, {v_type}, {s_type}, {z_type} -> "
        f"{o_type}, {s_type}, {z_type}")
    bld.output("o", "%ro", o_shape)
    bld.output("s1", "%rs", s_shape, state_elt)
    bld.output("z1", "%rz", z_shape, state_elt)
    return bld.text()


def recurrent_device(q: DeviceArray, k: DeviceArray, v: DeviceArray,
                     s: DeviceArray, z: DeviceArray, out: DeviceArray,
                     s_out: DeviceArray, z_out: DeviceArray, *, stream: int,
                     feature_map: str = "elu", normalize: bool = True,
                     eps: float = 1e-6,
                     projection: Optional[DeviceArray] = None,
                     backend: str = "cuda",
                     compile_options: Optional[Mapping[str, Any]] = None
                     ) -> None:
    """Advances a recurrent state (S, z) on GPU memory, enqueued on a
    stream: the device form of `RecurrentState.step` and `update`.

    One token per batch and head when q is [B, H, D] (k [B, H, D],
    v [B, H, Dv], out [B, H, Dv]: ``linattn.step``), T tokens when q is
    [B, H, T, D] (k, v and out with T too: ``linattn.scan`` from the
    state). s [B, H, F, Dv] and z [B, H, F] are the state before, s_out and
    z_out receive the state after (F = D for the elementwise maps, 1 + D + D²
    for poly2, m for favor's [D, m] `projection`); they are float32 (``"f32"``) for 16-bit
    data, else the data's type. The arrays are `DeviceArray`s as for
    `linear_attention_device`; outputs must not overlap inputs or each
    other (ValueError), except that s_out may be s itself: the state
    updated in place (every kernel reads a state element before it writes
    it, in the same block, and a sequence-parallel scan's segments start
    from states of their own), which halves its memory. z_out may not be z
    (every block of a head reads z): ping-pong between two. Nothing is copied or
    synchronized, and every call of one shape only launches on `stream` (so
    it can be captured in a CUDA graph). `compile_options` are those of
    `linear_attention`.
    """
    _check_device_options(feature_map, normalize, eps, backend, stream)
    options = _compile_options(compile_options)
    tokens = isinstance(q, DeviceArray) and len(q.shape) == 4
    rank, lead = (4, "[B, H, T, ") if tokens else (3, "[B, H, ")
    q = _check_device_array("q", q, rank, lead + "D]")
    k = _check_device_array("k", k, rank, lead + "D]")
    v = _check_device_array("v", v, rank, lead + "Dv]")
    out = _check_device_array("out", out, rank, lead + "Dv]")
    s = _check_device_array("s", s, 4, "[B, H, F, Dv]")
    z = _check_device_array("z", z, 3, "[B, H, F]")
    s_out = _check_device_array("s_out", s_out, 4, "[B, H, F, Dv]")
    z_out = _check_device_array("z_out", z_out, 3, "[B, H, F]")
    projection = _check_projection(feature_map, projection, q.shape[-1],
                                   _check_device_array, "DeviceArray")
    data = {"q": q, "k": k, "v": v, "out": out}
    if projection is not None:
        data["projection"] = projection
    elt = _check_same_element(**data)
    state_elt = device_state_element(elt)
    for name, a in (("s", s), ("z", z), ("s_out", s_out), ("z_out", z_out)):
        if a.element != state_elt:
            raise TypeError(f"{name} has element type {a.element}; the state "
                            f"of {elt} data is {state_elt}")
    b, h, d = q.shape[0], q.shape[1], q.shape[-1]
    dv = v.shape[-1]
    p_shape = None if projection is None else projection.shape
    f = p_shape[1] if p_shape else feature_dim(feature_map, d)
    tokens_shape = q.shape[:-1]
    want = {"k": (k, tokens_shape + (d,)), "v": (v, tokens_shape + (dv,)),
            "out": (out, tokens_shape + (dv,)), "s": (s, (b, h, f, dv)),
            "z": (z, (b, h, f)), "s_out": (s_out, (b, h, f, dv)),
            "z_out": (z_out, (b, h, f))}
    for name, (a, shape) in want.items():
        if a.shape != shape:
            raise ValueError(f"{name} must have shape {shape} for q of shape "
                             f"{q.shape} and v of shape {v.shape}, got "
                             f"{a.shape}")

    inputs = {"q": q, "k": k, "v": v, "s": s, "z": z}
    if projection is not None:
        inputs["projection"] = projection
    # s_out may be s itself (the state in place; its shape is s's), not a
    # part of it, and must miss every other input.
    read = {name: a for name, a in inputs.items()
            if name != "s" or s_out.pointer != s.pointer}
    _check_disjoint({"out": out, "s_out": s_out, "z_out": z_out}, read)
    op = "scan" if tokens else "step"
    key = ("recurrent-device", op, backend, elt, d, dv, p_shape, feature_map,
           bool(normalize), float(eps) if normalize else None)

    def text() -> str:
        return _recurrent_text(op, elt, state_elt, _open(q.shape),
                               _open(v.shape), f, p_shape,
                               feature_map, normalize, eps, tensors=True)

    _compiled_device(key, backend, text, options)(
        list(inputs.values()), [out, s_out, z_out], int(stream))


class RecurrentState:
    """The recurrent state (S, z) of causal linear attention, for decoding one
    token at a time.

    Causal linear attention is an RNN: with S_0 = 0 and z_0 = 0,

        S_i = S_{i-1} + φ(k_i) v_iᵀ,  z_i = z_{i-1} + φ(k_i),
        o_i = φ(q_i)ᵀ S_i / (φ(q_i)ᵀ z_i + eps).

    `step` consumes one token per batch and head (the ``linattn.step`` op);
    `update` consumes a block of tokens (a prompt) with ``linattn.scan`` from
    the current state. Both return the outputs and advance the state; feeding
    a sequence through them gives the same outputs as
    ``linear_attention(..., causal=True)`` on the whole sequence.

        state = RecurrentState(batch=1, heads=8, head_dim=64)
        o_prompt = state.update(q[:, :, :100], k[:, :, :100], v[:, :, :100])
        o_next = state.step(q[:, :, 100], k[:, :, 100], v[:, :, 100])

    Args:
      batch, heads, head_dim: B, H and D of the queries and keys.
      value_dim: Dv of the values (default D).
      feature_map, normalize, eps, projection, backend, compile_options: as
        for `linear_attention`.
      dtype: float32 (default), float64 or float16, for inputs and outputs;
        the state `S`, `z` is float32 for float16 (`state_dtype`), else the
        same.
    """

    def __init__(self, batch: int, heads: int, head_dim: int,
                 value_dim: Optional[int] = None, *, feature_map: str = "elu",
                 normalize: bool = True, eps: float = 1e-6,
                 projection: Optional[np.ndarray] = None,
                 dtype: Any = np.float32, backend: str = "cpu",
                 compile_options: Optional[Mapping[str, Any]] = None) -> None:
        _check_options(feature_map, normalize, eps, backend)
        self.compile_options = _compile_options(compile_options)
        value_dim = head_dim if value_dim is None else value_dim
        for name, size in (("batch", batch), ("heads", heads),
                           ("head_dim", head_dim), ("value_dim", value_dim)):
            if not isinstance(size, (int, np.integer)) or size < 1:
                raise ValueError(f"{name} must be a positive integer, got "
                                 f"{size!r}")
        self.dtype = np.dtype(dtype)
        if self.dtype not in SUPPORTED_DTYPES:
            raise TypeError(f"dtype must be float16, float32 or float64, "
                            f"got {self.dtype}")
        self.state_dtype = state_dtype(self.dtype)
        """The dtype of S and z: float32 for float16 data."""
        self.batch, self.heads = int(batch), int(heads)
        self.head_dim, self.value_dim = int(head_dim), int(value_dim)
        self.feature_map = feature_map
        self.normalize = bool(normalize)
        self.eps = float(eps)
        self.backend = backend
        p = _check_projection(feature_map, projection, self.head_dim)
        if p is not None and p.dtype != self.dtype:
            raise TypeError(f"projection has dtype {p.dtype}, the state "
                            f"{self.dtype}")
        self.projection = p
        self.feature_dim = feature_dim(feature_map, self.head_dim, p)
        """F, the size of φ(k)."""
        self.reset()

    @property
    def S(self) -> np.ndarray:
        """The key-value state Σ φ(k_j) v_jᵀ, [B, H, F, Dv]. Later steps
        leave the array returned as it is."""
        return self._hand_out()[0]

    @property
    def z(self) -> np.ndarray:
        """The normalizer state Σ φ(k_j), [B, H, F]. Later steps leave the
        array returned as it is."""
        return self._hand_out()[1]

    def _hand_out(self) -> Tuple[np.ndarray, np.ndarray]:
        """The state's arrays, for a caller who may keep them: they will not
        be reused for a later state."""
        self._handed_out = True
        return self._s, self._z

    def reset(self) -> None:
        """Back to the empty prefix: S = 0, z = 0, position 0."""
        b, h, f, dv = self.batch, self.heads, self.feature_dim, self.value_dim
        self._s = np.zeros((b, h, f, dv), self.state_dtype)
        self._z = np.zeros((b, h, f), self.state_dtype)
        # Arrays of an earlier state that nobody holds, for the next one.
        self._spare: Optional[Tuple[np.ndarray, np.ndarray]] = None
        self._handed_out = False
        self.position = 0
        """The number of tokens consumed since the last reset."""

    def copy(self) -> "RecurrentState":
        """An independent copy (e.g. to branch a decoding)."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._s = self._s.copy()
        other._z = self._z.copy()
        other._spare, other._handed_out = None, False
        return other

    def _check_inputs(self, q: Any, k: Any, v: Any, tokens: bool
                      ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        b, h, d, dv = self.batch, self.heads, self.head_dim, self.value_dim
        if tokens:
            q = _check_array("q", q, 4, "[B, H, T, D]")
            k = _check_array("k", k, 4, "[B, H, T, D]")
            v = _check_array("v", v, 4, "[B, H, T, Dv]")
            t = q.shape[2]
            want = ((b, h, t, d), (b, h, t, d), (b, h, t, dv))
        else:
            q = _check_array("q", q, 3, "[B, H, D]")
            k = _check_array("k", k, 3, "[B, H, D]")
            v = _check_array("v", v, 3, "[B, H, Dv]")
            want = ((b, h, d), (b, h, d), (b, h, dv))
        for name, x, shape in zip("qkv", (q, k, v), want):
            if x.dtype != self.dtype:
                raise TypeError(f"{name} has dtype {x.dtype}, the state "
                                f"{self.dtype}")
            if x.shape != shape:
                raise ValueError(f"{name} must have shape {shape} for this "
                                 f"state, got {x.shape}")
        return q, k, v

    def _run(self, op: str, q: np.ndarray, k: np.ndarray, v: np.ndarray,
             o_shape: Tuple[int, ...]) -> np.ndarray:
        s_shape, z_shape = self._s.shape, self._z.shape
        p = self.projection
        fn = _recurrent_function(op, self.backend, self.dtype, self.head_dim,
                                 self.value_dim, self.feature_dim, p,
                                 self.feature_map, self.normalize, self.eps,
                                 self.compile_options)
        o = np.empty(o_shape, self.dtype)
        # The new state goes into the previous state's arrays unless they
        # were handed out: fresh ones would cost a large state its page
        # faults on every step.
        if self._spare is not None:
            s1, z1 = self._spare
        else:
            s1 = np.empty(s_shape, self.state_dtype)
            z1 = np.empty(z_shape, self.state_dtype)
        if p is None:
            fn(q, k, v, self._s, self._z, o, s1, z1)
        else:
            fn(q, k, v, self._s, self._z, p, o, s1, z1)
        self._spare = None if self._handed_out else (self._s, self._z)
        self._s, self._z, self._handed_out = s1, z1, False
        return o

    def step(self, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Consumes one token: q and k [B, H, D], v [B, H, Dv]. Returns its
        output, [B, H, Dv], and advances the state."""
        q, k, v = self._check_inputs(q, k, v, tokens=False)
        o = self._run("step", q, k, v, (self.batch, self.heads,
                                        self.value_dim))
        self.position += 1
        return o

    def update(self, q: np.ndarray, k: np.ndarray, v: np.ndarray
               ) -> np.ndarray:
        """Consumes T tokens at once (e.g. a prompt): q and k [B, H, T, D], v
        [B, H, T, Dv]. Returns their outputs, [B, H, T, Dv], and advances the
        state by T tokens."""
        q, k, v = self._check_inputs(q, k, v, tokens=True)
        t = q.shape[2]
        o = self._run("scan", q, k, v, (self.batch, self.heads, t,
                                        self.value_dim))
        self.position += t
        return o

    def __repr__(self) -> str:
        return (f"RecurrentState(batch={self.batch}, heads={self.heads}, "
                f"head_dim={self.head_dim}, value_dim={self.value_dim}, "
                f"feature_map={self.feature_map!r}, "
                f"normalize={self.normalize}, dtype={self.dtype}, "
                f"position={self.position})")
