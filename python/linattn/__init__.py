"""linattn: compile and run linear attention kernels on numpy arrays.

High level:

* `linear_attention` -- causal or not, normalized or not, any feature map,
  cross-attention and Dv != D, on [B, H, N, D] float16/float32/float64 arrays;
* `linear_attention_grad` -- its backward pass: dq, dk, dv from dL/dO, for
  training;
* `RecurrentState` -- step-by-step decoding with the (S, z) state;
* `linear_attention_device`, `recurrent_device` -- the same on GPU memory
  (`DeviceArray`s) and a stream, for frameworks (``linattn.torch`` on CUDA
  tensors);
* `cache_info`, `clear_cache` -- the compile cache;
* ``backend=``: ``"cpu"``, ``"cuda"`` (an NVIDIA GPU) or ``"gpu-emulator"``
  (the GPU kernels interpreted on the CPU); `available_backends`.

Low level (`linattn.ir`, `linattn.jit`): parse, verify and print MLIR
modules, run pass pipelines (MLIR diagnostics become `MLIRError`), and
JIT-compile modules for the CPU to call their functions with numpy arrays.

`linattn.reference` holds plain numpy definitions; `linattn.torch` takes and
returns PyTorch tensors (CPU, or CUDA without copies) when torch is
installed.
"""

from ._version import __version__
from ._capi import LibraryNotFoundError, find_library
from .attention import (CacheInfo, RecurrentState, cache_info, clear_cache,
                        linear_attention, linear_attention_device,
                        linear_attention_grad, linear_attention_grad_device,
                        recurrent_device)
from .backends import BackendUnavailable, available_backends
from .ir import Context, Diagnostic, MLIRError, MLIRWarning, Module, PassManager
from .jit import (DeviceArray, ExecutionEngine, HostCacheStats,
                  host_cache_stats, release_host_cache, set_host_cache_limit)

__all__ = [
    "BackendUnavailable",
    "CacheInfo",
    "Context",
    "DeviceArray",
    "Diagnostic",
    "ExecutionEngine",
    "HostCacheStats",
    "LibraryNotFoundError",
    "MLIRError",
    "MLIRWarning",
    "Module",
    "PassManager",
    "RecurrentState",
    "__version__",
    "available_backends",
    "cache_info",
    "clear_cache",
    "find_library",
    "host_cache_stats",
    "linear_attention",
    "linear_attention_device",
    "linear_attention_grad",
    "linear_attention_grad_device",
    "recurrent_device",
    "release_host_cache",
    "set_host_cache_limit",
]
