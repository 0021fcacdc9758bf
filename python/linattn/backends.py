"""Where compiled kernels run: the ``backend=`` argument of the high-level API.

A backend turns a module of linattn ops on memrefs (the destination-passing
functions `linattn.attention` generates) into callable functions:

* ``"cpu"``: ``linattn-lower-to-cpu``, JIT-compiled for the host;
* ``"cuda"``: ``linattn-lower-to-nvvm`` for the first NVIDIA GPU (its compute
  capability picks the chip; ptxas from the CUDA toolkit builds the cubin),
  host code JIT-compiled around it that copies the numpy arrays to the
  device, launches the kernels and copies the results back, through
  ``liblinattn_cuda_runtime.so``;
* ``"gpu-emulator"``: the same kernels, embedded as MLIR and interpreted on
  the CPU by ``liblinattn_gpu_emulator.so``, which aborts the process on
  anything a GPU would do wrong or leave undefined (races, out-of-bounds
  accesses). Slow: for tests of the GPU path without a GPU.

Failures the GPU runtime records during a call (a launch error, a device out
of memory) raise `GPURuntimeError` after the call. Other backends install
themselves with `register_backend`.
"""

from __future__ import annotations

import ctypes
import pathlib
import threading
from typing import Dict, Hashable, List, Optional, Sequence, Tuple

from ._capi import find_library
from .jit import ExecutionEngine, default_shared_libs

__all__ = [
    "Backend",
    "BackendUnavailable",
    "CPUBackend",
    "CUDABackend",
    "GPUEmulatorBackend",
    "GPURuntimeError",
    "available_backends",
    "get_backend",
    "register_backend",
]


class BackendUnavailable(NotImplementedError):
    """The requested backend cannot run on this machine or in this build."""


class Backend:
    """A compilation target for the high-level API."""

    name: str = ""
    pipeline: str = ""

    def check_available(self) -> None:
        """Raises `BackendUnavailable`, saying why, when the backend cannot be
        used."""

    def shared_libs(self) -> List[str]:
        """Libraries the compiled code may call."""
        return default_shared_libs()

    def cache_key(self) -> Tuple[Hashable, ...]:
        """What code `compile` would make on this thread depends on besides
        the module and the options: part of the compile cache's keys."""
        return ()

    def compile(self, module_text: str, *, device_buffers: bool = False,
                options: Sequence[str] = ()) -> ExecutionEngine:
        """Lowers and compiles `module_text`; the result's `function(name)`
        gives callables taking numpy arrays. With `device_buffers` (GPU
        backends only) its functions take device memory and a stream
        instead (`ExecutionEngine.device_function`). `options` are
        ``name=value`` options of `pipeline`, after the backend's own."""
        self.check_available()
        if device_buffers:
            raise BackendUnavailable(f"backend={self.name!r} does not run on "
                                     "device memory")
        return ExecutionEngine(module_text,
                               pipeline=_pipeline_text(self.pipeline, options),
                               shared_libs=self.shared_libs())


def _pipeline_text(pipeline: str, options: Sequence[str]) -> str:
    """`pipeline` with `options` (``name=value``), as MLIR parses it."""
    return pipeline + ("{" + " ".join(options) + "}" if options else "")


class CPUBackend(Backend):
    """The host CPU: ``linattn-lower-to-cpu`` and MLIR's ExecutionEngine."""

    name = "cpu"
    pipeline = "linattn-lower-to-cpu"


# The runtime API of MLIR's GPU lowering (gpu-to-llvm and the translation
# of gpu.binary and gpu.launch_func): every linattn GPU runtime defines it.
MGPU_FUNCTIONS = (
    "mgpuEventCreate", "mgpuEventDestroy", "mgpuEventRecord",
    "mgpuEventSynchronize", "mgpuLaunchClusterKernel", "mgpuLaunchKernel",
    "mgpuMemAlloc", "mgpuMemFree", "mgpuMemHostRegister",
    "mgpuMemHostRegisterMemRef", "mgpuMemHostUnregister",
    "mgpuMemHostUnregisterMemRef", "mgpuMemcpy", "mgpuMemset16", "mgpuMemset32",
    "mgpuModuleGetFunction", "mgpuModuleLoad", "mgpuModuleLoadJIT",
    "mgpuModuleUnload", "mgpuSetDefaultDevice", "mgpuStreamCreate",
    "mgpuStreamDestroy", "mgpuStreamSynchronize", "mgpuStreamWaitEvent")


