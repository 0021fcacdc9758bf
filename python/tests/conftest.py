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
    """`reference.normalized_cancellation`: (for dq, for dk)."""
    return ref.normalized_cancellation(q, k, v, do, feature_map=feature_map,
                                       causal=causal, eps=eps,
                                       projection=projection)
