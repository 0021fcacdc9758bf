"""JIT compilation of MLIR modules for the host CPU, called with numpy arrays.

    >>> import numpy as np
    >>> from linattn.jit import ExecutionEngine
    >>> engine = ExecutionEngine('''
    ... func.func @phi(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    ...   %0 = linattn.feature_map elu %x : tensor<2x3xf32> -> tensor<2x3xf32>
    ...   return %0 : tensor<2x3xf32>
    ... }''')
    >>> engine.invoke("phi", np.zeros((2, 3), np.float32))
    array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32)

The module is lowered with a pass pipeline (``linattn-lower-to-cpu`` by
default), compiled by MLIR's ExecutionEngine and its public functions are
called through their ``_mlir_ciface_`` wrappers: by ctypes, or, for functions
without results, by the native module `_capi.native_call_module` finds
(through the buffer protocol, much faster per call; anything it does not take
exactly goes through ctypes, which raises the errors).

Calling convention:

* a ``tensor`` or ``memref`` argument takes a numpy array of exactly its
  element type and rank, with its static sizes, C-contiguous (the pipeline
  gives function boundaries identity layouts). The array is passed by pointer
  through a memref descriptor: no copy. Tensor arguments are marked
  ``bufferization.writable = false`` before lowering, so compiled code never
  writes into them; memref arguments are the caller's buffers and may be
  written (destination-passing outputs);
* a scalar argument (integer, index, f32, f64) takes a Python number;
* a ``tensor``/``memref`` result comes back as a numpy array that owns the
  buffer the compiled code allocated (no copy; it is freed when the array is
  garbage-collected). A result that aliases an argument or a constant is
  copied instead. Scalar results come back as Python numbers.

Host memory: by default (``host_allocator="caching"``) the compiled code's
``malloc``, ``aligned_alloc`` and ``free`` are linattn's caching host
allocator (``linattn-c/HostAllocator.h``): blocks of 128 KiB or more that a
call frees, and the buffers of results once their arrays are collected, are
kept (up to `host_cache_stats`' limit, 1 GiB unless
``LINATTN_HOST_CACHE_LIMIT`` says otherwise) and reused by later calls, which
then do not fault fresh pages in. `release_host_cache` returns them to the C
library; `set_host_cache_limit` bounds them.

A module lowered for the GPU with ``device-buffers=true`` (the GPU backends'
``compile(..., device_buffers=True)``) follows the device-buffer convention
instead: `ExecutionEngine.device_function` gives a `DeviceFunction`, called
with `DeviceArray`s (device pointers) for its tensor arguments and results
and a stream.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import struct
import weakref
from dataclasses import dataclass
from typing import (Any, Callable, Dict, List, Mapping, NamedTuple, Optional,
                    Sequence, Tuple, Union)

import numpy as np

from . import _capi
from ._capi import MlirStringRef, is_null, lib
from .ir import Context, MLIRError, Module, _print_type, default_context

__all__ = [
    "ArgSpec",
    "DeviceArray",
    "DeviceFunction",
    "ExecutionEngine",
    "HostCacheStats",
    "JitFunction",
    "default_shared_libs",
    "host_cache_stats",
    "host_empty",
    "llvm_library_dir",
    "release_host_cache",
    "set_host_cache_limit",
]

#===------------------------------------------------------------------------===#
# Runtime libraries
#===------------------------------------------------------------------------===#


def llvm_library_dir() -> pathlib.Path:
    """The directory of the LLVM/MLIR libraries libLinAttnCAPI.so uses:
    ``LINATTN_LLVM_LIBRARY_DIR`` if set, else the directory libMLIR.so was
    loaded from, else (a libLinAttnCAPI.so that carries MLIR itself, as the
    relocatable bundle's does) the directory of libLinAttnCAPI.so."""
    env = os.environ.get("LINATTN_LLVM_LIBRARY_DIR")
    if env:
        return pathlib.Path(env)
    lib()  # make sure libMLIR.so is loaded
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if os.path.basename(path).startswith("libMLIR.so"):
                    return pathlib.Path(path).parent
    except OSError:
        pass
    return _capi.find_library().parent


def default_shared_libs() -> List[str]:
    """The libraries compiled code may call, those of them that exist in
    :func:`llvm_library_dir`: the runner utilities (``memrefCopy``: MLIR's
    C runner utilities, else linattn's copy of that one function) and LLVM's
    OpenMP runtime (threaded loops)."""
    libdir = llvm_library_dir()
    alternatives = [
        ["libmlir_c_runner_utils.so", "liblinattn_runner_utils.so"],
        ["libomp.so", "libomp.so.5"],
    ]
    found = []
    for names in alternatives:
        path = next((libdir / n for n in names if (libdir / n).is_file()), None)
        if path is not None:
            found.append(str(path))
    return found


#===------------------------------------------------------------------------===#
# Argument types and memref descriptors
#===------------------------------------------------------------------------===#

_INT_DTYPES = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32,
               64: np.int64}
