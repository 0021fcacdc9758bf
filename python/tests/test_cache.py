"""The compile cache: keyed by head sizes, dtype and options."""

import numpy as np
import pytest

import linattn
from linattn import attention
from linattn import reference as ref

from conftest import TOL, rand, rel_err


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
    dict(shape=(1, 2, 5, 6)),
    dict(dtype=np.float64),
    dict(causal=False),
    dict(normalize=False),
    dict(eps=1e-3),
    dict(feature_map="relu"),
    dict(compile_options={"num-threads": 1}),
])
def test_every_key_part_misses(rng, change):
    call(rng)
    call(rng, **change)
    assert linattn.cache_info().misses == 2
    call(rng, **change)
    assert linattn.cache_info().hits == 1


def test_compile_options_in_any_order_share_a_kernel(rng):
    call(rng, compile_options={"num-threads": 1, "chunk-size": 16})
    call(rng, compile_options={"chunk-size": 16, "num-threads": 1})
    info = linattn.cache_info()
    assert (info.hits, info.misses) == (1, 1)


@pytest.mark.parametrize("causal", [True, False])
def test_batch_heads_and_lengths_share_a_kernel(rng, causal):
    # Only D and Dv are in the compiled code; every other size is read at
    # run time, and each call is still right.
    shapes = [(1, 2, 5, 4), (2, 2, 5, 4), (1, 3, 9, 4), (3, 1, 1, 4),
              (2, 1, 300, 4)]
    for shape in shapes:
        q, k, v = (rand(rng, *shape) for _ in range(3))
        got = linattn.linear_attention(q, k, v, causal=causal)
        want = ref.linear_attention(q, k, v, causal=causal)
        assert rel_err(got, want) < TOL[np.float32], shape
    info = linattn.cache_info()
    assert (info.misses, info.hits) == (1, len(shapes) - 1)
    # Cross-attention with other lengths and value size: a new Dv misses
    # once, then N != M hits.
    if not causal:
        q = rand(rng, 2, 2, 7, 4)
        for m, dv in ((11, 3), (4, 3)):
            k = rand(rng, 2, 2, m, 4)
            v = rand(rng, 2, 2, m, dv)
            got = linattn.linear_attention(q, k, v, causal=False)
            want = ref.linear_attention(q, k, v, causal=False)
            assert rel_err(got, want) < TOL[np.float32]
        assert linattn.cache_info().misses == 2


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
    # A second state of the same configuration shares it, also with another
    # batch size and head count.
    linattn.RecurrentState(1, 2, 4).step(rand(rng, 1, 2, 4),
                                         rand(rng, 1, 2, 4),
                                         rand(rng, 1, 2, 4))
    linattn.RecurrentState(3, 5, 4).step(rand(rng, 3, 5, 4),
                                         rand(rng, 3, 5, 4),
                                         rand(rng, 3, 5, 4))
    assert linattn.cache_info()[:2] == (6, 1)


def test_prompts_of_any_length_share_a_kernel(rng):
    state = linattn.RecurrentState(2, 3, 4)
    for t in (1, 7, 64, 3):
        state.update(rand(rng, 2, 3, t, 4), rand(rng, 2, 3, t, 4),
                     rand(rng, 2, 3, t, 4))
    assert linattn.cache_info()[:2] == (3, 1)


def test_lru_eviction(rng, monkeypatch):
    monkeypatch.setattr(attention._cache, "maxsize", 2)
    call(rng, shape=(1, 1, 3, 3))
    call(rng, shape=(1, 1, 3, 4))
    call(rng, shape=(1, 1, 3, 3))      # hit: now the most recent
    call(rng, shape=(1, 1, 3, 5))      # evicts D = 4
    assert linattn.cache_info().currsize == 2
    call(rng, shape=(1, 1, 3, 3))
    assert linattn.cache_info()[:2] == (2, 3)
    call(rng, shape=(1, 1, 3, 4))
    assert linattn.cache_info()[:2] == (2, 4)


def test_clear(rng):
    call(rng)
    linattn.clear_cache()
    assert linattn.cache_info() == (0, 0, 128, 0)
    call(rng)
    assert linattn.cache_info().misses == 1


def test_cached_call_is_fast(rng):
    # A call that hits the cache costs a small fraction of the first one,
    # which compiles: the best of five rounds, so that a loaded machine
    # (CI beside a build) does not fail it, against that first call.
    import time
    q, k, v = (rand(rng, 1, 2, 16, 8) for _ in range(3))
    start = time.perf_counter()
    linattn.linear_attention(q, k, v)
    first = time.perf_counter() - start
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(10):
            linattn.linear_attention(q, k, v)
        rounds.append((time.perf_counter() - start) / 10)
    assert min(rounds) < first / 10, (min(rounds), first)
    assert linattn.cache_info().misses == 1
