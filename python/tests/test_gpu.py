"""The GPU backends: the kernels of linattn-lower-to-nvvm called on numpy
arrays, checked against float64 on the GPU emulator (``gpu-emulator``, on
every machine) and on a GPU (``cuda``, skipped without one)."""

import ctypes

import numpy as np
import pytest

import linattn
from linattn import RecurrentState
from linattn import reference as ref
from linattn import backends
from linattn.backends import (CUDABackend, GPUEmulatorBackend, GPURuntimeError,
                              get_backend, register_backend)

from conftest import needs_emulator, rand, rel_err

# f16 data takes the tensor-core kernels for causal scans (products exact in
# f32, the state in f32), f32 the strict-fp32 ones, f64 the f64 ones; f16's
# bound is two units in the last place at 1, as on the CPU.
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


def test_cuda_compile_path_on_the_mock(rng, tmp_path, monkeypatch):
    # The chip comes from the runtime's compute capability, ptxas builds a
    # cubin, and the host code is JIT-compiled and runs: the mock's log shows
    # the cubin loaded, the copies and the scan kernel launched. The mock
    # runs no kernels, so the values are not checked.
    log = tmp_path / "mock.log"
    monkeypatch.setenv("LINATTN_MOCK_GPU_LOG", str(log))
    backend = _MockCUDA()
    register_backend(backend)
    assert backend.pipeline_for(backend.runtime()) == \
        "linattn-lower-to-nvvm{chip=sm_90}"
    q, k, v = (rand(rng, 1, 2, 20, 8) for _ in range(3))
    out = linattn.linear_attention(q, k, v, backend="cuda-mock")
    assert out.shape == (1, 2, 20, 8) and out.dtype == np.float32
    calls = log.read_text()
    assert "mgpu: module-load bin" in calls
    assert "mgpu: memcpy h2d" in calls and "mgpu: memcpy d2h" in calls
    assert "mgpu: launch linattn_scan" in calls


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

    def pipeline_for(self, runtime):
        return "linattn-lower-to-nvvm{format=isa}"


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
