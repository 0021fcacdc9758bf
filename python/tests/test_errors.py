"""Every error path of linear_attention raises a clear Python error before
anything is compiled."""

import numpy as np
import pytest

import linattn
from linattn.backends import BackendUnavailable, get_backend

from conftest import HAS_EMULATOR, rand


@pytest.fixture
def qkv(rng):
    return (rand(rng, 1, 2, 6, 4), rand(rng, 1, 2, 6, 4), rand(rng, 1, 2, 6, 3))


def test_no_compilation_on_errors(qkv):
    q, k, v = qkv
    before = linattn.cache_info().misses
    with pytest.raises(TypeError):
        linattn.linear_attention(q.astype(np.int32), k, v)
    assert linattn.cache_info().misses == before


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.complex64,
                                   np.longdouble])
def test_wrong_dtype(qkv, dtype):
    q, k, v = qkv
    with pytest.raises(TypeError, match="float16, float32 or float64"):
        linattn.linear_attention(q.astype(dtype), k.astype(dtype),
                                 v.astype(dtype))


def test_mixed_dtypes(qkv):
    q, k, v = qkv
    with pytest.raises(TypeError, match="same dtype.*q: float32, k: float64"):
        linattn.linear_attention(q, k.astype(np.float64), v)


def test_not_an_array(qkv):
    q, k, v = qkv
    with pytest.raises(TypeError, match="q must be a numpy array, got list"):
        linattn.linear_attention(q.tolist(), k, v)


@pytest.mark.parametrize("shape", [(2, 6, 4), (6, 4), (1, 1, 2, 6, 4)])
def test_wrong_rank(qkv, shape):
    q, k, v = qkv
    with pytest.raises(ValueError, match=r"q must have rank 4 \(\[B, H, N, D\]\)"):
        linattn.linear_attention(np.zeros(shape, np.float32), k, v)


def test_mismatched_batch_heads(rng, qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="share batch and head"):
        linattn.linear_attention(q, rand(rng, 1, 3, 6, 4), v)
    with pytest.raises(ValueError, match="share batch and head"):
        linattn.linear_attention(q, k, rand(rng, 2, 2, 6, 3))


def test_mismatched_head_dim(rng, qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="same head dimension D, got 4 and 5"):
        linattn.linear_attention(q, rand(rng, 1, 2, 6, 5), v)


def test_mismatched_key_value_lengths(rng, qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="same sequence length M, got 6 and 7"):
        linattn.linear_attention(q, k, rand(rng, 1, 2, 7, 3), causal=False)


def test_causal_needs_square(rng, qkv):
    q, _, _ = qkv
    with pytest.raises(ValueError, match="N = 6 and M = 5.*causal=False"):
        linattn.linear_attention(q, rand(rng, 1, 2, 5, 4),
                                 rand(rng, 1, 2, 5, 3))


@pytest.mark.parametrize("which", [0, 1, 2])
def test_non_contiguous(rng, qkv, which):
    args = list(qkv)
    big = rand(rng, *args[which].shape[:-1], 2 * args[which].shape[-1])
    args[which] = big[..., ::2]
    name = "qkv"[which]
    with pytest.raises(ValueError, match=f"{name} is not C-contiguous"):
        linattn.linear_attention(*args)


def test_transposed_is_non_contiguous(rng):
    q = rand(rng, 1, 2, 4, 6).transpose(0, 1, 3, 2)  # [1, 2, 6, 4], F-order
    with pytest.raises(ValueError, match="q is not C-contiguous"):
        linattn.linear_attention(q, q.copy(), q.copy())


def test_empty_sequence(rng):
    empty = np.zeros((1, 2, 0, 4), np.float32)
    with pytest.raises(ValueError, match="empty dimension 2"):
        linattn.linear_attention(empty, empty, np.zeros((1, 2, 0, 3),
                                                        np.float32))
    with pytest.raises(ValueError, match="k has an empty dimension 2"):
        linattn.linear_attention(rand(rng, 1, 2, 3, 4), empty,
                                 np.zeros((1, 2, 0, 3), np.float32),
                                 causal=False)


