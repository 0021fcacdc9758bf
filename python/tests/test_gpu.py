"""The GPU backends: the kernels of linattn-lower-to-nvvm called on numpy
arrays, checked against float64 on the GPU emulator (``gpu-emulator``, on
every machine) and on a GPU (``cuda``, skipped without one)."""

import ctypes
import os
import random
import re

import numpy as np
import pytest

import linattn
from linattn import RecurrentState
from linattn import reference as ref
from linattn import backends
from linattn.backends import (CUDABackend, GPUEmulatorBackend, GPURuntimeError,
                              get_backend, register_backend)

from conftest import needs_emulator, normalized_cancellation, rand, rel_err

# f16 data takes the tensor-core kernels for causal scans and non-causal
# linear forms (products exact in f32, the state in f32), f32 the strict-fp32
# ones, f64 the f64 ones; f16's bound is two units in the last place at 1, as
# on the CPU.
TOL = {np.float16: 2e-3, np.float32: 2e-5, np.float64: 1e-12}


def gpu_backends():
    out = [pytest.param("gpu-emulator", marks=needs_emulator)]
    skip = pytest.mark.skipif("cuda" not in linattn.available_backends(),
                              reason="no CUDA device")
    out.append(pytest.param("cuda", marks=skip))
    return out


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("feature_map,causal,normalize", [
    ("elu", True, True), ("relu", True, False), ("elu", False, True),
    ("identity", False, False)])
def test_linear_attention(rng, backend, dtype, feature_map, causal, normalize):
    # N = 70 (not a multiple of any tile), Dv = 24 != D.
    b, h, n, d, dv = 2, 3, 70, 16, 24
    q, k = rand(rng, b, h, n, d, dtype=dtype), rand(rng, b, h, n, d, dtype=dtype)
    v = rand(rng, b, h, n, dv, dtype=dtype)
    if feature_map in ("identity", "relu"):
        q, k = np.abs(q), np.abs(k)
    got = linattn.linear_attention(q, k, v, feature_map=feature_map,
                                   causal=causal, normalize=normalize,
                                   backend=backend)
    assert got.dtype == dtype and got.shape == (b, h, n, dv)
    want = ref.linear_attention(q, k, v, feature_map=feature_map,
                                causal=causal, normalize=normalize)
    assert rel_err(got, want) <= TOL[dtype]


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("causal", [True, False])
def test_token_major_layout(rng, backend, dtype, causal):
    # [B, N, H, D] arrays, which the kernels read and write in place: f16
    # on the tensor-core kernels, f32 on the recurrent scan and the linear
    # form's scalar kernels.
    q, k, v = (rand(rng, 2, 3, 33, 16, dtype=dtype) for _ in range(3))
    swap = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3))
    got = linattn.linear_attention(swap(q), swap(k), swap(v), causal=causal,
                                   backend=backend, layout="bnhd")
    assert got.dtype == dtype and got.shape == (2, 33, 3, 16)
    want = swap(ref.linear_attention(q, k, v, causal=causal))
    assert rel_err(got, want) <= TOL[dtype]


@pytest.mark.parametrize("backend", gpu_backends())
def test_cross_attention_and_out(rng, backend):
    # Not causal, M != N, written into `out`.
    q = rand(rng, 1, 2, 33, 8)
    k, v = rand(rng, 1, 2, 50, 8), rand(rng, 1, 2, 50, 5)
    out = np.full((1, 2, 33, 5), np.nan, np.float32)
    got = linattn.linear_attention(q, k, v, causal=False, backend=backend,
                                   out=out)
    assert got is out
    assert rel_err(out, ref.linear_attention(q, k, v, causal=False)) <= 2e-5


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_decode_equals_full_scan(rng, backend, dtype):
    # A prompt through the scan, then token by token.
    b, h, n, d, dv = 2, 3, 40, 16, 12
    q, k = rand(rng, b, h, n, d, dtype=dtype), rand(rng, b, h, n, d, dtype=dtype)
    v = rand(rng, b, h, n, dv, dtype=dtype)
    state = RecurrentState(b, h, d, dv, dtype=dtype, backend=backend)
    prompt = state.update(*(np.ascontiguousarray(x[:, :, :31]) for x in (q, k, v)))
    outs = [state.step(*(np.ascontiguousarray(x[:, :, i]) for x in (q, k, v)))
            for i in range(31, n)]
    want, s, z = ref.causal_linear_attention_rnn(q, k, v)
    got = np.concatenate([prompt, np.stack(outs, axis=2)], axis=2)
    assert got.dtype == dtype and state.S.dtype == np.float32
    assert rel_err(got, want) <= TOL[dtype]
    assert rel_err(state.S, s) <= TOL[dtype] and rel_err(state.z, z) <= TOL[dtype]


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("dtype,options,tol", [
    # f32 causal scans on tf32 tensor cores (10-bit mantissas, f16's
    # bound in the GPU tests), instead of the strict-fp32 kernel.
    (np.float32, {"tf32": True}, 4e-3),
    # The same kernels with each product three tf32 products (tf32x3):
    # about f32's accuracy.
    (np.float32, {"tf32x3": True}, 2e-5),
    # The chunked kernel's shape: chunks of 32 tokens, value tiles of 8
    # columns (Dv = 24: three blocks per batch element).
    (np.float16, {"chunk-size": 32, "value-tile": 8}, 2e-3),
    # The recurrent kernel for f16 data.
    (np.float16, {"scan-kernel": "recurrent"}, 2e-3),
    # The strict-fp32 scan chunk by chunk on CUDA cores (simt-chunks).
    (np.float32, {"simt-chunks": True}, 2e-5),
])
def test_compile_options(rng, backend, dtype, options, tol):
    b, h, n, d, dv = 2, 3, 70, 16, 24
    q, k = rand(rng, b, h, n, d, dtype=dtype), rand(rng, b, h, n, d, dtype=dtype)
    v = rand(rng, b, h, n, dv, dtype=dtype)
    got = linattn.linear_attention(q, k, v, backend=backend,
                                   compile_options=options)
    assert rel_err(got, ref.linear_attention(q, k, v)) <= tol
    # The state's update takes them too.
    state = RecurrentState(b, h, d, dv, dtype=dtype, backend=backend,
                           compile_options=options)
    assert rel_err(state.update(q, k, v), got) <= tol


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("options", [{}, {"linear-kernel": "scalar"}])
def test_non_causal_kernels(rng, backend, options):
    # f16 non-causal attention: the linear form's tensor-core kernels by
    # default, the scalar ones on request; M != N, N not a multiple of a
    # chunk, Dv not a multiple of a value tile.
    b, h, n, m, d, dv = 2, 3, 70, 90, 32, 40
    q = rand(rng, b, h, n, d, dtype=np.float16)
    k, v = rand(rng, b, h, m, d, dtype=np.float16), rand(rng, b, h, m, dv, dtype=np.float16)
    got = linattn.linear_attention(q, k, v, causal=False, backend=backend,
                                   compile_options=options)
    assert rel_err(got, ref.linear_attention(q, k, v, causal=False)) <= 2e-3