_SCALAR_CTYPES = {
    np.dtype(np.bool_): ctypes.c_bool,
    np.dtype(np.int8): ctypes.c_int8,
    np.dtype(np.int16): ctypes.c_int16,
    np.dtype(np.int32): ctypes.c_int32,
    np.dtype(np.int64): ctypes.c_int64,
    np.dtype(np.float32): ctypes.c_float,
    np.dtype(np.float64): ctypes.c_double,
}


@dataclass(frozen=True)
class ArgSpec:
    """The type of one argument or result of a compiled function."""

    kind: str
    """``"tensor"``, ``"memref"`` or ``"scalar"``."""
    type: str
    """The MLIR type as printed, e.g. ``tensor<1x8x?x64xf32>``."""
    dtype: Optional[np.dtype]
    """The numpy element type, None when numpy has none (bf16)."""
    shape: Optional[Tuple[Optional[int], ...]] = None
    """Sizes of a shaped type, None for a dynamic size; None for scalars."""
    identity_layout: bool = True
    """False for a memref with a non-identity layout (not supported)."""

    @property
    def rank(self) -> int:
        return len(self.shape) if self.shape is not None else 0


def _element_dtype(t: _capi.MlirType) -> Optional[np.dtype]:
    c = lib()
    if c.mlirTypeIsAF32(t):
        return np.dtype(np.float32)
    if c.mlirTypeIsAF64(t):
        return np.dtype(np.float64)
    if c.mlirTypeIsAF16(t):
        return np.dtype(np.float16)
    if c.mlirTypeIsAIndex(t):
        return np.dtype(np.int64)
    if c.mlirTypeIsAInteger(t):
        width = c.mlirIntegerTypeGetWidth(t)
        if width in _INT_DTYPES:
            return np.dtype(_INT_DTYPES[width])
    return None


def _arg_spec(t: _capi.MlirType) -> ArgSpec:
    c = lib()
    text = _print_type(t)
    if c.mlirTypeIsARankedTensor(t) or c.mlirTypeIsAMemRef(t):
        kind = "tensor" if c.mlirTypeIsARankedTensor(t) else "memref"
        rank = c.mlirShapedTypeGetRank(t)
        shape = tuple(
            None if c.mlirShapedTypeIsDynamicDim(t, i) else
            int(c.mlirShapedTypeGetDimSize(t, i)) for i in range(rank))
        identity = True
        if kind == "memref":
            identity = bool(c.mlirAffineMapIsIdentity(
                c.mlirMemRefTypeGetAffineMap(t)))
        return ArgSpec(kind, text, _element_dtype(c.mlirShapedTypeGetElementType(t)),
                       shape, identity)
    dtype = _element_dtype(t)
    if dtype is not None:
        return ArgSpec("scalar", text, dtype)
    return ArgSpec("unsupported", text, None)


_descriptor_types: Dict[int, type] = {}


def memref_descriptor_type(rank: int) -> type:
    """The ctypes structure of a rank-`rank` memref descriptor: allocated and
    aligned pointers, offset, sizes and strides (in elements)."""
    if rank not in _descriptor_types:
        fields: List[Tuple[str, Any]] = [
            ("allocated", ctypes.c_void_p),
            ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64),
        ]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank),
                       ("strides", ctypes.c_int64 * rank)]
        _descriptor_types[rank] = type(f"MemRefDescriptor{rank}D",
                                       (ctypes.Structure,),
                                       {"_fields_": fields})
    return _descriptor_types[rank]


def _descriptor_for(array: np.ndarray) -> ctypes.Structure:
    desc = memref_descriptor_type(array.ndim)()
    ptr = array.__array_interface__["data"][0]
    desc.allocated = ptr
    desc.aligned = ptr
    desc.offset = 0
    for i, (size, stride) in enumerate(zip(array.shape, array.strides)):
        desc.sizes[i] = size
        desc.strides[i] = stride // array.itemsize
    return desc


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


