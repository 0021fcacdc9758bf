"""Shared helpers for the linattn test suite.

Run from the repository with the build tree's library:

    PYTHONPATH=python LINATTN_LIBRARY=build/lib/libLinAttnCAPI.so \
        python3 -m pytest python/tests
"""

import numpy as np
import pytest

from linattn import find_library
from linattn import reference as ref

# The GPU emulator runtime links Debian's libMLIR.so, so the relocatable
# bundle's self-contained libLinAttnCAPI.so (bench/gpu/device.sh) comes
# without it; every build has it.
HAS_EMULATOR = (find_library().parent / "liblinattn_gpu_emulator.so").is_file()
needs_emulator = pytest.mark.skipif(
    not HAS_EMULATOR, reason="no liblinattn_gpu_emulator.so beside the library")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def rand(rng, *shape, dtype=np.float32, low=-1.0, high=1.0):
    """Uniform in [low, high), as a C-contiguous array of `dtype`."""
    return rng.uniform(low, high, shape).astype(dtype)


def rel_err(got, want):
    """max |got - want| / max |want|, the measure the CPU tests use."""
    want = np.asarray(want, dtype=np.float64)
    scale = max(float(np.max(np.abs(want))), 1e-30)
    return float(np.max(np.abs(np.asarray(got, np.float64) - want)) / scale)


# float16: two units in the last place at 1 (2^-10 each): the output's
# rounding and the features' (φ is computed in the data type).
TOL = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}


def normalized_cancellation(feature_map, q, k, v, do, causal, projection=None,
                            eps=1e-6):
    """How much larger than dφ(Q) and dφ(K) the terms they sum are,
    normalized, as (for dq, for dk): with g_i = dO_i / D_i and h_i =
    -(dO_i·N_i) / D_i², dφ(q_i) = Σ_j (g_i·v_j + h_i) φ(k_j) and dφ(k_j) =
    Σ_i (g_i·v_j + h_i) φ(q_i), where g_i·v_j + h_i = g_i·(v_j - O_i)
    cancels (O_i does not change with the scale of φ(q_i), so dφ(q_i) is
    orthogonal to φ(q_i)). g and h are rounded to the data type before the
    scans, so the gradients' error is that rounding times these terms, not
    times the gradients (the host path computes them the same way)."""
    fq = ref.feature_map(feature_map, q, projection)
    fk = ref.feature_map(feature_map, k, projection)
    a = fq @ np.swapaxes(fk, -1, -2)
    mask = np.tril(np.ones(a.shape[-2:])) if causal else np.ones(a.shape[-2:])
    a = a * mask
    denominator = a.sum(-1) + eps
    g = do / denominator[..., None]
    h = -(do * (a @ v)).sum(-1) / denominator**2
    # The coefficients g_i·v_j + h_i of both sums, and their magnitudes.
    coefficients = (g @ np.swapaxes(v, -1, -2) + h[..., None]) * mask
    magnitudes = (np.abs(g @ np.swapaxes(v, -1, -2)) +
                  np.abs(h)[..., None]) * mask
    kappas = []
    for coefficient, magnitude, features in (
            (coefficients, magnitudes, fk),
            (np.swapaxes(coefficients, -1, -2),
             np.swapaxes(magnitudes, -1, -2), fq)):
        terms = magnitude @ np.abs(features)
        grad = coefficient @ features
        kappas.append(np.max(terms) /
                      max(np.max(np.abs(grad)), 1e-300))
    return tuple(kappas)