def test_empty_head_dim():
    z = np.zeros((1, 2, 3, 0), np.float32)
    with pytest.raises(ValueError, match="empty dimension 3"):
        linattn.linear_attention(z, z, z)


def test_options(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="unknown feature_map 'softmax'"):
        linattn.linear_attention(q, k, v, feature_map="softmax")
    for eps in (0.0, -1e-6, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="eps must be a finite number > 0"):
            linattn.linear_attention(q, k, v, eps=eps)
    # eps does not matter without normalization.
    linattn.linear_attention(q, k, v, normalize=False, eps=0.0)


def test_compile_options_errors(qkv):
    q, k, v = qkv
    before = linattn.cache_info().misses
    with pytest.raises(TypeError, match="compile_options must be a mapping"):
        linattn.linear_attention(q, k, v, compile_options=[("chunk-size", 16)])
    with pytest.raises(ValueError, match="'Chunk_Size' is not an option name"):
        linattn.linear_attention(q, k, v, compile_options={"Chunk_Size": 16})
    with pytest.raises(ValueError, match="'c-interface' is set by the backend"):
        linattn.linear_attention(q, k, v, compile_options={"c-interface": False})
    for value in (1.5, None, "two words", "a}b"):
        with pytest.raises(ValueError, match="the value of 'chunk-size' must be "
                                             "a bool, an integer or a word"):
            linattn.linear_attention(q, k, v, compile_options={"chunk-size": value})
    assert linattn.cache_info().misses == before
    # Names the pipeline does not know are the caller's error too.
    with pytest.raises(ValueError, match="compile_options no-such-option=1 are "
                                         "not options of backend='cpu'"):
        linattn.linear_attention(q, k, v, compile_options={"no-such-option": 1})
    with pytest.raises(ValueError, match="not options of backend='cpu'"):
        linattn.linear_attention(q, k, v, compile_options={"num-threads": "abc"})


def test_projection_errors(rng, qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="'favor' needs a projection"):
        linattn.linear_attention(q, k, v, feature_map="favor")
    with pytest.raises(ValueError, match="only used by feature_map='favor'"):
        linattn.linear_attention(q, k, v, projection=rand(rng, 4, 8))
    with pytest.raises(ValueError, match="projection has 5 rows"):
        linattn.linear_attention(q, k, v, feature_map="favor",
                                 projection=rand(rng, 5, 8))
    with pytest.raises(ValueError, match=r"projection must have rank 2"):
        linattn.linear_attention(q, k, v, feature_map="favor",
                                 projection=rand(rng, 4))
    with pytest.raises(TypeError, match="same dtype"):
        linattn.linear_attention(q, k, v, feature_map="favor",
                                 projection=rand(rng, 4, 8, dtype=np.float64))


def test_out_errors(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match=r"out must have shape \(1, 2, 6, 3\)"):
        linattn.linear_attention(q, k, v, out=np.empty((1, 2, 6, 4),
                                                       np.float32))
    with pytest.raises(ValueError, match="dtype float32"):
        linattn.linear_attention(q, k, v, out=np.empty((1, 2, 6, 3)))
    with pytest.raises(ValueError, match="C-contiguous and writeable"):
        linattn.linear_attention(q, k, v, out=np.empty((1, 2, 3, 6),
                                                       np.float32).swapaxes(2, 3))


def test_backends(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        linattn.linear_attention(q, k, v, backend="tpu")
    assert "cpu" in linattn.available_backends()
    assert HAS_EMULATOR == ("gpu-emulator" in linattn.available_backends())
    if "cuda" not in linattn.available_backends():
        # BackendUnavailable is a NotImplementedError.
        with pytest.raises(NotImplementedError,
                           match="backend='cuda' is not available"):
            linattn.linear_attention(q, k, v, backend="cuda")
        with pytest.raises(BackendUnavailable):
            get_backend("cuda").check_available()