@needs_emulator
def test_cache_is_per_backend(rng):
    linattn.clear_cache()
    q, k, v = (rand(rng, 1, 1, 5, 4) for _ in range(3))
    linattn.linear_attention(q, k, v, backend="cpu")
    linattn.linear_attention(q, k, v, backend="gpu-emulator")
    linattn.linear_attention(q, k, v, backend="gpu-emulator")
    info = linattn.cache_info()
    assert (info.misses, info.hits) == (2, 1)


@needs_emulator
def test_availability():
    assert "gpu-emulator" in linattn.available_backends()
    get_backend("gpu-emulator").check_available()
    if "cuda" not in linattn.available_backends():
        with pytest.raises(linattn.BackendUnavailable,
                           match="backend='cuda' is not available: no CUDA "
                                 "(driver|device).*backend='gpu-emulator'"):
            get_backend("cuda").check_available()


def test_build_without_runtimes(tmp_path, monkeypatch):
    # A libLinAttnCAPI.so with no GPU runtime beside it.
    monkeypatch.setattr(backends, "find_library",
                        lambda: tmp_path / "libLinAttnCAPI.so")
    for backend, library in ((GPUEmulatorBackend(), "liblinattn_gpu_emulator.so"),
                             (_MockCUDA(), "liblinattn_mock_gpu_runtime.so")):
        with pytest.raises(linattn.BackendUnavailable,
                           match=f"this build has no {library}"):
            backend.check_available()


class _MockCUDA(CUDABackend):
    """The cuda backend's compile path over the mock runtime, which reports
    compute capability 9.0 and runs no kernels."""
    name = "cuda-mock"
    library_name = "liblinattn_mock_gpu_runtime.so"

    def check_available(self):
        self.runtime()


@pytest.fixture(scope="module")
def mock_log(tmp_path_factory):
    """The mock runtime's log. The library opens it at its first call and
    keeps it for the process: every test here reads the lines it added."""
    path = tmp_path_factory.mktemp("mock") / "mock.log"
    old = os.environ.get("LINATTN_MOCK_GPU_LOG")
    os.environ["LINATTN_MOCK_GPU_LOG"] = str(path)
    path.touch()
    yield path
    if old is None:
        del os.environ["LINATTN_MOCK_GPU_LOG"]
    else:
        os.environ["LINATTN_MOCK_GPU_LOG"] = old


def test_cuda_compile_path_on_the_mock(rng, mock_log):
    # The chip comes from the runtime's compute capability, ptxas builds a
    # cubin, and the host code is JIT-compiled and runs: the mock's log shows
    # the cubin loaded, the copies and the scan kernel launched. The mock
    # runs no kernels, so the values are not checked.
    before = len(mock_log.read_text().splitlines())
    backend = _MockCUDA()
    register_backend(backend)
    assert backend.pipeline_options(backend.runtime()) == [
        "chip=sm_90", "sequence-parallel-blocks=264"]
    q, k, v = (rand(rng, 1, 2, 20, 8) for _ in range(3))
    out = linattn.linear_attention(q, k, v, backend="cuda-mock")
    assert out.shape == (1, 2, 20, 8) and out.dtype == np.float32
    calls = "\n".join(mock_log.read_text().splitlines()[before:])
    assert "mgpu: module-load bin" in calls
    assert "mgpu: memcpy h2d" in calls and "mgpu: memcpy d2h" in calls
    assert "mgpu: launch linattn_scan" in calls


def _second_call_on_the_mock(mock_log, memory, shape, options):
    """The mock's log of the second linear_attention_device call on bf16
    buffers of `shape` in `memory` (the first compiles, and the module
    loads); `memory` is closed."""
    q, k, v, o = (memory.empty(shape, "bf16") for _ in range(4))
    for _ in range(2):
        before = len(mock_log.read_text().splitlines())
        linattn.linear_attention_device(q, k, v, o, stream=memory.stream,
                                        backend="cuda-mock",
                                        compile_options=options)
    calls = mock_log.read_text().splitlines()[before:]
    memory.close()
    return calls


@pytest.mark.parametrize("head_dim,kernel,options", [
    (8, "linattn_scan_forward_elu", None),            # F = 8: the scalar scan
    # the tensor-core chunk loop (64-bit offsets by default)
    (16, "linattn_scan_chunked_wide_forward_elu", None),
    # compile_options reach the pipeline: the recurrent kernel for bf16.
    (16, "linattn_scan_forward_elu", {"scan-kernel": "recurrent"}),
])
def test_cuda_device_buffers_on_the_mock(mock_log, head_dim, kernel, options):
    # linear_attention_device through the cuda backend's pipeline
    # (chip from the runtime, device-buffers=true, ptxas): once compiled, a
    # call launches the scan on the caller's stream and nothing else: no
    # copies, and no temporaries for the final state, which attention drops.
    register_backend(_MockCUDA())
    memory = DeviceMemory("cuda-mock")
    stream = mock_log.read_text().splitlines()[-1]
    assert stream.startswith("mgpu: stream-create s")
    stream = stream.split()[-1]
    calls = _second_call_on_the_mock(mock_log, memory, (1, 2, 20, head_dim),
                                     options)
    assert [c.split()[1] for c in calls] == ["launch"], calls
    assert calls[0].startswith(f"mgpu: launch {kernel}_normalized_")
    assert calls[0].endswith(f" {stream}")


@pytest.mark.parametrize("sms,options,kernels", [
    # An H100's 132 SMs: one block of B1·H1 is below half of the 264 blocks
    # aimed at, so the 4096 tokens split into segments of 1024.
    ("132", None, ["segment_states", "segment_prefix", "segment_outputs"]),
    # One SM: the one block is half of the two aimed at, batch-parallel.
    ("1", None, ["chunked"]),
    # The caller's sequence-parallel-blocks replaces the device's.
    ("132", {"sequence-parallel-blocks": 0}, ["chunked"]),
    ("1", {"sequence-parallel-blocks": 264},
     ["segment_states", "segment_prefix", "segment_outputs"]),
])
def test_cuda_sequence_parallel_blocks_follow_the_device(
        monkeypatch, mock_log, sms, options, kernels):
    # The cuda backend compiles for the device's SMs (two blocks per SM) and
    # keeps the code of each SM count apart in the compile cache.
    monkeypatch.setenv("LINATTN_MOCK_GPU_SMS", sms)
    backend = _MockCUDA()
    register_backend(backend)
    blocks = 2 * int(sms)
    assert backend.cache_key() == ("sm_90", int(sms))
    assert backend.pipeline_options(backend.runtime())[1] == \
        f"sequence-parallel-blocks={blocks}"
    calls = _second_call_on_the_mock(mock_log, DeviceMemory("cuda-mock"),
                                     (1, 1, 4096, 16), options)
    launched = [c.split()[2] for c in calls if c.split()[1] == "launch"]
    assert [re.sub(r"^linattn_scan_|_(wide_)?forward_elu_normalized_\d+$", "",
                   name) for name in launched] == kernels, calls