class GPURuntimeError(RuntimeError):
    """The GPU runtime recorded a failure during a call."""


class _GPURuntime:
    """A linattn GPU runtime library (the CUDA one or the emulator), loaded
    with ctypes for its extras (include/linattn/Runtime/CudaRuntime.h): the
    device, and the failures it records. The compiled code loads the same
    file, so both see one runtime."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        lib = ctypes.CDLL(str(path))
        lib.linattnCudaGetLastError.restype = ctypes.c_char_p
        lib.linattnCudaGetDeviceCount.restype = ctypes.c_int
        lib.linattnCudaGetDeviceName.argtypes = [ctypes.c_char_p, ctypes.c_int]
        lib.linattnCudaGetComputeCapability.argtypes = [
            ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
        lib.linattnCudaGetMultiprocessorCount.argtypes = [
            ctypes.POINTER(ctypes.c_int)]
        self.lib = lib

    def take_error(self) -> Optional[str]:
        """The failure recorded on the calling thread, if any, which is then
        forgotten (each thread has its own)."""
        error = self.lib.linattnCudaGetLastError()
        if not error:
            return None
        self.lib.linattnCudaClearLastError()
        return error.decode(errors="replace")

    def device_count(self) -> int:
        return self.lib.linattnCudaGetDeviceCount()

    def device_name(self) -> str:
        name = ctypes.create_string_buffer(256)
        if self.lib.linattnCudaGetDeviceName(name, len(name)) != 0:
            raise GPURuntimeError(self.take_error() or "cannot read the device name")
        return name.value.decode(errors="replace")

    def compute_capability(self) -> Tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        if self.lib.linattnCudaGetComputeCapability(ctypes.byref(major),
                                                    ctypes.byref(minor)) != 0:
            raise GPURuntimeError(self.take_error()
                                  or "cannot read the compute capability")
        return major.value, minor.value

    def multiprocessor_count(self) -> int:
        count = ctypes.c_int()
        if self.lib.linattnCudaGetMultiprocessorCount(ctypes.byref(count)) != 0:
            raise GPURuntimeError(self.take_error()
                                  or "cannot read the multiprocessor count")
        return count.value

    def entry_points(self) -> Dict[str, int]:
        """The addresses of the library's `MGPU_FUNCTIONS`."""
        return {name: ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value
                for name in MGPU_FUNCTIONS}

    def check(self) -> None:
        """Raises `GPURuntimeError` with the failure recorded on the calling
        thread since its last check, if one was."""
        error = self.take_error()
        if error:
            raise GPURuntimeError(f"the GPU runtime failed: {error}")


class _GPUBackend(Backend):
    """A backend over ``linattn-lower-to-nvvm`` and a linattn GPU runtime
    library found beside libLinAttnCAPI.so (``build/lib``, or the installed
    package's ``_lib``)."""

    library_name = ""

    def __init__(self) -> None:
        self._runtime: Optional[_GPURuntime] = None
        self._lock = threading.RLock()

    def library_path(self) -> pathlib.Path:
        """The runtime library; raises `BackendUnavailable` where this build
        has none."""
        path = find_library().parent / self.library_name
        if not path.is_file():
            raise BackendUnavailable(
                f"backend={self.name!r} is not available: this build has no "
                f"{self.library_name} (looked for {path})")
        return path

    def runtime(self) -> _GPURuntime:
        with self._lock:
            if self._runtime is None:
                path = self.library_path()
                try:
                    self._runtime = _GPURuntime(path)
                except (OSError, AttributeError) as e:
                    raise BackendUnavailable(
                        f"backend={self.name!r} is not available: cannot load "
                        f"{path}: {e}") from None
            return self._runtime

    def compile(self, module_text: str, *, device_buffers: bool = False,
                options: Sequence[str] = ()) -> ExecutionEngine:
        # The runtime is not among the shared libraries: its mgpu* functions
        # are bound to this engine alone, since the other GPU runtimes
        # define the same names (a process may use several backends).
        self.check_available()
        runtime = self.runtime()
        runtime.take_error()  # not this module's
        own = self.pipeline_options(runtime)
        if device_buffers:
            own.append("device-buffers=true")
        engine = ExecutionEngine(
            module_text,
            pipeline=_pipeline_text(self.pipeline, own + list(options)),
            shared_libs=self.shared_libs(),
            after_call=runtime.check, symbols=runtime.entry_points(),
            device_buffers=device_buffers)
        # The module's constructors loaded its kernel images on this thread:
        # a failure there (the PTX JIT's, say) is raised now.
        runtime.check()
        return engine

    def pipeline_options(self, runtime: _GPURuntime) -> List[str]:
        """The options of `pipeline` for this runtime's device."""
        return []