#===------------------------------------------------------------------------===#
# Host memory of the compiled code
#===------------------------------------------------------------------------===#

HOST_ALLOCATORS = ("caching", "system")


class HostCacheStats(NamedTuple):
    """What the caching host allocator holds (shared by every engine of the
    process) and has done since the process started."""
    cached_bytes: int
    cached_blocks: int
    limit_bytes: int
    hits: int
    misses: int


def host_cache_stats() -> HostCacheStats:
    """The caching host allocator's state (see the module documentation)."""
    stats = lib().linattnHostCacheGetStats()
    return HostCacheStats(stats.cachedBytes, stats.cachedBlocks,
                          stats.limitBytes, stats.hits, stats.misses)


def release_host_cache() -> int:
    """Returns every block the caching host allocator holds to the C library;
    returns their bytes."""
    return lib().linattnHostCacheRelease()


def set_host_cache_limit(limit_bytes: int) -> int:
    """Sets the most bytes the caching host allocator holds (0: it holds
    none, every ``free`` goes to the C library), releasing the blocks held
    longest until it fits; returns the previous limit."""
    if limit_bytes < 0:
        raise ValueError(f"limit_bytes must be >= 0, got {limit_bytes}")
    return lib().linattnHostCacheSetLimit(limit_bytes)