def test_multiprocessor_count_errors(monkeypatch):
    monkeypatch.setenv("LINATTN_MOCK_GPU_SMS", "none")
    with pytest.raises(GPURuntimeError, match="multiprocessor count"):
        _MockCUDA().runtime().multiprocessor_count()


def _driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


class _NoDriverCUDA(CUDABackend):
    """The CUDA runtime asked to run without a driver: every call records a
    failure. PTX is embedded, so that no device needs describing."""
    name = "cuda-no-driver"

    def check_available(self):
        self.runtime()

    def pipeline_options(self, runtime):
        return ["format=isa"]

    def cache_key(self):
        return ()


@pytest.mark.skipif(_driver_present(), reason="a CUDA driver is present")
def test_runtime_failures_raise(rng):
    register_backend(_NoDriverCUDA())
    q, k, v = (rand(rng, 1, 1, 6, 4) for _ in range(3))
    with pytest.raises(GPURuntimeError,
                       match="the GPU runtime failed: cannot load the CUDA "
                             "driver"):
        linattn.linear_attention(q, k, v, backend="cuda-no-driver")
    # The failure is reported once, not again by the next call's check.
    assert get_backend("cuda-no-driver").runtime().take_error() is None


#===------------------------------------------------------------------------===#
# linear_attention_device: device memory and a stream
#===------------------------------------------------------------------------===#


def to_bf16_bits(x):
    """float32 -> bfloat16 bits (round to nearest even), as uint16."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(u):
    return (u.astype(np.uint32) << 16).view(np.float32)


# Element type -> the numpy dtype that holds its bits.
STORAGE = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32,
           "f64": np.float64, "i32": np.int32}
# bf16 keeps 8 significant bits: one unit in the last place at 1 (the
# output rounds to half of one).
DEVICE_TOL = {"f16": 2e-3, "bf16": 8e-3, "f32": 2e-5, "f64": 1e-12}


class DeviceMemory:
    """Buffers and a stream of a GPU backend's runtime (device memory on a
    GPU, the emulator's on the CPU), the way a framework would hold them."""

    def __init__(self, backend):
        lib = get_backend(backend).runtime().lib
        lib.mgpuStreamCreate.restype = ctypes.c_void_p
        lib.mgpuMemAlloc.restype = ctypes.c_void_p
        lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p,
                                     ctypes.c_bool]
        lib.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.mgpuMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_size_t, ctypes.c_void_p]
        lib.mgpuStreamSynchronize.argtypes = [ctypes.c_void_p]
        lib.mgpuStreamDestroy.argtypes = [ctypes.c_void_p]
        self.lib = lib
        self.stream = lib.mgpuStreamCreate()
        self.buffers = []

    def empty(self, shape, element):
        nbytes = int(np.prod(shape)) * np.dtype(STORAGE[element]).itemsize
        pointer = self.lib.mgpuMemAlloc(nbytes, self.stream, False)
        assert pointer
        self.buffers.append(pointer)
        return linattn.DeviceArray(pointer, tuple(shape), element)

    def upload(self, host, element):
        # (ascontiguousarray makes a 0-d array 1-d.)
        shape = np.shape(host)
        host = np.ascontiguousarray(host, STORAGE[element]).reshape(shape)
        x = self.empty(shape, element)
        self.lib.mgpuMemcpy(x.pointer, host.ctypes.data, host.nbytes,
                            self.stream)
        return x

    def download(self, x):
        host = np.empty(x.shape, STORAGE[x.element])
        self.lib.mgpuMemcpy(host.ctypes.data, x.pointer, host.nbytes,
                            self.stream)
        self.lib.mgpuStreamSynchronize(self.stream)
        return from_bf16_bits(host) if x.element == "bf16" else host

    def close(self):
        for pointer in self.buffers:
            self.lib.mgpuMemFree(pointer, self.stream)
        self.lib.mgpuStreamSynchronize(self.stream)
        self.lib.mgpuStreamDestroy(self.stream)


@pytest.fixture
def memory(backend):
    m = DeviceMemory(backend)
    yield m
    m.close()


