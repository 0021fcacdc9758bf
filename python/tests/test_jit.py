"""The ExecutionEngine: calling compiled functions with numpy arrays."""

import gc
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import linattn
from linattn import MLIRError, Module, _capi
from linattn.jit import ExecutionEngine, default_shared_libs

from conftest import rand, rel_err
from linattn import reference as ref

MODULE = """
func.func @phi(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = linattn.feature_map elu %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Dynamic sizes, two results (one is the argument itself), a scalar.
func.func @two(%x: tensor<?x3xf64>, %s: f64) -> (tensor<?x3xf64>, tensor<?x3xf64>) {
  %0 = linattn.feature_map relu %x : tensor<?x3xf64> -> tensor<?x3xf64>
  return %0, %x : tensor<?x3xf64>, tensor<?x3xf64>
}

func.func @scalars(%a: f32, %b: i64, %c: index) -> f32 {
  %bf = arith.sitofp %b : i64 to f32
  %ci = arith.index_cast %c : index to i64
  %cf = arith.sitofp %ci : i64 to f32
  %0 = arith.addf %a, %bf : f32
  %1 = arith.addf %0, %cf : f32
  return %1 : f32
}

// Written in place if the argument were writable: the engine marks tensor
// arguments read-only, so the caller's array must not change.
func.func @negate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]} outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Destination-passing: writes into a memref argument.
func.func @fill(%out: memref<3x2xf32>, %value: f32) {
  linalg.fill ins(%value : f32) outs(%out : memref<3x2xf32>)
  return
}

func.func @big(%x: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %0 = linattn.feature_map relu %x : tensor<512x1024xf32> -> tensor<512x1024xf32>
  return %0 : tensor<512x1024xf32>
}

func.func private @hidden() {
  return
}

func.func @bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  return %x : tensor<4xbf16>
}

// Every scalar kind the native calls take, with arrays (destination passing):
// out = x * a + b + c + d, and x (read-only) is left as it is.
func.func @mix(%x: tensor<?x4xf32>, %a: f32, %b: f64, %c: i64, %d: i32,
               %out: memref<?x4xf32>) {
  %bf = arith.truncf %b : f64 to f32
  %cf = arith.sitofp %c : i64 to f32
  %df = arith.sitofp %d : i32 to f32
  %xm = bufferization.to_buffer %x : tensor<?x4xf32> to memref<?x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%xm : memref<?x4xf32>) outs(%out : memref<?x4xf32>) {
  ^bb0(%xi: f32, %o: f32):
    %0 = arith.mulf %xi, %a : f32
    %1 = arith.addf %0, %bf : f32
    %2 = arith.addf %1, %cf : f32
    %3 = arith.addf %2, %df : f32
    linalg.yield %3 : f32
  }
  return
}
"""


# Set by the lit suite when the build has the native module: then calls of
# functions without results must take it (unless LINATTN_NATIVE_CALL=0).
EXPECT_NATIVE = (os.environ.get("LINATTN_EXPECT_NATIVE_CALL") == "1"
                 and os.environ.get("LINATTN_NATIVE_CALL") != "0")


@pytest.fixture(scope="module")
def engine():
    return ExecutionEngine(MODULE)


def test_default_shared_libs():
    libs = default_shared_libs()
    assert any(p.endswith(("libmlir_c_runner_utils.so",
                           "liblinattn_runner_utils.so")) for p in libs)


def test_tensor_result_is_owned_without_copy(engine):
    x = np.array([[-1, 0, 1], [2, -3, 0.5]], np.float32)
    y = engine.invoke("phi", x)
    np.testing.assert_allclose(y, ref.feature_map("elu", x), rtol=1e-6)
    # The result views the buffer the compiled code allocated.
    assert y.base is not None and type(y.base).__name__ == "_ResultBuffer"
    assert y.flags.c_contiguous and y.flags.writeable


def test_dynamic_shapes_multiple_results_and_scalars(engine, rng):
    x = rand(rng, 5, 3, dtype=np.float64)
    relu, same = engine.invoke("two", x, 2.0)
    assert relu.shape == same.shape == (5, 3)
    np.testing.assert_array_equal(relu, np.maximum(x, 0))
    np.testing.assert_array_equal(same, x)
    # A returned argument is a new array, not the caller's.
    same[0, 0] = 42.0
    assert x[0, 0] != 42.0
    relu_big, _ = engine.invoke("two", rand(rng, 1000, 3, dtype=np.float64),
                                0.0)
    assert relu_big.shape == (1000, 3)


