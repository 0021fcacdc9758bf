"""Where compiled kernels run: the ``backend=`` argument of the high-level API.

A backend turns a module of linattn ops on memrefs (the destination-passing
functions `linattn.attention` generates) into callable functions. ``"cpu"``
lowers with ``linattn-lower-to-cpu`` and JIT-compiles for the host.
``"cuda"`` is the hook for the NVIDIA path: it raises `BackendUnavailable`
until a CUDA lowering and runtime are wired in; a GPU backend registers itself
with `register_backend` and overrides `Backend.compile`.
"""

from __future__ import annotations

from typing import Dict, List

from .jit import ExecutionEngine, default_shared_libs

__all__ = [
    "Backend",
    "BackendUnavailable",
    "CPUBackend",
    "CUDABackend",
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

    def compile(self, module_text: str) -> ExecutionEngine:
        """Lowers and compiles `module_text`; the result's `function(name)`
        gives callables taking numpy arrays."""
        self.check_available()
        return ExecutionEngine(module_text, pipeline=self.pipeline,
                               shared_libs=self.shared_libs())


class CPUBackend(Backend):
    """The host CPU: ``linattn-lower-to-cpu`` and MLIR's ExecutionEngine."""

    name = "cpu"
    pipeline = "linattn-lower-to-cpu"


def _cuda_driver_present() -> bool:
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


class CUDABackend(Backend):
    """NVIDIA GPUs. Not wired into the Python package yet: the GPU lowering
    and its runtime are built separately; this class is where they plug in
    (override `pipeline`, `shared_libs` and `check_available`)."""

    name = "cuda"
    pipeline = "linattn-lower-to-nvvm"

    def check_available(self) -> None:
        driver = ("a CUDA driver is present" if _cuda_driver_present() else
                  "no CUDA driver (libcuda.so.1) was found on this machine")
        raise BackendUnavailable(
            "backend='cuda' is not available in this build of the linattn "
            f"Python package ({driver}); the Python package runs kernels on "
            "the CPU only for now: use backend='cpu'")


_BACKENDS: Dict[str, Backend] = {"cpu": CPUBackend(), "cuda": CUDABackend()}


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