def host_empty(shape: Sequence[int], dtype: Any) -> np.ndarray:
    """An uninitialized C-contiguous array whose memory (64-byte aligned)
    comes from the caching host allocator and returns to it when the last
    view of it is collected, so that large outputs of repeated calls reuse
    pages instead of faulting fresh ones in. Below the cache's 128 KiB it is
    `np.empty`."""
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < _HOST_CACHE_MIN_BYTES:
        return np.empty(shape, dtype)
    c = lib()
    address = c.linattnHostAlignedAlloc(64, (nbytes + 63) // 64 * 64)
    if not address:
        raise MemoryError(f"cannot allocate {nbytes} bytes")
    interface = {"version": 3, "shape": shape, "typestr": dtype.str,
                 "data": (address, False), "strides": None}
    return np.asarray(_ResultBuffer(interface, address, c.linattnHostFree))


# The smallest block the caching host allocator keeps (HostAllocator.cpp).
_HOST_CACHE_MIN_BYTES = 128 << 10


def _host_allocator_symbols() -> Dict[str, int]:
    """The caching allocator's functions under the names compiled code
    calls."""
    c = lib()
    return {name: ctypes.cast(getattr(c, fn), ctypes.c_void_p).value
            for name, fn in (("malloc", "linattnHostMalloc"),
                             ("aligned_alloc", "linattnHostAlignedAlloc"),
                             ("free", "linattnHostFree"))}

# The allocated pointer of a memref lowered from memref.get_global.
_GLOBAL_SENTINEL = 0xDEADBEEF


class _ResultBuffer:
    """Exposes a compiled function's result to numpy; frees the memory when
    the last array that views it is collected (when it owns it)."""

    def __init__(self, interface: dict, owned_pointer: Optional[int],
                 free: Callable[[int], None] = _libc.free) -> None:
        self.__array_interface__ = interface
        if owned_pointer:
            weakref.finalize(self, free, owned_pointer)


#===------------------------------------------------------------------------===#
# The native fast path (lib/Bindings/Python/CallModule.cpp)
#===------------------------------------------------------------------------===#

# One argument of the plan the native module's `call` reads: kind, rank, item
# size, whether the buffer must be writable, the buffer format of the element
# type and the static sizes (-1 dynamic). Its ArgPlan has the same layout, and
# a module whose PLAN_RECORD_SIZE differs (built from other sources) is not
# used.
_PLAN_RECORD = struct.Struct("<iiii8s8q")
_PLAN_MAX_RANK = 8
_PLAN_MAX_ARGS = 32
_PLAN_MEMREF = 0
_PLAN_SCALARS = {
    np.dtype(np.float32): 1,
    np.dtype(np.float64): 2,
    np.dtype(np.int64): 3,
    np.dtype(np.int32): 4,
}


def _native_plan(inputs: Sequence[ArgSpec], read_only: frozenset
                 ) -> Optional[bytes]:
    """The native call's plan for these arguments, None when one of them is
    not one it takes (the ctypes path then takes every call)."""
    if len(inputs) > _PLAN_MAX_ARGS:
        return None
    records = []
    for i, spec in enumerate(inputs):
        if spec.kind == "scalar":
            kind = _PLAN_SCALARS.get(spec.dtype)
            if kind is None:
                return None
            records.append(_PLAN_RECORD.pack(kind, 0, spec.dtype.itemsize, 0,
                                             b"", *([0] * _PLAN_MAX_RANK)))
            continue
        assert spec.shape is not None and spec.dtype is not None
        if spec.rank > _PLAN_MAX_RANK:
            return None
        buffer_format = memoryview(np.empty(0, spec.dtype)).format.encode()
        if len(buffer_format) >= 8:
            return None
        sizes = [-1 if s is None else s for s in spec.shape]
        sizes += [0] * (_PLAN_MAX_RANK - len(sizes))
        writable = spec.kind == "memref" and i not in read_only
        records.append(_PLAN_RECORD.pack(_PLAN_MEMREF, spec.rank,
                                         spec.dtype.itemsize, int(writable),
                                         buffer_format, *sizes))
    return b"".join(records)


#===------------------------------------------------------------------------===#
# Compiled functions
#===------------------------------------------------------------------------===#


class JitFunction:
    """A public function of an `ExecutionEngine`, callable with numpy arrays
    and Python numbers (see the module documentation)."""

    def __init__(self, engine: "ExecutionEngine", name: str,
                 inputs: Sequence[ArgSpec], results: Sequence[ArgSpec],
                 address: int, read_only: Sequence[int] = ()) -> None:
        self.engine = engine
        self.name = name
        self.read_only = frozenset(read_only)
        self.inputs = tuple(inputs)
        self.results = tuple(results)
        for i, spec in enumerate(self.inputs + self.results):
            if spec.kind == "unsupported" or (
                    spec.kind in ("tensor", "memref")
                    and (spec.dtype is None or not spec.identity_layout)):
                what = "argument" if i < len(self.inputs) else "result"
                self._unsupported = (f"@{name}: {what} type {spec.type} is not "
                                     "supported by the Python calling "
                                     "convention")
                break
        else:
            self._unsupported = None

        argtypes: List[Any] = []
        self._result_struct: Optional[type] = None
        restype = None
        if len(self.results) == 1 and self.results[0].kind == "scalar":
            restype = _SCALAR_CTYPES.get(self.results[0].dtype)
        elif self.results:
            fields = []
            for i, spec in enumerate(self.results):
                if spec.kind == "scalar":
                    fields.append((f"r{i}", _SCALAR_CTYPES.get(spec.dtype,
                                                               ctypes.c_int64)))
                else:
                    fields.append((f"r{i}", memref_descriptor_type(spec.rank)))
            if len(self.results) == 1:
                self._result_struct = fields[0][1]
            else:
                self._result_struct = type("Results", (ctypes.Structure,),
                                           {"_fields_": fields})
            argtypes.append(ctypes.c_void_p)
        for spec in self.inputs:
            if spec.kind == "scalar":
                argtypes.append(_SCALAR_CTYPES.get(spec.dtype, ctypes.c_int64))
            else:
                argtypes.append(ctypes.c_void_p)
        self._cfunc = ctypes.CFUNCTYPE(restype, *argtypes)(address)

        # The native fast path: functions without results (destination
        # passing), through the packed interface of their C wrapper.
        self._native = None
        self._plan: Optional[bytes] = None
        self._packed = 0
        native = _capi.native_call_module()
        if (native is not None
                and native.PLAN_RECORD_SIZE == _PLAN_RECORD.size
                and not self._unsupported and not self.results):
            self._plan = _native_plan(self.inputs, self.read_only)
            self._packed = engine._packed_address(name)
            if self._plan is not None and self._packed:
                self._native = native.call

    @property
    def native(self) -> bool:
        """Whether calls take the native fast path (no results, arguments it
        describes, and the native module loaded:
        `_capi.native_call_module`)."""
        return self._native is not None

    def __repr__(self) -> str:
        ins = ", ".join(s.type for s in self.inputs)
        outs = ", ".join(s.type for s in self.results)
        return f"<JitFunction @{self.name}({ins}) -> ({outs})>"

    def _check_array(self, i: int, spec: ArgSpec, value: Any) -> np.ndarray:
        where = f"@{self.name} argument {i} ({spec.type})"
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{where}: expected a numpy array, got "
                            f"{type(value).__name__}")
        if value.dtype != spec.dtype:
            raise TypeError(f"{where}: expected dtype {spec.dtype}, got "
                            f"{value.dtype}")
        if value.ndim != spec.rank:
            raise ValueError(f"{where}: expected rank {spec.rank}, got an "
                             f"array of rank {value.ndim} with shape "
                             f"{value.shape}")
        assert spec.shape is not None
        for d, (want, got) in enumerate(zip(spec.shape, value.shape)):
            if want is not None and want != got:
                raise ValueError(f"{where}: dimension {d} must be {want}, got "
                                 f"shape {value.shape}")
        if not value.flags.c_contiguous:
            raise ValueError(f"{where}: the array is not C-contiguous (strides "
                             f"{value.strides}); pass np.ascontiguousarray(x)")
        if not value.flags.aligned:
            raise ValueError(f"{where}: the array is not aligned to its "
                             "element size")
        if (spec.kind == "memref" and not value.flags.writeable
                and i not in self.read_only):
            raise ValueError(f"{where}: memref arguments may be written, and "
                             "this array is read-only")
        return value

    def __call__(self, *args: Any) -> Any:
        # The native path calls only when every argument fits; otherwise the
        # checked path below raises the precise error (or calls).
        if self._native is not None and self._native(self._packed, self._plan,
                                                     args, np.ndarray):
            if self.engine.after_call is not None:
                self.engine.after_call()
            return None
        if self._unsupported:
            raise TypeError(self._unsupported)
        if len(args) != len(self.inputs):
            raise TypeError(f"@{self.name} takes {len(self.inputs)} arguments, "
                            f"got {len(args)}")
        keep: List[Any] = []
        cargs: List[Any] = []
        arrays: List[np.ndarray] = []
        for i, (spec, value) in enumerate(zip(self.inputs, args)):
            if spec.kind == "scalar":
                assert spec.dtype is not None
                ctype = _SCALAR_CTYPES.get(spec.dtype)
                if ctype is None:
                    raise TypeError(f"@{self.name} argument {i}: scalar type "
                                    f"{spec.type} is not supported")
                if spec.dtype.kind == "f":
                    if not isinstance(value, (int, float, np.integer,
                                              np.floating)):
                        raise TypeError(f"@{self.name} argument {i} "
                                        f"({spec.type}): expected a number")
                    cargs.append(float(value))
                else:
                    if not isinstance(value, (int, bool, np.integer,
                                              np.bool_)):
                        raise TypeError(f"@{self.name} argument {i} "
                                        f"({spec.type}): expected an integer")
                    cargs.append(int(value))
                continue
            array = self._check_array(i, spec, value)
            arrays.append(array)
            desc = _descriptor_for(array)
            keep.append(desc)
            cargs.append(ctypes.addressof(desc))

        results = None
        if self._result_struct is not None:
            results = self._result_struct()
            cargs.insert(0, ctypes.addressof(results))
        ret = self._cfunc(*cargs)
        del keep

        if not self.results:
            converted = None
        elif results is None:
            converted = ret
        elif len(self.results) == 1:
            converted = self._convert_result(self.results[0], results, arrays,
                                             {})
        else:
            owners: Dict[int, _ResultBuffer] = {}
            converted = tuple(
                self._convert_result(spec, getattr(results, f"r{i}"), arrays,
                                     owners)
                for i, spec in enumerate(self.results))
        # After the conversion, so that results the compiled code allocated
        # are owned (and freed) even when this raises.
        if self.engine.after_call is not None:
            self.engine.after_call()
        return converted

    def _convert_result(self, spec: ArgSpec, value: Any,
                        inputs: Sequence[np.ndarray],
                        owners: Dict[int, "_ResultBuffer"]) -> Any:
        if spec.kind == "scalar":
            return value
        assert spec.dtype is not None
        desc = value
        itemsize = spec.dtype.itemsize
        rank = spec.rank
        shape = tuple(desc.sizes[i] for i in range(rank)) if rank else ()
        strides = tuple(desc.strides[i] * itemsize
                        for i in range(rank)) if rank else ()
        allocated = desc.allocated or 0
        data = (desc.aligned or 0) + desc.offset * itemsize
        interface = {"version": 3, "shape": shape, "typestr": spec.dtype.str,
                     "data": (data, False), "strides": strides}
        if 0 in shape:
            if allocated and allocated != _GLOBAL_SENTINEL and not any(
                    _within(allocated, a) for a in inputs):
                self.engine.free(allocated)
            return np.empty(shape, spec.dtype)
        aliases = (allocated == _GLOBAL_SENTINEL or not allocated
                   or any(_within(allocated, a) for a in inputs))
        if aliases:
            # Memory the caller or the module owns: copy out.
            return np.array(_ResultBuffer(interface, None), copy=True)
        if allocated in owners:
            owner = owners[allocated]
            view = _ResultBuffer(interface, None)
            view.owner = owner  # type: ignore[attr-defined]
            return np.asarray(view)
        owner = _ResultBuffer(interface, allocated, self.engine.free)
        owners[allocated] = owner
        return np.asarray(owner)