def test_scalar_arguments_and_result(engine):
    assert engine.invoke("scalars", 1.5, 3, 10) == pytest.approx(14.5)
    assert engine.invoke("scalars", np.float32(0.5), np.int64(1), 0) == 1.5


def test_tensor_arguments_are_not_written(engine):
    x = np.arange(4, dtype=np.float32)
    y = engine.invoke("negate", x)
    np.testing.assert_array_equal(x, np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(y, -np.arange(4, dtype=np.float32))


def test_memref_destination(engine):
    out = np.zeros((3, 2), np.float32)
    assert engine.invoke("fill", out, 7.0) is None
    np.testing.assert_array_equal(out, np.full((3, 2), 7.0, np.float32))


def test_results_are_freed(engine):
    # 2 MiB per result: 300 leaked calls would add 600 MiB of resident memory.
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    x = np.ones((512, 1024), np.float32)
    for _ in range(20):
        engine.invoke("big", x)
    gc.collect()
    before = rss()
    for _ in range(300):
        y = engine.invoke("big", x)
        del y
    gc.collect()
    assert rss() - before < 100 * 2**20


def test_result_outlives_engine(rng):
    e = ExecutionEngine(MODULE)
    y = e.invoke("phi", np.zeros((2, 3), np.float32))
    del e
    gc.collect()
    np.testing.assert_array_equal(y, np.ones((2, 3), np.float32))


def test_function_object(engine):
    fn = engine.function("phi")
    assert fn.name == "phi"
    assert [s.type for s in fn.inputs] == ["tensor<2x3xf32>"]
    assert "tensor<2x3xf32>" in repr(fn)
    assert set(engine.function_names) >= {"phi", "two", "scalars"}
    assert "hidden" not in engine.function_names


@pytest.mark.parametrize("bad, error, match", [
    (np.zeros((2, 3), np.float64), TypeError, "expected dtype float32, got float64"),
    (np.zeros((2, 3), np.int32), TypeError, "expected dtype float32"),
    (np.zeros((2, 3, 1), np.float32), ValueError, "expected rank 2"),
    (np.zeros((3, 3), np.float32), ValueError, "dimension 0 must be 2"),
    (np.zeros((2, 6), np.float32)[:, ::2], ValueError, "not C-contiguous"),
    (np.zeros((3, 2), np.float32).T, ValueError, "not C-contiguous"),
    ([[0.0] * 3] * 2, TypeError, "expected a numpy array, got list"),
    (np.frombuffer(bytearray(25), np.float32, 6, 1).reshape(2, 3), ValueError,
     "not aligned"),
])
def test_argument_errors(engine, bad, error, match):
    with pytest.raises(error, match=match):
        engine.invoke("phi", bad)


def _mix_want(x, a, b, c, d):
    return x * np.float32(a) + np.float32(b) + np.float32(c) + np.float32(d)


def test_native_calls(engine, rng):
    fn = engine.function("mix", read_only=[0])
    if not EXPECT_NATIVE and not fn.native:
        pytest.skip("the native module is not built or is disabled")
    assert fn.native
    # Functions with results take the ctypes path.
    assert not engine.function("phi").native
    # With the ctypes function gone, only the native path can call.
    fn._cfunc = None
    for rows in (5, 1, 0, 1000):
        x = rand(rng, rows, 4)
        x.flags.writeable = False
        out = np.full((rows, 4), np.nan, np.float32)
        assert fn(x, 1.5, -0.25, 3, -7, out) is None
        np.testing.assert_allclose(out, _mix_want(x, 1.5, -0.25, 3, -7),
                                   rtol=1e-6)
    # Extremes of the integer kinds.
    x = np.ones((2, 4), np.float32)
    out = np.empty((2, 4), np.float32)
    fn(x, 0.0, 0.0, -2**40, 2**31 - 1, out)
    np.testing.assert_allclose(out, np.float32(-2**40) + np.float32(2**31 - 1))


@pytest.mark.parametrize("args", [
    # Numbers that are not exact floats and ints, and a bool for i64.
    lambda x, out: (x, np.float32(1.5), np.float64(-0.25), np.int64(3), -7,
                    out),
    lambda x, out: (x, 1.5, -0.25, True, np.int32(-7), out),
    # An int for the f32 and f64 scalars.
    lambda x, out: (x, 2, 1, 3, -7, out),
    # An i32 argument out of the int32 range (the ctypes path wraps it).
    lambda x, out: (x, 1.5, -0.25, 3, 2**32 - 7, out),
])
def test_native_misfits_take_the_checked_path(engine, rng, args):
    """Arguments the native path does not take exactly are called through
    ctypes, with the same result."""
    x = rand(rng, 6, 4)
    out = np.empty((6, 4), np.float32)
    call = args(x, out)
    engine.function("mix")(*call)
    a, b, c, d = call[1:5]
    np.testing.assert_allclose(
        out, _mix_want(x, float(a), float(b), int(c), np.int32(np.int64(d) - 2**32
                                                         if d >= 2**31 else d)),
        rtol=1e-6)


@pytest.mark.parametrize("bad, error, match", [
    (lambda x, out: (x.astype(np.float64), out), TypeError, "argument 0.*dtype"),
    (lambda x, out: (x, out.astype(np.float64)), TypeError, "argument 5.*dtype"),
    (lambda x, out: (x, out[:, None]), ValueError, "argument 5.*rank 2"),
    (lambda x, out: (x, out.T.copy().T), ValueError, "not C-contiguous"),
    (lambda x, out: (x, _readonly(out)), ValueError, "read-only"),
    (lambda x, out: (x, np.frombuffer(bytearray(97), np.float32, 24, 1)
                     .reshape(6, 4)), ValueError, "not aligned"),
    (lambda x, out: (x.tolist(), out), TypeError, "expected a numpy array"),
    # A buffer with the right format and shape that is not an ndarray.
    (lambda x, out: (x, memoryview(out)), TypeError,
     "expected a numpy array, got memoryview"),
    (lambda x, out: (x, out.view(np.int32)), TypeError, "argument 5.*dtype"),
    (lambda x, out: (x, out.byteswap().view(out.dtype.newbyteorder())),
     TypeError, "argument 5.*dtype"),
])
def test_native_errors_are_the_checked_path_errors(engine, rng, bad, error,
                                                   match):
    x, out = rand(rng, 6, 4), np.empty((6, 4), np.float32)
    first, last = bad(x, out)
    with pytest.raises(error, match=match):
        engine.invoke("mix", first, 1.0, 1.0, 1, 1, last)
    with pytest.raises(TypeError, match="expected an integer"):
        engine.invoke("mix", x, 1.0, 1.0, 1.5, 1, out)
    with pytest.raises(TypeError, match="takes 6 arguments, got 5"):
        engine.invoke("mix", x, 1.0, 1.0, 1, out)


def test_native_static_sizes(engine):
    fn = engine.function("fill")
    assert fn.native or not EXPECT_NATIVE
    with pytest.raises(ValueError, match="dimension 0 must be 3"):
        fn(np.zeros((2, 3), np.float32), 1.0)
    with pytest.raises(ValueError, match="dimension 1 must be 2"):
        fn(np.zeros((3, 3), np.float32), 1.0)


def test_native_module_of_another_layout_is_not_used(engine, monkeypatch):
    module = _capi.native_call_module()
    if module is None:
        assert not EXPECT_NATIVE
        pytest.skip("the native module is not built or is disabled")
    monkeypatch.setattr(module, "PLAN_RECORD_SIZE", 0)
    fn = engine.function("fill")
    assert not fn.native
    out = np.zeros((3, 2), np.float32)
    fn(out, 2.0)
    np.testing.assert_array_equal(out, np.full((3, 2), 2.0, np.float32))


def _readonly(a):
    a.flags.writeable = False
    return a


def test_call_errors(engine):
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="takes 1 arguments, got 2"):
        engine.invoke("phi", x, x)
    with pytest.raises(KeyError, match="no public function @nope"):
        engine.invoke("nope", x)
    with pytest.raises(KeyError, match="no public function @hidden"):
        engine.invoke("hidden")
    with pytest.raises(TypeError, match="expected an integer"):
        engine.invoke("scalars", 1.0, 2.5, 1)
    with pytest.raises(TypeError, match="expected a number"):
        engine.invoke("scalars", "1", 2, 1)
    readonly = np.zeros((3, 2), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        engine.invoke("fill", readonly, 1.0)
    with pytest.raises(TypeError, match="bf16.*not supported"):
        engine.invoke("bf16", np.zeros(4, np.float16))


def test_compile_errors():
    with pytest.raises(MLIRError, match="cannot parse"):
        ExecutionEngine("func.func @f( {")
    with pytest.raises(MLIRError, match="does not refer to a registered pass"):
        ExecutionEngine(MODULE, pipeline="no-such-pipeline")
    with pytest.raises(ValueError, match="opt_level"):
        ExecutionEngine(MODULE, opt_level=7)
    with pytest.raises(FileNotFoundError):
        ExecutionEngine(MODULE, shared_libs=["/nonexistent/libfoo.so"])
    # Without the LLVM lowering, translation to LLVM IR fails.
    with pytest.raises(MLIRError, match="cannot JIT-compile"):
        ExecutionEngine(MODULE, pipeline="canonicalize")


def _host_lacked_feature():
    """An instruction-set feature (LLVM's name) the host CPU lacks, by
    /proc/cpuinfo; None when it has them all or there is no such file."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((set(line.split(":", 1)[1].split()) for line in f
                          if line.startswith("flags")), None)
    except OSError:
        return None
    for llvm_name, flag in (("avx512fp16", "avx512_fp16"),
                            ("amx-tile", "amx_tile")):
        if flags is not None and flag not in flags:
            return llvm_name
    return None


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 CPU names")
def test_code_for_other_cpus():
    # A CPU the host can run (every x86-64 host today has x86-64-v2).
    e = ExecutionEngine(MODULE,
                        pipeline="linattn-lower-to-cpu{target-cpu=x86-64-v2}")
    x = np.array([[-1, 0, 1], [2, -3, 0.5]], np.float32)
    np.testing.assert_allclose(e.invoke("phi", x), ref.feature_map("elu", x),
                               rtol=1e-6)
    with pytest.raises(MLIRError, match="unknown target CPU 'bogus'"):
        ExecutionEngine(MODULE,
                        pipeline="linattn-lower-to-cpu{target-cpu=bogus}")
    # Code that may use instructions the host lacks is refused before the
    # JIT compiles it: calling it could stop the process.
    lacked = _host_lacked_feature()
    if lacked is None:
        pytest.skip("the host has every feature this test tries")
    with pytest.raises(MLIRError, match="cannot run on this host's CPU(.|\n)*"
                       f"does not have: .*{lacked}"):
        ExecutionEngine(MODULE, pipeline="linattn-lower-to-cpu"
                        f"{{target-features=+{lacked}}}")


def test_engine_from_module_leaves_module_unchanged():
    m = Module.parse(MODULE)
    before = str(m)
    e = ExecutionEngine(m, opt_level=0)
    assert str(m) == before
    assert "llvm.func" in str(e.lowered_module)


def test_linattn_scan_through_the_engine(rng):
    text = """
func.func @scan(%q: tensor<2x9x4xf64>, %k: tensor<2x9x4xf64>, %v: tensor<2x9x3xf64>)
    -> (tensor<2x9x3xf64>, tensor<2x4x3xf64>, tensor<2x4xf64>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-6)
      : tensor<2x9x4xf64>, tensor<2x9x4xf64>, tensor<2x9x3xf64>
      -> tensor<2x9x3xf64>, tensor<2x4x3xf64>, tensor<2x4xf64>
  return %o, %s, %z : tensor<2x9x3xf64>, tensor<2x4x3xf64>, tensor<2x4xf64>
}"""
    q = rand(rng, 2, 9, 4, dtype=np.float64, low=0.0)
    k = rand(rng, 2, 9, 4, dtype=np.float64, low=0.0)
    v = rand(rng, 2, 9, 3, dtype=np.float64)
    o, s, z = ExecutionEngine(text).invoke("scan", q, k, v)
    want_o, want_s, want_z = ref.causal_linear_attention_rnn(
        q, k, v, feature_map="identity")
    assert rel_err(o, want_o) < 1e-12
    assert rel_err(s, want_s) < 1e-12
    assert rel_err(z, want_z) < 1e-12


@pytest.mark.skipif(not any(p.endswith(("libomp.so", "libomp.so.5"))
                            for p in default_shared_libs()),
                    reason="LLVM's OpenMP runtime (libomp-22-dev) is absent")
def test_openmp_loops_run_through_libomp():
    """Code lowered through the omp dialect calls libomp, which the engine
    loads by default."""
    text = """