def device_inputs(rng, memory, element, shapes, positive):
    """Random inputs in `element` on the device, and the float64 values they
    hold (bf16 and f16 rounded as stored)."""
    device, exact = [], []
    for shape in shapes:
        x = rand(rng, *shape, dtype=np.float32)
        if positive:
            x = np.abs(x)
        if element == "bf16":
            bits = to_bf16_bits(x)
            device.append(memory.upload(bits, element))
            exact.append(from_bf16_bits(bits).astype(np.float64))
        else:
            stored = x.astype(STORAGE[element])
            device.append(memory.upload(stored, element))
            exact.append(stored.astype(np.float64))
    return device, exact


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("element", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("feature_map,causal,normalize,m", [
    ("elu", True, True, 70), ("relu", True, False, 70),
    ("elu", False, True, 45), ("identity", False, False, 45)])
def test_linear_attention_device(rng, backend, memory, element, feature_map,
                                 causal, normalize, m):
    # N = 70 (no multiple of a tile), Dv = 24 != D; M = 45 keys across.
    b, h, n, d, dv = 2, 3, 70, 16, 24
    (q, k, v), (q64, k64, v64) = device_inputs(
        rng, memory, element, [(b, h, n, d), (b, h, m, d), (b, h, m, dv)],
        positive=feature_map != "elu")
    out = memory.empty((b, h, n, dv), element)
    linattn.linear_attention_device(q, k, v, out, stream=memory.stream,
                                    feature_map=feature_map, causal=causal,
                                    normalize=normalize, backend=backend)
    want = ref.linear_attention(q64, k64, v64, feature_map=feature_map,
                                causal=causal, normalize=normalize)
    assert rel_err(memory.download(out), want) <= DEVICE_TOL[element]


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("normalize", [True, False])
def test_linear_attention_device_wide_state(rng, backend, memory, normalize):
    # 520 f32 features fit no scan kernel: the token loop launches the
    # kernels of each step from the host, on device memory throughout.
    b, h, n, d, dv = 1, 2, 9, 520, 8
    (q, k, v), exact = device_inputs(
        rng, memory, "f32", [(b, h, n, d), (b, h, n, d), (b, h, n, dv)],
        positive=True)
    out = memory.empty((b, h, n, dv), "f32")
    linattn.linear_attention_device(q, k, v, out, stream=memory.stream,
                                    feature_map="identity",
                                    normalize=normalize, backend=backend)
    want = ref.linear_attention(*exact, feature_map="identity",
                                normalize=normalize)
    assert rel_err(memory.download(out), want) <= DEVICE_TOL["f32"]


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("element", ["bf16", "f32"])
@pytest.mark.parametrize("feature_map,causal,d", [
    ("poly2", True, 4), ("poly2", False, 3), ("favor", True, 16),
    ("favor", False, 16)])
def test_linear_attention_device_maps(rng, backend, memory, element,
                                      feature_map, causal, d):
    # The maps that are not elementwise, by kernels of their own on device
    # memory: poly2 (F = 1 + D + D²) and favor (F = 24 from a projection).
    b, h, n, dv = 2, 3, 37, 8
    m = n if causal else 29
    shapes = [(b, h, n, d), (b, h, m, d), (b, h, m, dv)]
    if feature_map == "favor":
        shapes.append((d, 24))
    inputs, exact = device_inputs(rng, memory, element, shapes, positive=False)
    if feature_map == "favor":
        # Small entries keep exp(xP - |x|²/2) in range.
        inputs, exact = inputs[:3], exact[:3]
        p64 = rng.normal(size=(d, 24)) * 0.25
        if element == "bf16":
            bits = to_bf16_bits(p64)
            projection = memory.upload(bits, element)
            p64 = from_bf16_bits(bits).astype(np.float64)
        else:
            projection = memory.upload(p64.astype(np.float32), element)
            p64 = p64.astype(np.float32).astype(np.float64)
    else:
        projection = p64 = None
    q, k, v = inputs
    out = memory.empty((b, h, n, dv), element)
    linattn.linear_attention_device(q, k, v, out, stream=memory.stream,
                                    feature_map=feature_map, causal=causal,
                                    projection=projection, backend=backend)
    want = ref.linear_attention(*exact, feature_map=feature_map,
                                causal=causal, projection=p64)
    assert rel_err(memory.download(out), want) <= DEVICE_TOL[element]


@pytest.mark.parametrize("backend", gpu_backends())
def test_linear_attention_device_errors(rng, backend, memory):
    x = memory.empty((1, 2, 8, 4), "f32")
    h = memory.empty((1, 2, 8, 4), "f16")
    run = linattn.linear_attention_device
    with pytest.raises(TypeError, match="q must be a linattn.DeviceArray, "
                                        "got ndarray"):
        run(np.zeros((1, 2, 8, 4), np.float32), x, x, x, stream=memory.stream,
            backend=backend)
    with pytest.raises(TypeError, match="q, k, v and out must have the same element type, got q: f32, "
                                        "k: f32, v: f32, out: f16"):
        run(x, x, x, h, stream=memory.stream, backend=backend)
    with pytest.raises(TypeError, match="element type i32; on the GPU"):
        run(x._replace(element="i32"), x, x, x, stream=memory.stream,
            backend=backend)
    with pytest.raises(ValueError, match="out must have shape "
                                         r"\(1, 2, 8, 4\), got \(1, 2, 8, 5\)"):
        run(x, x, x, x._replace(shape=(1, 2, 8, 5)), stream=memory.stream,
            backend=backend)
    with pytest.raises(ValueError, match="is not aligned to its f32 elements"):
        run(x, x._replace(pointer=x.pointer + 2), x, x, stream=memory.stream,
            backend=backend)
    with pytest.raises(ValueError, match="empty dimension"):
        run(x, x, x._replace(shape=(1, 2, 0, 4)), x, stream=memory.stream,
            backend=backend)
    with pytest.raises(ValueError, match="causal attention needs as many "
                                         "queries as keys"):
        run(x, x._replace(shape=(1, 2, 4, 4)), x._replace(shape=(1, 2, 4, 4)),
            x, stream=memory.stream, backend=backend)
    with pytest.raises(ValueError, match="feature_map='favor' needs a "
                                         "projection"):
        run(x, x, x, x, stream=memory.stream, feature_map="favor",
            backend=backend)
    p = memory.empty((4, 6), "f32")
    with pytest.raises(ValueError, match="projection is only used by "
                                         "feature_map='favor'"):
        run(x, x, x, memory.empty((1, 2, 8, 4), "f32"), stream=memory.stream,
            projection=p, backend=backend)
    with pytest.raises(ValueError, match="projection has 3 rows, the head "
                                         "dimension is 4"):
        run(x, x, x, memory.empty((1, 2, 8, 4), "f32"), stream=memory.stream,
            feature_map="favor", projection=p._replace(shape=(3, 8)),
            backend=backend)
    with pytest.raises(TypeError, match="q, k, v, projection and out must "
                                        "have the same element type"):
        run(x, x, x, memory.empty((1, 2, 8, 4), "f32"), stream=memory.stream,
            feature_map="favor", projection=p._replace(element="f16"),
            backend=backend)
    with pytest.raises(TypeError, match="stream must be a CUstream handle"):
        run(x, x, x, x, stream=None, backend=backend)
    # Outputs that share memory with an input, also partly.
    y = memory.empty((1, 2, 9, 4), "f32")
    with pytest.raises(ValueError, match="out overlaps q: the outputs need "
                                         "memory of their own"):
        run(x, y._replace(shape=(1, 2, 8, 4)), y._replace(shape=(1, 2, 8, 4)),
            x, stream=memory.stream, backend=backend)
    with pytest.raises(ValueError, match="out overlaps v"):
        run(x, x, y._replace(shape=(1, 2, 8, 4)),
            y._replace(pointer=y.pointer + 16, shape=(1, 2, 8, 4)),
            stream=memory.stream, backend=backend)
    with pytest.raises(linattn.BackendUnavailable,
                       match="backend='cpu' does not run on device memory"):
        run(x, x, x, memory.empty((1, 2, 8, 4), "f32"), stream=memory.stream,
            backend="cpu")


def device_tokens(memory, x, start, stop):
    """The tokens [start, stop) of every head of `x` ([B, H, T, ...] on the
    device) in a buffer of their own (a strided slice, copied); one token
    without the token axis."""
    host = memory.download(x)[:, :, start:stop]
    bits = to_bf16_bits(host) if x.element == "bf16" else host
    return memory.upload(bits if stop - start > 1 else bits[:, :, 0],
                         x.element)


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("element", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("in_place", [False, True])
def test_recurrent_device(rng, backend, memory, element, in_place):
    # A prompt of 31 tokens through the scan, then 9 steps, ping-ponging
    # between two states in device memory (the key-value state updated in
    # place with `in_place`): the full causal pass.
    b, h, n, d, dv, prompt = 2, 3, 40, 16, 12, 31
    (q, k, v), (q64, k64, v64) = device_inputs(
        rng, memory, element, [(b, h, n, d), (b, h, n, d), (b, h, n, dv)],
        positive=False)
    state = "f32" if element in ("f16", "bf16") else element

    def tokens(x, start, stop):
        return device_tokens(memory, x, start, stop)

    s = [memory.upload(np.zeros((b, h, d, dv), STORAGE[state]), state)]
    s.append(s[0] if in_place else memory.empty((b, h, d, dv), state))
    z = [memory.upload(np.zeros((b, h, d), STORAGE[state]), state),
         memory.empty((b, h, d), state)]
    outs = []
    o = memory.empty((b, h, prompt, dv), element)
    linattn.recurrent_device(tokens(q, 0, prompt), tokens(k, 0, prompt),
                             tokens(v, 0, prompt), s[0], z[0], o, s[1], z[1],
                             stream=memory.stream, backend=backend)
    outs.append(memory.download(o))
    for i in range(prompt, n):
        cur, nxt = (i - prompt + 1) % 2, (i - prompt) % 2
        o = memory.empty((b, h, dv), element)
        linattn.recurrent_device(tokens(q, i, i + 1), tokens(k, i, i + 1),
                                 tokens(v, i, i + 1), s[cur], z[cur], o,
                                 s[nxt], z[nxt], stream=memory.stream,
                                 backend=backend)
        outs.append(memory.download(o)[:, :, None])
    want, want_s, want_z = ref.causal_linear_attention_rnn(q64, k64, v64)
    assert rel_err(np.concatenate(outs, axis=2), want) <= DEVICE_TOL[element]
    # The state sums φ(k), computed in the data's type, in float32.
    final = (n - 1 - prompt) % 2  # the last step wrote it
    assert rel_err(memory.download(s[final]), want_s) <= DEVICE_TOL[element]
    assert rel_err(memory.download(z[final]), want_z) <= DEVICE_TOL[element]


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("element,options", [
    # Two value tiles of the chunked scan and of the step.
    ("bf16", {}), ("f64", {}),
    # The sequence-parallel scans: segment states, the scan over them (which
    # reads and writes each state element from one thread) and the
    # segments' outputs, which start from the prefixes it wrote.
    ("bf16", {"sequence-parallel-blocks": "64", "min-segment-tokens": "0"}),
    ("f32", {"sequence-parallel-blocks": "64", "min-segment-tokens": "0"}),
    ("f32", {"simt-chunks": "true", "sequence-parallel-blocks": "64",
             "min-segment-tokens": "0"}),
    ("f32", {"simt-chunks": "true"})])
def test_recurrent_device_in_place(rng, backend, memory, element, options):
    # The key-value state updated in place by every scan kernel: a long
    # prompt, Dv over two value tiles, then steps; each z ping-pongs.
    b, h, n, d, dv, prompt = 1, 2, 300, 32, 100, 296
    (q, k, v), (q64, k64, v64) = device_inputs(
        rng, memory, element, [(b, h, n, d), (b, h, n, d), (b, h, n, dv)],
        positive=False)
    state = "f32" if element in ("f16", "bf16") else element
    s = memory.upload(np.zeros((b, h, d, dv), STORAGE[state]), state)
    z = [memory.upload(np.zeros((b, h, d), STORAGE[state]), state),
         memory.empty((b, h, d), state)]
    outs = []
    spans = [(0, prompt)] + [(t, t + 1) for t in range(prompt, n)]
    for i, (start, stop) in enumerate(spans):
        o = memory.empty((b, h, stop - start, dv) if stop - start > 1
                         else (b, h, dv), element)
        linattn.recurrent_device(
            *(device_tokens(memory, x, start, stop) for x in (q, k, v)), s,
            z[i % 2], o, s, z[1 - i % 2], stream=memory.stream,
            backend=backend, compile_options=options)
        got = memory.download(o)
        outs.append(got if stop - start > 1 else got[:, :, None])
    want, want_s, want_z = ref.causal_linear_attention_rnn(q64, k64, v64)
    assert rel_err(np.concatenate(outs, axis=2), want) <= DEVICE_TOL[element]
    assert rel_err(memory.download(s), want_s) <= DEVICE_TOL[element]
    assert rel_err(memory.download(z[len(spans) % 2]),
                   want_z) <= DEVICE_TOL[element]


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("feature_map,d", [("poly2", 4), ("favor", 16)])
def test_recurrent_device_maps(rng, backend, memory, feature_map, d):
    # A prompt, then steps, with a map that changes the feature count: the
    # state is [B, H, F, Dv] (F = 21 for poly2 of 4, 24 from favor's
    # projection).
    b, h, n, dv, prompt = 2, 3, 12, 5, 9
    q64, k64, v64 = (rng.uniform(-0.5, 0.5, (b, h, n, x)) for x in (d, d, dv))
    projection = p64 = None
    if feature_map == "favor":
        p64 = rng.normal(size=(d, 24)) * 0.25
        projection = memory.upload(p64.astype(np.float32), "f32")
    f = 24 if feature_map == "favor" else 1 + d + d * d
    q, k, v = (memory.upload(x.astype(np.float32), "f32")
               for x in (q64, k64, v64))
    q64, k64, v64 = (memory.download(x).astype(np.float64) for x in (q, k, v))

    s = [memory.upload(np.zeros((b, h, f, dv), np.float32), "f32"),
         memory.empty((b, h, f, dv), "f32")]
    z = [memory.upload(np.zeros((b, h, f), np.float32), "f32"),
         memory.empty((b, h, f), "f32")]
    outs = []
    for i, (start, stop) in enumerate([(0, prompt)] +
                                      [(t, t + 1) for t in range(prompt, n)]):
        o = memory.empty((b, h, stop - start, dv) if stop - start > 1
                         else (b, h, dv), "f32")
        linattn.recurrent_device(
            *(device_tokens(memory, x, start, stop) for x in (q, k, v)),
            s[i % 2], z[i % 2], o, s[1 - i % 2],
            z[1 - i % 2], stream=memory.stream, feature_map=feature_map,
            projection=projection, backend=backend)
        got = memory.download(o)
        outs.append(got if stop - start > 1 else got[:, :, None])
    want = ref.linear_attention(q64, k64, v64, feature_map=feature_map,
                                causal=True, projection=p64)
    assert rel_err(np.concatenate(outs, axis=2), want) <= DEVICE_TOL["f32"]


@pytest.mark.parametrize("backend", gpu_backends())
def test_recurrent_device_errors(backend, memory):
    q = memory.empty((1, 2, 4), "f16")
    s, z = memory.empty((1, 2, 4, 4), "f32"), memory.empty((1, 2, 4), "f32")
    o = memory.empty((1, 2, 4), "f16")
    run = linattn.recurrent_device
    with pytest.raises(TypeError, match="s has element type f16; the state "
                                        "of f16 data is f32"):
        run(q, q, q, s._replace(element="f16"), z, o, s, z,
            stream=memory.stream, backend=backend)
    with pytest.raises(ValueError, match=r"s_out must have shape \(1, 2, 4, "
                                         r"4\) for q of shape"):
        run(q, q, q, s, z, o, s._replace(shape=(1, 2, 4, 5)), z,
            stream=memory.stream, backend=backend)
    with pytest.raises(ValueError, match=r"k must have rank 3 \(\[B, H, D\]\)"):
        run(q, s, q, s, z, o, s, z, stream=memory.stream, backend=backend)
    with pytest.raises(ValueError, match="feature_map='favor' needs a "
                                         "projection"):
        run(q, q, q, s, z, o, s, z, stream=memory.stream,
            feature_map="favor", backend=backend)
    # poly2 of D = 4 keeps F = 21 features: a D x Dv state is the wrong one.
    with pytest.raises(ValueError, match=r"s must have shape \(1, 2, 21, 4\)"):
        run(q, q, q, s, z, o, s, z, stream=memory.stream,
            feature_map="poly2", backend=backend)
    # A new state over a part of the old one (the whole of it is the state
    # in place), a new normalizer over the old, and two outputs in one
    # buffer.
    s2, z2 = memory.empty((1, 2, 4, 4), "f32"), memory.empty((1, 2, 4), "f32")
    with pytest.raises(ValueError, match="s_out overlaps s: the outputs"):
        run(q, q, q, s, z, o, s._replace(pointer=s.pointer + 4), z2,
            stream=memory.stream, backend=backend)
    with pytest.raises(ValueError, match="z_out overlaps z: the outputs"):
        run(q, q, q, s, z, o, s2, z, stream=memory.stream, backend=backend)
    with pytest.raises(ValueError, match="s_out overlaps z_out"):
        run(q, q, q, s, z, o, s2, s2._replace(shape=(1, 2, 4)),
            stream=memory.stream, backend=backend)


def _device_projection(rng, memory, element, d, m):
    """favor's projection on the device (small entries keep exp(xP -
    |x|²/2) in range) and the float64 values it holds."""
    p64 = rng.normal(size=(d, m)) * 0.25
    if element == "bf16":
        bits = to_bf16_bits(p64)
        return memory.upload(bits, element), from_bf16_bits(bits).astype(
            np.float64)
    stored = p64.astype(STORAGE[element])
    return memory.upload(stored, element), stored.astype(np.float64)


def _check_grad_device(rng, backend, memory, element, feature_map, causal,
                       normalize, b, h, n, m, d, dv):
    shapes = [(b, h, n, d), (b, h, m, d), (b, h, m, dv), (b, h, n, dv)]
    # Normalized, the maps that need it get non-negative q and k (positive
    # denominators); v and dO keep both signs.
    (q, k), exact = device_inputs(
        rng, memory, element, shapes[:2],
        positive=feature_map in ("identity", "relu", "poly2") and normalize)
    (v, do), exact_v = device_inputs(rng, memory, element, shapes[2:],
                                     positive=False)
    exact += exact_v
    projection = p64 = None
    if feature_map == "favor":
        projection, p64 = _device_projection(rng, memory, element, d, 24)
    grads = [memory.empty(shape, element) for shape in shapes[:3]]
    linattn.linear_attention_grad_device(
        q, k, v, do, *grads, stream=memory.stream, feature_map=feature_map,
        causal=causal, normalize=normalize, projection=projection,
        backend=backend)
    want = ref.linear_attention_grad(*exact, feature_map=feature_map,
                                     causal=causal, normalize=normalize,
                                     projection=p64)
    kappa = (normalized_cancellation(feature_map, *exact, causal, p64)
             if normalize else (0.0, 0.0))
    for name, got, w in zip(("dq", "dk", "dv"), grads, want):
        # The features' gradients are rounded to the data type between the
        # scans (or summaries) and the chain rule, and normalized, g, h, N
        # and D before them: twice and four times f16's and bf16's
        # tolerance. Normalized, dq's and dk's terms cancel: their error is
        # about twice the data type's rounding times how much larger the
        # terms are (conftest.normalized_cancellation), below half the
        # tolerance times that.
        tol = DEVICE_TOL[element]
        if element in ("f16", "bf16"):
            tol *= 4 if normalize else 2
        if name in ("dq", "dk"):
            tol = max(tol, DEVICE_TOL[element] * kappa[name == "dk"] / 2)
        assert rel_err(memory.download(got), w) <= tol, name


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("element", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("feature_map", ["elu", "relu", "identity"])
@pytest.mark.parametrize("causal,normalize", [(True, False), (True, True),
                                              (False, False), (False, True)])
def test_linear_attention_grad_device(rng, backend, memory, element,
                                      feature_map, causal, normalize):
    # On device memory, GPU kernels throughout: the scans or summaries, the
    # chain rule's kernel, and normalized or not causal, the glue between
    # them (linattn-gpu-linalg-kernels). N = 70 (no multiple of a tile),
    # Dv = 24 != D; not causal, M = 45 keys.
    _check_grad_device(rng, backend, memory, element, feature_map, causal,
                       normalize, b=2, h=3, n=70, m=70 if causal else 45,
                       d=16, dv=24)


# favor's chain rule, Σ_f (dφ ⊙ φ)_f (P_df - x_d), cancels too, on features
# recomputed in the data type: normalized, its dq in bf16 is 5 to 11 times
# the tolerance above on the host as on the device, so it is checked in f32.
@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("feature_map,causal,normalize,d,element", [
    ("poly2", True, True, 4, "bf16"), ("poly2", True, True, 4, "f32"),
    ("poly2", False, False, 3, "bf16"), ("poly2", False, False, 3, "f32"),
    ("favor", True, False, 16, "bf16"), ("favor", True, False, 16, "f32"),
    ("favor", False, True, 16, "f32")])
def test_linear_attention_grad_device_maps(rng, backend, memory, element,
                                           feature_map, causal, normalize, d):
    # The maps that are not elementwise: their chain rules (a reduction that
    # reads poly2's quadratic block by index; favor's features recomputed)
    # are linalg kernels too.
    _check_grad_device(rng, backend, memory, element, feature_map, causal,
                       normalize, b=2, h=3, n=37, m=37 if causal else 29, d=d,
                       dv=8)


@pytest.mark.parametrize("backend", gpu_backends())
def test_random_linear_attention_grad_device(backend, memory):
    # Drawn cases: element type, feature map, causal or not, normalized or
    # not, sizes off every tile. A fresh seed each run
    # (LINATTN_TEST_SEED=S replays one); a failure names it and the case.
    seed = int(os.environ.get("LINATTN_TEST_SEED",
                              random.SystemRandom().randrange(2**31)))
    rnd = random.Random(f"{seed}/grad-device/{backend}")
    rng = np.random.default_rng(rnd.randrange(2**32))
    for i in range(12):
        element = rnd.choice(["f16", "bf16", "f32", "f64"])
        feature_map = rnd.choice(["elu", "relu", "identity", "favor", "poly2"])
        causal, normalize = rnd.random() < 0.5, rnd.random() < 0.5
        if feature_map == "favor" and normalize:  # as in the test above
            element = rnd.choice(["f32", "f64"])
        n = rnd.randint(2, 90)
        case = dict(b=rnd.randint(1, 2), h=rnd.randint(1, 3), n=n,
                    m=n if causal else rnd.randint(1, 70),
                    d=rnd.randint(1, 4) if feature_map == "poly2"
                    else rnd.randint(1, 20), dv=rnd.randint(1, 24))
        try:
            _check_grad_device(rng, backend, memory, element, feature_map,
                               causal, normalize, **case)
        except AssertionError as e:
            raise AssertionError(
                f"seed {seed}, case {i}: {element} {feature_map} "
                f"causal={causal} normalize={normalize} {case}: {e}") from e


@pytest.mark.parametrize("backend", gpu_backends())
def test_linear_attention_grad_device_errors(rng, backend, memory):
    (q, k, v, do), _ = device_inputs(
        rng, memory, "f32", [(1, 2, 5, 4), (1, 2, 5, 4), (1, 2, 5, 3),
                             (1, 2, 5, 3)], positive=False)
    grads = [memory.empty(shape, "f32")
             for shape in ((1, 2, 5, 4), (1, 2, 5, 4), (1, 2, 5, 3))]
    with pytest.raises(ValueError, match="feature_map='favor' needs a "
                                         "projection"):
        linattn.linear_attention_grad_device(
            q, k, v, do, *grads, stream=memory.stream, backend=backend,
            feature_map="favor")
    s, z = memory.empty((1, 2, 4, 3), "f32"), memory.empty((1, 2, 4), "f32")
    with pytest.raises(ValueError, match="initial_state and "
                                         "initial_state_grad go together"):
        linattn.linear_attention_grad_device(
            q, k, v, do, *grads, stream=memory.stream, backend=backend,
            initial_state=(s, z))
    with pytest.raises(ValueError, match="need causal=True"):
        linattn.linear_attention_grad_device(
            q, k, v, do, *grads, stream=memory.stream, backend=backend,
            causal=False, final_state_grad=(s, z))
    with pytest.raises(TypeError, match="final_state_grad's z has element "
                                        "type f16; the state of f32 data is "
                                        "f32"):
        linattn.linear_attention_grad_device(
            q, k, v, do, *grads, stream=memory.stream, backend=backend,
            final_state_grad=(s, z._replace(element="f16")))
    with pytest.raises(ValueError, match="overlaps"):
        linattn.linear_attention_grad_device(
            q, k, v, do, *grads, stream=memory.stream, backend=backend,
            initial_state=(s, z), initial_state_grad=(s, z))
    with pytest.raises(ValueError, match=r"grad_out must have the output's "
                                         r"shape \(1, 2, 5, 3\)"):
        linattn.linear_attention_grad_device(
            q, k, v, v._replace(shape=(1, 2, 4, 3)), *grads,
            stream=memory.stream, backend=backend)
    with pytest.raises(ValueError, match="dv must have shape"):
        linattn.linear_attention_grad_device(
            q, k, v, do, grads[0], grads[1], grads[0], stream=memory.stream,
            backend=backend)
    with pytest.raises(ValueError, match="overlaps"):
        linattn.linear_attention_grad_device(
            q, k, v, do, grads[0], grads[0], grads[2], stream=memory.stream,
            backend=backend)


# Reductions of the glue between kernels (linattn-gpu-linalg-kernels): along
# rows (a group of lanes per point; 70 and dynamic lengths off the warp, 5
# off a power of two, two reduction loops flattened, a whole array to one
# value, two outputs), and down columns (a thread per point). Every
# function's output starts from a value it is combined with.
_GLUE_REDUCTIONS = """
#xy = affine_map<(d0, d1) -> (d0, d1)>
#x = affine_map<(d0, d1) -> (d0)>
#y = affine_map<(d0, d1) -> (d1)>
#xyz = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#xyz_x = affine_map<(d0, d1, d2) -> (d0)>
#one = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
func.func @row_dot(%a: tensor<?x70xf32>, %b: tensor<?x70xf32>, %c: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [#xy, #xy, #x], iterator_types = ["parallel", "reduction"]} ins(%a, %b : tensor<?x70xf32>, tensor<?x70xf32>) outs(%c : tensor<?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
func.func @row_max(%a: tensor<?x5xbf16>, %c: tensor<?xbf16>) -> tensor<?xbf16> {
  %r = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<?x5xbf16>) outs(%c : tensor<?xbf16>) {
  ^bb0(%x: bf16, %acc: bf16):
    %m = arith.maximumf %x, %acc : bf16
    linalg.yield %m : bf16
  } -> tensor<?xbf16>
  return %r : tensor<?xbf16>
}
func.func @block_sum(%a: tensor<?x3x11xi32>, %c: tensor<?xi32>) -> tensor<?xi32> {
  %r = linalg.generic {indexing_maps = [#xyz, #xyz_x], iterator_types = ["parallel", "reduction", "reduction"]} ins(%a : tensor<?x3x11xi32>) outs(%c : tensor<?xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.addi %acc, %x : i32
    linalg.yield %s : i32
  } -> tensor<?xi32>
  return %r : tensor<?xi32>
}
func.func @total(%a: tensor<?xf32>, %c: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#one, #none], iterator_types = ["reduction"]} ins(%a : tensor<?xf32>) outs(%c : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
func.func @row_sum_min(%a: tensor<7x?xf32>, %c: tensor<7xf32>, %d: tensor<7xf32>) -> (tensor<7xf32>, tensor<7xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#xy, #x, #x], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<7x?xf32>) outs(%c, %d : tensor<7xf32>, tensor<7xf32>) {
  ^bb0(%x: f32, %sum: f32, %low: f32):
    %s = arith.addf %x, %sum : f32
    %m = arith.minimumf %low, %x : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<7xf32>, tensor<7xf32>)
  return %r#0, %r#1 : tensor<7xf32>, tensor<7xf32>
}
func.func @column_sum(%a: tensor<?x40xf32>, %c: tensor<40xf32>) -> tensor<40xf32> {
  %r = linalg.generic {indexing_maps = [#xy, #y], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x40xf32>) outs(%c : tensor<40xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<40xf32>
  return %r : tensor<40xf32>
}
"""


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("rows", [1, 13, 300])
def test_glue_reductions_device(rng, backend, memory, rows):
    engine = get_backend(backend).compile(_GLUE_REDUCTIONS,
                                          device_buffers=True)

    def call(name, inputs, *outputs):
        # The outputs' initial values are inputs; the results have their
        # shapes and element types.
        ins = [memory.upload(x, e) for x, e in inputs + list(outputs)]
        outs = [memory.empty(np.shape(x), e) for x, e in outputs]
        engine.device_function(name)(ins, outs, memory.stream)
        return [memory.download(x) for x in outs]

    a, b = rand(rng, rows, 70), rand(rng, rows, 70)
    c = rand(rng, rows)
    got, = call("row_dot", [(a, "f32"), (b, "f32")], (c, "f32"))
    want = c + np.einsum("ij,ij->i", a.astype(np.float64), b)
    assert rel_err(got, want) <= 2e-6

    a, c = to_bf16_bits(rand(rng, rows, 5)), to_bf16_bits(rand(rng, rows))
    got, = call("row_max", [(a, "bf16")], (c, "bf16"))
    want = np.maximum(from_bf16_bits(c), from_bf16_bits(a).max(axis=1))
    assert np.array_equal(got, want)

    a = rng.integers(-1000, 1000, (rows, 3, 11), dtype=np.int32)
    c = rng.integers(-1000, 1000, rows, dtype=np.int32)
    got, = call("block_sum", [(a, "i32")], (c, "i32"))
    assert np.array_equal(got, c + a.sum(axis=(1, 2)))

    a, c = rand(rng, rows * 7), rand(rng)
    got, = call("total", [(a, "f32")], (np.float32(c), "f32"))
    assert rel_err(got, c + a.astype(np.float64).sum()) <= 2e-6

    a, c, d = rand(rng, 7, rows), rand(rng, 7), rand(rng, 7)
    got_sum, got_min = call("row_sum_min", [(a, "f32")], (c, "f32"),
                            (d, "f32"))
    assert rel_err(got_sum, c + a.astype(np.float64).sum(axis=1)) <= 2e-6
    assert np.array_equal(got_min, np.minimum(d, a.min(axis=1)))

    a, c = rand(rng, rows, 40), rand(rng, 40)
    got, = call("column_sum", [(a, "f32")], (c, "f32"))
    assert rel_err(got, c + a.astype(np.float64).sum(axis=0)) <= 2e-6


@pytest.mark.parametrize("backend", gpu_backends())
@pytest.mark.parametrize("element,feature_map,normalize", [
    ("f32", "elu", True), ("f32", "favor", False), ("bf16", "elu", False),
    ("f64", "relu", True)])
def test_linear_attention_grad_device_segments(rng, backend, memory, element,
                                               feature_map, normalize):
    # Training in segments on device memory: the forward passes by
    # recurrent_device from each segment's starting state, then the backward
    # passes from the last segment to the first, each handing dS₀, dz₀ to
    # the one before as its final_state_grad: the whole sequence's
    # gradients. Segments of 23, 1 and 16 tokens.
    b, h, n, d, dv = 2, 3, 40, 8, 6
    shapes = [(b, h, n, d), (b, h, n, d), (b, h, n, dv), (b, h, n, dv)]
    (q, k), exact = device_inputs(rng, memory, element, shapes[:2],
                                  positive=feature_map == "relu")
    (v, do), exact_v = device_inputs(rng, memory, element, shapes[2:],
                                     positive=False)
    exact += exact_v
    projection = p64 = None
    f = d
    if feature_map == "favor":
        projection, p64 = _device_projection(rng, memory, element, d, 12)
        f = 12
    options = dict(feature_map=feature_map, normalize=normalize,
                   projection=projection, backend=backend)
    state = linattn.attention.device_state_element(element)

    def rows(x, lo, hi):
        """Tokens lo..hi of a [B, H, N, X] device array, as a device array
        of its own (copied through the host)."""
        host = memory.download(x)
        part = np.ascontiguousarray(host[:, :, lo:hi])
        if element == "bf16":
            part = to_bf16_bits(part)
        return memory.upload(part, element)

    bounds = [0, 23, 24, n]
    segments = list(zip(bounds, bounds[1:]))
    zero = np.zeros((b, h, f, dv), np.float64), np.zeros((b, h, f))
    s, z = (memory.upload(x.astype(STORAGE[state]), state) for x in zero)
    starts = []
    for lo, hi in segments:
        starts.append((s, z))
        s1, z1 = memory.empty((b, h, f, dv), state), memory.empty((b, h, f), state)
        o = memory.empty((b, h, hi - lo, dv), element)
        linattn.recurrent_device(rows(q, lo, hi), rows(k, lo, hi),
                                 rows(v, lo, hi), s, z, o, s1, z1,
                                 stream=memory.stream, **options)
        s, z = s1, z1
    grads, final = [], None
    for (lo, hi), start in reversed(list(zip(segments, starts))):
        parts = [memory.empty((b, h, hi - lo, x), element) for x in (d, d, dv)]
        ds0 = (memory.empty((b, h, f, dv), state), memory.empty((b, h, f), state))
        linattn.linear_attention_grad_device(
            *(rows(x, lo, hi) for x in (q, k, v, do)), *parts,
            stream=memory.stream, initial_state=start,
            final_state_grad=final, initial_state_grad=ds0, **options)
        grads.append([memory.download(x) for x in parts])
        final = ds0
    want = ref.linear_attention_grad(*exact, feature_map=feature_map,
                                     normalize=normalize, projection=p64)
    tol = DEVICE_TOL[element] * (4 if element in ("f16", "bf16") else 1)
    for i, (name, w) in enumerate(zip(("dq", "dk", "dv"), want)):
        got = np.concatenate([g[i] for g in reversed(grads)], axis=2)
        assert rel_err(got, w) <= tol, name