def _within(pointer: int, array: np.ndarray) -> bool:
    start = array.__array_interface__["data"][0]
    return start <= pointer < start + max(array.nbytes, 1)


#===------------------------------------------------------------------------===#
# Functions on device buffers
#===------------------------------------------------------------------------===#


class DeviceArray(NamedTuple):
    """A dense row-major array in GPU memory, as a function compiled with
    device buffers takes it: its address, its sizes, and its element type as
    MLIR spells it (``"f16"``, ``"bf16"``, ``"f32"``, ``"f64"``, ...)."""

    pointer: int
    shape: Tuple[int, ...]
    element: str


def _element_name(spec: ArgSpec) -> str:
    """The element type of a shaped type as printed: ``tensor<2x?xbf16>`` ->
    ``bf16``."""
    inner = spec.type[spec.type.index("<") + 1:spec.type.rindex(">")]
    return inner.split(",")[0].split("x")[-1]


class DeviceFunction:
    """A public function of an `ExecutionEngine` lowered with
    ``device-buffers=true`` (docs/UsingLinAttn.md, "device buffers and the
    caller's stream"): it takes the caller's device memory for its tensor
    arguments and results and a stream, and only enqueues kernels on that
    stream. Called as ``f(inputs, outputs, stream)`` with `DeviceArray`
    sequences; returns nothing (the outputs are ready when the stream gets
    there)."""

    def __init__(self, engine: "ExecutionEngine", name: str,
                 inputs: Sequence[ArgSpec], results: Sequence[ArgSpec],
                 address: int) -> None:
        self.engine = engine
        self.name = name
        self.inputs = tuple(inputs)
        self.results = tuple(results)
        self._unsupported = next(
            (f"@{name}: {spec.type} is not supported by the device-buffer "
             "calling convention (tensors only)"
             for spec in self.inputs + self.results if spec.kind != "tensor"),
            None)
        count = len(self.inputs) + len(self.results) + 1
        self._cfunc = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * count)(address)

    def __repr__(self) -> str:
        ins = ", ".join(s.type for s in self.inputs)
        outs = ", ".join(s.type for s in self.results)
        return f"<DeviceFunction @{self.name}({ins}) -> ({outs})>"

    def _check(self, what: str, i: int, spec: ArgSpec, value: Any) -> None:
        where = f"@{self.name} {what} {i} ({spec.type})"
        if not isinstance(value, DeviceArray):
            raise TypeError(f"{where}: expected a DeviceArray, got "
                            f"{type(value).__name__}")
        if value.element != _element_name(spec):
            raise TypeError(f"{where}: expected element type "
                            f"{_element_name(spec)}, got {value.element}")
        assert spec.shape is not None
        if len(value.shape) != spec.rank or any(
                want is not None and want != got
                for want, got in zip(spec.shape, value.shape)):
            raise ValueError(f"{where}: got shape {tuple(value.shape)}")
        if not value.pointer:
            raise ValueError(f"{where}: null pointer")

    def __call__(self, inputs: Sequence[DeviceArray],
                 outputs: Sequence[DeviceArray], stream: int) -> None:
        if self._unsupported:
            raise TypeError(self._unsupported)
        if len(inputs) != len(self.inputs) or len(outputs) != len(self.results):
            raise TypeError(f"@{self.name} takes {len(self.inputs)} inputs and "
                            f"{len(self.results)} outputs, got {len(inputs)} "
                            f"and {len(outputs)}")
        keep = []
        for what, specs, values in (("argument", self.inputs, inputs),
                                    ("result", self.results, outputs)):
            for i, (spec, value) in enumerate(zip(specs, values)):
                self._check(what, i, spec, value)
                desc = memref_descriptor_type(spec.rank)()
                desc.allocated = desc.aligned = value.pointer
                desc.offset = 0
                stride = 1
                for d in reversed(range(spec.rank)):
                    desc.sizes[d] = value.shape[d]
                    desc.strides[d] = stride
                    stride *= value.shape[d]
                keep.append(desc)
        self._cfunc(*[ctypes.addressof(d) for d in keep],
                    ctypes.c_void_p(stream))
        if self.engine.after_call is not None:
            self.engine.after_call()


