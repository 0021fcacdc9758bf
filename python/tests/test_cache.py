"""The compile cache: keyed by shapes, dtype and options."""

import numpy as np
import pytest

import linattn
from linattn import attention

from conftest import rand


@pytest.fixture(autouse=True)
def fresh_cache():
    linattn.clear_cache()
    yield
    linattn.clear_cache()


def call(rng, shape=(1, 2, 5, 4), dtype=np.float32, **options):
    q, k, v = (rand(rng, *shape, dtype=dtype) for _ in range(3))
    return linattn.linear_attention(q, k, v, **options)


def test_hits_and_misses(rng):
    assert linattn.cache_info() == (0, 0, 128, 0)
    call(rng)
    assert linattn.cache_info()[:2] == (0, 1)
    call(rng)
    call(rng)
    info = linattn.cache_info()
    assert (info.hits, info.misses, info.currsize) == (2, 1, 1)


@pytest.mark.parametrize("change", [
    dict(shape=(1, 2, 6, 4)),
    dict(shape=(2, 2, 5, 4)),
    dict(dtype=np.float64),
    dict(causal=False),
    dict(normalize=False),
    dict(eps=1e-3),
    dict(feature_map="relu"),
])
def test_every_key_part_misses(rng, change):
    call(rng)
    call(rng, **change)
    assert linattn.cache_info().misses == 2
    call(rng, **change)
    assert linattn.cache_info().hits == 1


def test_eps_ignored_without_normalization(rng):
    call(rng, normalize=False, eps=1e-6)
    call(rng, normalize=False, eps=0.5)
    assert linattn.cache_info()[:2] == (1, 1)


def test_decode_steps_reuse_one_kernel(rng):
    state = linattn.RecurrentState(1, 2, 4)
    for _ in range(5):
        state.step(rand(rng, 1, 2, 4), rand(rng, 1, 2, 4), rand(rng, 1, 2, 4))
    info = linattn.cache_info()
    assert (info.hits, info.misses) == (4, 1)
    # A second state of the same configuration shares it.
    linattn.RecurrentState(1, 2, 4).step(rand(rng, 1, 2, 4),
                                         rand(rng, 1, 2, 4),
                                         rand(rng, 1, 2, 4))
    assert linattn.cache_info().hits == 5


def test_lru_eviction(rng, monkeypatch):
    monkeypatch.setattr(attention._cache, "maxsize", 2)
    call(rng, shape=(1, 1, 3, 4))
    call(rng, shape=(1, 1, 4, 4))
    call(rng, shape=(1, 1, 3, 4))      # hit: now the most recent
    call(rng, shape=(1, 1, 5, 4))      # evicts (1, 1, 4, 4)
    assert linattn.cache_info().currsize == 2
    call(rng, shape=(1, 1, 3, 4))
    assert linattn.cache_info()[:2] == (2, 3)
    call(rng, shape=(1, 1, 4, 4))
    assert linattn.cache_info()[:2] == (2, 4)


def test_clear(rng):
    call(rng)
    linattn.clear_cache()
    assert linattn.cache_info() == (0, 0, 128, 0)
    call(rng)
    assert linattn.cache_info().misses == 1


def test_cached_call_is_fast(rng):
    import time
    q, k, v = (rand(rng, 1, 2, 16, 8) for _ in range(3))
    linattn.linear_attention(q, k, v)
    start = time.perf_counter()
    for _ in range(50):
        linattn.linear_attention(q, k, v)
    per_call = (time.perf_counter() - start) / 50
    assert per_call < 0.01  # no recompilation (compiling takes ~0.1 s)
