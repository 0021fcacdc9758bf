"""backend="cuda" of the Python package on the real runtime library over the
fake CUDA driver (test/FakeCuda; LD_LIBRARY_PATH names it): the backend is
available, compiles for the device's compute capability, raises the
runtime's failure as GPURuntimeError and runs the next call normally (the
failure was cleared, so the runtime launches again), and leaves a failure on
another thread to that thread. The fake runs no kernels: the values are not
checked, the driver's log is."""

import ctypes
import threading

import numpy as np

import linattn
from linattn.backends import GPURuntimeError, get_backend

backend = get_backend("cuda")
runtime = backend.runtime()
print("available:", "cuda" in linattn.available_backends())
print("device:", runtime.device_name())
print("options:", backend.pipeline_options(runtime))

rng = np.random.default_rng(0)
q, k, v = (rng.random((1, 2, 20, 8), dtype=np.float32) for _ in range(3))
for call in ("first", "second"):
    try:
        out = linattn.linear_attention(q, k, v, backend="cuda")
        print(f"{call} call: {out.shape} {out.dtype}")
    except GPURuntimeError as e:
        print(f"{call} call: GPURuntimeError: {e}")

# A failure recorded on another thread (a kernel looked up in a module that
# failed to load) is neither raised by this thread's call nor cleared by it.
lookup = runtime.lib.mgpuModuleGetFunction
lookup.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lookup.restype = ctypes.c_void_p
recorded, called = threading.Event(), threading.Event()
seen = {}


def other_thread():
    lookup(None, b"missing_kernel")
    recorded.set()
    called.wait()
    seen["failure"] = runtime.take_error()


thread = threading.Thread(target=other_thread)
thread.start()
recorded.wait()
try:
    out = linattn.linear_attention(q, k, v, backend="cuda")
    print(f"call beside a failed thread: {out.shape} {out.dtype}")
except GPURuntimeError as e:
    print(f"call beside a failed thread: GPURuntimeError: {e}")
called.set()
thread.join()
print("the other thread's failure:", seen["failure"])