#===------------------------------------------------------------------------===#
# Execution engine
#===------------------------------------------------------------------------===#


class ExecutionEngine:
    """Lowers a module with a pass pipeline and JIT-compiles it for the host.

    Args:
      module: a `Module` (left unchanged: a copy is lowered) or MLIR text.
      pipeline: the lowering pipeline, ending in the LLVM dialect.
      opt_level: LLVM optimization level (0-3).
      shared_libs: libraries the compiled code may call; default
        `default_shared_libs()` (MLIR's C runner utilities, OpenMP).
      context: the context to parse text in (default: the shared one).
      after_call: called after every call of a compiled function, once its
        results are converted; what it raises reaches the caller (the GPU
        backends raise the failures their runtime recorded).
      symbols: addresses of functions the compiled code calls, by name,
        bound to this engine before the shared libraries are searched. The
        GPU backends bind the ``mgpu*`` functions to their runtime this way,
        so that two runtimes defining them can serve two engines of one
        process.
      device_buffers: the pipeline lowers with the device-buffer calling
        convention (``linattn-lower-to-nvvm{device-buffers=true}``): the
        functions are called through `device_function`, not `function`.
      host_allocator: ``"caching"`` (default): the compiled code's
        ``malloc``, ``aligned_alloc`` and ``free`` are linattn's caching host
        allocator, and results' buffers return to it (see the module
        documentation); ``"system"``: the C library's. `symbols` may still
        rebind any of the three names.

    Raises `MLIRError` (with MLIR's diagnostics) when the module does not
    parse, the pipeline fails or the module cannot be translated to LLVM IR.
    """

    def __init__(self, module: Union[Module, str], *,
                 pipeline: str = "linattn-lower-to-cpu", opt_level: int = 3,
                 shared_libs: Optional[Sequence[Union[str, os.PathLike]]] = None,
                 context: Optional[Context] = None,
                 after_call: Optional[Callable[[], None]] = None,
                 symbols: Optional[Mapping[str, int]] = None,
                 device_buffers: bool = False,
                 host_allocator: str = "caching") -> None:
        if not 0 <= opt_level <= 3:
            raise ValueError(f"opt_level must be 0 to 3, got {opt_level}")
        if host_allocator not in HOST_ALLOCATORS:
            raise ValueError(f"host_allocator must be one of "
                             f"{', '.join(map(repr, HOST_ALLOCATORS))}, got "
                             f"{host_allocator!r}")
        if isinstance(module, str):
            module = Module.parse(module, context or default_context())
        elif not isinstance(module, Module):
            raise TypeError("module must be a linattn.ir.Module or MLIR text")
        self.context = module.context
        self.pipeline = pipeline
        self.after_call = after_call
        self.device_buffers = device_buffers
        self.host_allocator = host_allocator
        libs = [str(p) for p in (default_shared_libs() if shared_libs is None
                                 else shared_libs)]
        for path in libs:
            if not os.path.isfile(path):
                raise FileNotFoundError(f"shared library {path} does not exist")
        self.shared_libs = tuple(libs)

        c = lib()
        self._lib = c
        lowered = module.clone()
        self._signatures: Dict[str, Tuple[List[ArgSpec], List[ArgSpec]]] = {}
        writable = MlirStringRef.of(b"bufferization.writable")
        with self.context.capture():
            false_attr = c.mlirBoolAttrGet(self.context.handle, 0)
            for name, op in lowered._func_ops():
                if not lowered._is_public(op):
                    continue
                ftype = lowered._function_type(op)
                ins = [_arg_spec(c.mlirFunctionTypeGetInput(ftype, i))
                       for i in range(c.mlirFunctionTypeGetNumInputs(ftype))]
                outs = [_arg_spec(c.mlirFunctionTypeGetResult(ftype, i))
                        for i in range(c.mlirFunctionTypeGetNumResults(ftype))]
                self._signatures[name] = (ins, outs)
                for i, spec in enumerate(ins):
                    if spec.kind == "tensor":
                        c.mlirFuncSetArgAttr(op, i, writable, false_attr)
        lowered.run_pipeline(pipeline)
        self.lowered_module = lowered
        """The module after the pipeline (LLVM dialect)."""

        with self.context.capture() as cap:
            if not c.linattnVerifyRunsOnHost(lowered.handle):
                raise cap.fail("the module cannot run on this host's CPU")

        refs = (MlirStringRef * max(len(libs), 1))()
        encoded = [p.encode() for p in libs]
        for i, data in enumerate(encoded):
            refs[i] = MlirStringRef.of(data)
        with self.context.capture() as cap:
            handle = c.mlirExecutionEngineCreate(lowered.handle, opt_level,
                                                 len(libs), refs, False, False)
            if is_null(handle):
                raise cap.fail("cannot JIT-compile the module (translation "
                               "to LLVM IR or code generation failed)")
        self._handle = handle
        own = _host_allocator_symbols() if host_allocator == "caching" else {}
        bound = {**own, **(symbols or {})}
        # Before initialization, which runs the module's constructors (the
        # GPU binaries' loads among them).
        for name, address in bound.items():
            c.mlirExecutionEngineRegisterSymbol(
                handle, MlirStringRef.of(name.encode()), ctypes.c_void_p(address))
        c.mlirExecutionEngineInitialize(handle)
        self._addresses: Dict[str, int] = {}
        self.free: Callable[[int], None] = (
            c.linattnHostFree if own and bound["free"] == own["free"]
            else _libc.free)
        """Releases a buffer the compiled code allocated."""

    @property
    def function_names(self) -> List[str]:
        """The public functions that can be called."""
        return list(self._signatures)

    def _address(self, name: str) -> int:
        address = self._addresses.get(name)
        if address is None:
            if name not in self._signatures:
                known = ", ".join("@" + n for n in self._signatures) or "none"
                raise KeyError(f"no public function @{name} in the module "
                               f"(public functions: {known})")
            symbol = f"_mlir_ciface_{name}".encode()
            address = self._lib.mlirExecutionEngineLookup(
                self._handle, MlirStringRef.of(symbol))
            if not address:
                raise MLIRError(f"@{name} has no C interface wrapper "
                                f"(_mlir_ciface_{name}) in the compiled "
                                "module; lower with c-interface enabled")
            self._addresses[name] = address
        return address

    def _packed_address(self, name: str) -> int:
        """The address of the packed interface of @name's C wrapper
        (``void _mlir__mlir_ciface_<name>(void **args)``), 0 if none."""
        symbol = f"_mlir__mlir_ciface_{name}".encode()
        return self._lib.mlirExecutionEngineLookup(
            self._handle, MlirStringRef.of(symbol)) or 0

    def function(self, name: str, *, read_only: Sequence[int] = ()
                 ) -> JitFunction:
        """The compiled public function `name` (it keeps the engine alive).

        Memref arguments may be written by the function, so read-only arrays
        are refused for them, except at the positions in `read_only`, which
        the caller knows the function only reads."""
        if self.device_buffers:
            raise TypeError("this module was lowered with device buffers: "
                            "call its functions through device_function()")
        address = self._address(name)
        ins, outs = self._signatures[name]
        return JitFunction(self, name, ins, outs, address, read_only)

    def device_function(self, name: str) -> DeviceFunction:
        """The compiled public function `name` of a module lowered with
        device buffers (it keeps the engine alive)."""
        if not self.device_buffers:
            raise TypeError("this module was lowered for host arrays: call "
                            "its functions through function()")
        address = self._address(name)
        ins, outs = self._signatures[name]
        return DeviceFunction(self, name, ins, outs, address)

    def invoke(self, name: str, *args: Any) -> Any:
        """Calls the public function `name` with `args` (see the module
        documentation): None, one result, or a tuple of results."""
        return self.function(name)(*args)

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._handle = None
            self._lib.mlirExecutionEngineDestroy(handle)
