"""backend="cuda" on a machine of two GPUs of different chips (the fake CUDA
driver of test/FakeCuda with LINATTN_FAKE_CUDA_CC=9.0,7.5): a call runs on
the device whose context is current on the calling thread (device 0's
primary context without one; device 1's made current here, as a framework
does for its tensors' device), and each chip gets code of its own, which
the compile cache keeps apart: on the sm_90 the f16 scan takes the
tensor-core kernel, on the sm_75, which has none of its instructions, the
recurrent kernel."""

import ctypes

import numpy as np

import linattn
from linattn.backends import GPURuntimeError

cuda = ctypes.CDLL("libcuda.so.1")
rng = np.random.default_rng(0)
q, k, v = (rng.random((1, 2, 20, 16), dtype=np.float32).astype(np.float16)
           for _ in range(3))


def call(what):
    try:
        out = linattn.linear_attention(q, k, v, backend="cuda")
        result = f"{out.shape} {out.dtype}"
    except GPURuntimeError as e:
        result = f"GPURuntimeError: {e}"
    info = linattn.cache_info()
    print(f"{what}: {result}; compiled {info.misses}, reused {info.hits}",
          flush=True)


call("device 0")
context = ctypes.c_void_p()
cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), 1)
cuda.cuCtxSetCurrent(context)
call("device 1")
call("device 1 again")
cuda.cuCtxSetCurrent(None)
call("device 0 again")