# The blocks per SM the scans' grids aim at (linattn-lower-to-nvvm's
# sequence-parallel-blocks, 264 for an H100's 132 SMs): below half as many
# batch-parallel blocks, the sequence splits into segments.
SEQUENCE_PARALLEL_BLOCKS_PER_SM = 2


class CUDABackend(_GPUBackend):
    """NVIDIA GPUs, through linattn's CUDA runtime (the driver API; ptxas
    from the CUDA toolkit at compile time). Calls run on the device whose
    context is current on the calling thread (a framework's), else on the
    first GPU; code is compiled for each device's chip and number of SMs
    (the scans' ``sequence-parallel-blocks``: two blocks per SM, the
    pipeline's default on an H100's 132)."""

    name = "cuda"
    pipeline = "linattn-lower-to-nvvm"
    library_name = "liblinattn_cuda_runtime.so"

    def __init__(self) -> None:
        super().__init__()
        self._checked = False
        self._unavailable: Optional[str] = None

    def check_available(self) -> None:
        with self._lock:
            if not self._checked:
                self._unavailable = self._why_unavailable()
                self._checked = True
        if self._unavailable:
            raise BackendUnavailable(
                f"backend='cuda' is not available: {self._unavailable}; "
                "backend='gpu-emulator' runs the same kernels on the CPU")

    def _why_unavailable(self) -> Optional[str]:
        """Why there is no device, or None. The driver and the device are
        looked for once per process; without a driver the runtime is not
        asked (it would print why on stderr)."""
        try:
            ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            return f"no CUDA driver ({e})"
        runtime = self.runtime()
        if runtime.device_count() <= 0:
            return "no CUDA device (" + (runtime.take_error()
                                         or "the CUDA driver sees none") + ")"
        return None

    def pipeline_options(self, runtime: _GPURuntime) -> List[str]:
        # compile_options come after these: a sequence-parallel-blocks of
        # the caller's replaces the device's.
        chip, sms = self._device(runtime)
        return [f"chip={chip}",
                f"sequence-parallel-blocks={SEQUENCE_PARALLEL_BLOCKS_PER_SM * sms}"]

    def cache_key(self) -> Tuple[Hashable, ...]:
        # The device of the calling thread's context (torch's for its
        # tensors' device): GPUs of different chips or SM counts need their
        # own code.
        self.check_available()
        return self._device(self.runtime())

    @staticmethod
    def _device(runtime: _GPURuntime) -> Tuple[str, int]:
        """The chip and SMs of the device calls on this thread run on."""
        major, minor = runtime.compute_capability()
        return f"sm_{major}{minor}", runtime.multiprocessor_count()


class GPUEmulatorBackend(_GPUBackend):
    """The GPU kernels interpreted on the CPU (liblinattn_gpu_emulator.so):
    what ``"cuda"`` would run, checked for races and out-of-bounds accesses,
    without a GPU."""

    name = "gpu-emulator"
    pipeline = "linattn-lower-to-nvvm"
    library_name = "liblinattn_gpu_emulator.so"

    def pipeline_options(self, runtime: _GPURuntime) -> List[str]:
        return ["emulate=true"]

    def check_available(self) -> None:
        # The library is loaded on the first compile, not to list backends.
        self.library_path()


_BACKENDS: Dict[str, Backend] = {"cpu": CPUBackend(), "cuda": CUDABackend(),
                                 "gpu-emulator": GPUEmulatorBackend()}


def register_backend(backend: Backend) -> None:
    """Makes `backend` available as ``backend=backend.name`` (replacing any
    backend of that name)."""
    if not backend.name:
        raise ValueError("a backend needs a name")
    _BACKENDS[backend.name] = backend


def get_backend(name: str) -> Backend:
    """The backend called `name`; raises ValueError for an unknown name."""
    if not isinstance(name, str) or name not in _BACKENDS:
        raise ValueError(f"unknown backend {name!r}; known: "
                         + ", ".join(repr(n) for n in _BACKENDS))
    return _BACKENDS[name]


def available_backends() -> List[str]:
    """The names of the backends that can run here."""
    names = []
    for name, backend in _BACKENDS.items():
        try:
            backend.check_available()
        except BackendUnavailable:
            continue
        names.append(name)
    return names