func.func @iota(%out: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %out[%i] : memref<1000xf32>
    scf.reduce
  }
  return
}"""
    pipeline = ("func.func(llvm-request-c-wrappers),convert-scf-to-openmp,"
                "convert-scf-to-cf,convert-openmp-to-llvm,"
                "finalize-memref-to-llvm,convert-func-to-llvm,"
                "convert-arith-to-llvm,convert-cf-to-llvm,"
                "convert-index-to-llvm,reconcile-unrealized-casts")
    e = ExecutionEngine(text, pipeline=pipeline)
    assert "omp.parallel" in str(e.lowered_module)
    out = np.zeros(1000, np.float32)
    e.invoke("iota", out)
    np.testing.assert_array_equal(out, np.arange(1000, dtype=np.float32))


#===------------------------------------------------------------------------===#
# The caching host allocator
#===------------------------------------------------------------------------===#

def _delta(before, after):
    return after.hits - before.hits, after.misses - before.misses


def test_freed_results_return_to_the_host_cache(engine, rng):
    linattn.release_host_cache()
    x = rand(rng, 512, 1024)
    y = engine.invoke("big", x)  # 2 MiB, from the C library or the cache
    address = y.__array_interface__["data"][0]
    del y
    gc.collect()
    before = linattn.host_cache_stats()
    assert before.cached_bytes >= 2 * 2**20
    y = engine.invoke("big", x)
    hits, misses = _delta(before, linattn.host_cache_stats())
    assert (hits, misses) == (1, 0)
    assert y.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_live_results_are_never_reused(engine, rng):
    xs = [rand(rng, 512, 1024) for _ in range(3)]
    ys = [engine.invoke("big", x) for x in xs]
    addresses = {y.__array_interface__["data"][0] for y in ys}
    assert len(addresses) == 3
    for x, y in zip(xs, ys):
        np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_backward_pass_is_served_by_the_host_cache(rng):
    """The gradients' intermediates (megabytes each) are freed and allocated
    again by every call: the second identical call allocates nothing new."""
    q, k, v, do = (rand(rng, 1, 2, 512, 64) for _ in range(4))
    first = linattn.linear_attention_grad(q, k, v, do, causal=True)
    del first
    gc.collect()
    before = linattn.host_cache_stats()
    second = linattn.linear_attention_grad(q, k, v, do, causal=True)
    hits, misses = _delta(before, linattn.host_cache_stats())
    assert hits >= 6 and misses == 0, (hits, misses)
    want = ref.linear_attention_grad(q, k, v, do, causal=True)
    for got, w in zip(second, want):
        assert rel_err(got, w) < 1e-4


def test_system_host_allocator(rng):
    e = ExecutionEngine(MODULE, host_allocator="system")
    assert e.free is not linattn.jit.lib().linattnHostFree
    x = rand(rng, 512, 1024)
    before = linattn.host_cache_stats()
    for _ in range(3):
        np.testing.assert_array_equal(e.invoke("big", x), np.maximum(x, 0))
    gc.collect()
    assert _delta(before, linattn.host_cache_stats()) == (0, 0)
    with pytest.raises(ValueError, match="host_allocator must be one of"):
        ExecutionEngine(MODULE, host_allocator="pooled")


def test_host_cache_limit_and_release(engine, rng):
    x = rand(rng, 512, 1024)
    previous = linattn.set_host_cache_limit(0)
    try:
        assert linattn.host_cache_stats().cached_bytes == 0
        y = engine.invoke("big", x)
        del y
        gc.collect()
        assert linattn.host_cache_stats().cached_bytes == 0
        assert linattn.set_host_cache_limit(previous) == 0
        y = engine.invoke("big", x)
        del y
        gc.collect()
        held = linattn.host_cache_stats().cached_bytes
        assert held >= 2 * 2**20
        assert linattn.release_host_cache() == held
        assert linattn.host_cache_stats().cached_bytes == 0
    finally:
        linattn.set_host_cache_limit(previous)
    with pytest.raises(ValueError, match="limit_bytes must be >= 0"):
        linattn.set_host_cache_limit(-1)


def test_host_cache_limit_from_the_environment():
    code = "import linattn; print(linattn.host_cache_stats().limit_bytes)"
    env = dict(os.environ, LINATTN_HOST_CACHE_LIMIT="12345")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "12345"


def test_outputs_of_the_attention_functions_come_from_the_host_cache(rng):
    q, k, v = (rand(rng, 1, 2, 512, 64) for _ in range(3))
    o = linattn.linear_attention(q, k, v)  # 256 KiB
    assert type(o.base).__name__ == "_ResultBuffer"
    assert o.flags.c_contiguous and o.flags.writeable and o.flags.aligned
    assert o.__array_interface__["data"][0] % 64 == 0
    np.testing.assert_allclose(o, ref.linear_attention(q, k, v), rtol=0,
                               atol=1e-5 * np.abs(o).max())
    address = o.__array_interface__["data"][0]
    linattn.release_host_cache()
    del o
    gc.collect()
    assert linattn.host_cache_stats().cached_bytes >= 512 * 64 * 2 * 4
    again = linattn.linear_attention(q, k, v)
    assert again.__array_interface__["data"][0] == address
    # Small outputs are plain numpy arrays.
    small = linattn.linear_attention(
        *(np.ascontiguousarray(x[:, :, :8]) for x in (q, k, v)))
    assert small.base is None
