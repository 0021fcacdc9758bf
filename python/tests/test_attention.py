"""linear_attention against float64 numpy references."""

import numpy as np
import pytest

import linattn
from linattn import reference as ref

from conftest import TOL, rand, rel_err

FEATURE_MAPS = ["elu", "relu", "identity", "poly2", "favor"]


def inputs(rng, b, h, n, m, d, dv, dtype=np.float32, feature_map="elu",
           num_features=8):
    """q, k, v (and a favor projection). Inputs of the identity and relu maps
    are shifted positive so that normalizers stay away from zero."""
    low = 0.0 if feature_map in ("identity", "relu") else -1.0
    q = rand(rng, b, h, n, d, dtype=dtype, low=low)
    k = rand(rng, b, h, m, d, dtype=dtype, low=low)
    v = rand(rng, b, h, m, dv, dtype=dtype)
    p = None
    if feature_map == "favor":
        p = (rng.standard_normal((d, num_features)) / np.sqrt(d)).astype(dtype)
    return q, k, v, p


@pytest.mark.parametrize("feature_map", FEATURE_MAPS)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("dtype, n, m, d, dv", [
    (np.float32, 7, 5, 4, 3),
    # float16 summed over 70 tokens (its state and products in float32).
    (np.float16, 70, 50, 16, 24)])
def test_every_feature_map(rng, feature_map, causal, normalize, dtype, n, m,
                           d, dv):
    m = n if causal else m
    q, k, v, p = inputs(rng, 2, 3, n, m, d, dv, feature_map=feature_map,
                        dtype=dtype)
    got = linattn.linear_attention(q, k, v, feature_map=feature_map,
                                   causal=causal, normalize=normalize,
                                   projection=p)
    want = ref.linear_attention(q, k, v, feature_map=feature_map,
                                causal=causal, normalize=normalize,
                                projection=p)
    assert got.shape == (2, 3, n, dv) and got.dtype == dtype
    assert rel_err(got, want) < TOL[dtype]


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("feature_map", ["elu", "poly2"])
def test_float64(rng, causal, feature_map):
    q, k, v, _ = inputs(rng, 1, 2, 9, 9, 5, 6, dtype=np.float64)
    got = linattn.linear_attention(q, k, v, feature_map=feature_map,
                                   causal=causal, eps=1e-3)
    want = ref.linear_attention(q, k, v, feature_map=feature_map,
                                causal=causal, eps=1e-3)
    assert got.dtype == np.float64
    assert rel_err(got, want) < TOL[np.float64]


@pytest.mark.parametrize("causal", [True, False])
def test_float16_long_sums_in_float32(rng, causal):
    # 4000 tokens: summed in float16 the state and normalizer would keep
    # about 3 significant digits of sums near 4000 (spacing 2 there); in
    # float32 the error stays at the output's rounding.
    q, k, v, _ = inputs(rng, 1, 2, 4000, 4000, 32, 32, dtype=np.float16)
    got = linattn.linear_attention(q, k, v, causal=causal)
    assert rel_err(got, ref.linear_attention(q, k, v, causal=causal)) \
        < TOL[np.float16]


@pytest.mark.parametrize("n, m, d, dv", [
    (1, 1, 16, 16),
    (1, 9, 32, 8),       # one query, many keys
    (37, 5, 16, 48),     # Dv > D
    (128, 1000, 64, 16),
])
def test_cross_attention(rng, n, m, d, dv):
    q, k, v, _ = inputs(rng, 1, 2, n, m, d, dv)
    got = linattn.linear_attention(q, k, v, causal=False)
    want = ref.linear_attention(q, k, v, causal=False)
    assert got.shape == (1, 2, n, dv)
    assert rel_err(got, want) < TOL[np.float32]


@pytest.mark.parametrize("n, d, dv", [
    (1, 16, 16),
    (7, 32, 5),
    (1000, 16, 16),
    (100, 64, 64),
    (33, 128, 128),
])
def test_causal_shapes(rng, n, d, dv):
    q, k, v, _ = inputs(rng, 1, 2, n, n, d, dv)
    got = linattn.linear_attention(q, k, v)
    want = ref.linear_attention(q, k, v)
    assert rel_err(got, want) < TOL[np.float32]


@pytest.mark.parametrize("causal", [True, False])
def test_compile_options(rng, causal):
    # Options of linattn-lower-to-cpu: the scan chunked by the compiler,
    # one thread.
    q, k, v = (rand(rng, 2, 3, 70, 16) for _ in range(3))
    got = linattn.linear_attention(
        q, k, v, causal=causal,
        compile_options={"chunk-size": 16, "num-threads": 1})
    assert rel_err(got, ref.linear_attention(q, k, v, causal=causal)) \
        <= TOL[np.float32]


def test_matches_the_papers_rnn(rng):
    """The compiled causal kernel against a plain numpy transcription of the
    paper's recurrent algorithm (not the quadratic form)."""
    q, k, v, _ = inputs(rng, 2, 4, 200, 200, 32, 16)
    got = linattn.linear_attention(q, k, v, feature_map="elu", causal=True,
                                   normalize=True, eps=1e-6)
    want, _, _ = ref.causal_linear_attention_rnn(q, k, v, feature_map="elu",
                                                 eps=1e-6)
    assert rel_err(got, want) < TOL[np.float32]
    # And the two numpy forms agree with each other.
    assert rel_err(ref.linear_attention(q, k, v), want) < 1e-12


def test_batch_and_heads_are_independent(rng):
    q, k, v, _ = inputs(rng, 3, 2, 11, 11, 8, 4)
    full = linattn.linear_attention(q, k, v)
    one = linattn.linear_attention(q[1:2, 1:2].copy(), k[1:2, 1:2].copy(),
                                   v[1:2, 1:2].copy())
    np.testing.assert_allclose(full[1:2, 1:2], one, rtol=1e-6, atol=1e-7)


def test_out_argument(rng):
    q, k, v, _ = inputs(rng, 1, 2, 7, 7, 4, 3)
    out = np.full((1, 2, 7, 3), np.nan, np.float32)
    result = linattn.linear_attention(q, k, v, out=out)
    assert result is out
    assert rel_err(out, ref.linear_attention(q, k, v)) < TOL[np.float32]


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("alias", ["q", "k", "v"])
@pytest.mark.parametrize("shift", [0, 1])
def test_out_overlapping_an_input(rng, causal, alias, shift):
    # The kernels write `out` in place; one that overlaps an input must still
    # give the result computed from the inputs as they were: the input
    # itself, or (shift 1) the same memory one token further on, where
    # writing token t's output in place would overwrite input token t + 1
    # before it is read.
    n, d = 37, 8
    q, k, v, _ = inputs(rng, 1, 1, n, n, d, d)
    arrays = {"q": q, "k": k, "v": v}
    memory = np.empty((1, 1, n + shift, d), np.float32)
    memory[:, :, :n] = arrays[alias]
    arrays[alias] = memory[:, :, :n]
    out = memory[:, :, shift:]
    q, k, v = arrays["q"], arrays["k"], arrays["v"]
    want = ref.linear_attention(q, k, v, causal=causal)
    result = linattn.linear_attention(q, k, v, causal=causal, out=out)
    assert result is out
    assert rel_err(out, want) < TOL[np.float32]


def test_inputs_are_not_modified(rng):
    q, k, v, _ = inputs(rng, 1, 2, 7, 7, 4, 3)
    copies = [x.copy() for x in (q, k, v)]
    linattn.linear_attention(q, k, v)
    for x, c in zip((q, k, v), copies):
        np.testing.assert_array_equal(x, c)


def test_read_only_inputs(rng):
    q, k, v, _ = inputs(rng, 1, 1, 5, 5, 4, 4)
    for x in (q, k, v):
        x.flags.writeable = False
    got = linattn.linear_attention(q, k, v)
    assert rel_err(got, ref.linear_attention(q, k, v)) < TOL[np.float32]


def test_eps_is_used(rng):
    q, k, v, _ = inputs(rng, 1, 1, 6, 6, 4, 2)
    for eps in (1e-6, 0.5, 10.0):
        got = linattn.linear_attention(q, k, v, eps=eps)
        assert rel_err(got, ref.linear_attention(q, k, v, eps=eps)) < 1e-5


def token_major(x):
    """[B, H, N, X] -> [B, N, H, X], C-contiguous."""
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3))


@pytest.mark.parametrize("feature_map", FEATURE_MAPS)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("normalize", [True, False])
def test_token_major_layout(rng, feature_map, causal, normalize):
    # [B, N, H, D] arrays, as JAX and fast-transformers keep them: the same
    # result as on [B, H, N, D], in that layout. N != M when not causal, sizes
    # off the vector widths, and whole vectors (D = Dv = 16).
    for n, m, d, dv in ((37, 37 if causal else 23, 5, 3), (70, 70, 16, 16)):
        q, k, v, p = inputs(rng, 2, 3, n, m, d, dv, feature_map=feature_map)
        want = ref.linear_attention(q, k, v, feature_map=feature_map,
                                    causal=causal, normalize=normalize,
                                    projection=p)
        got = linattn.linear_attention(
            token_major(q), token_major(k), token_major(v),
            feature_map=feature_map, causal=causal, normalize=normalize,
            projection=p, layout="bnhd")
        assert got.shape == (2, n, 3, dv)
        assert rel_err(got, token_major(want)) < TOL[np.float32]


def test_token_major_out_and_float16(rng):
    q, k, v, _ = inputs(rng, 1, 4, 50, 50, 16, 8, dtype=np.float16)
    out = np.full((1, 50, 4, 8), np.nan, np.float16)
    result = linattn.linear_attention(token_major(q), token_major(k),
                                      token_major(v), out=out, layout="bnhd")
    assert result is out
    assert rel_err(out, token_major(ref.linear_attention(q, k, v))) < \
        TOL[np.float16]


def test_token_major_errors(rng):
    q, k, v, _ = inputs(rng, 1, 2, 7, 7, 4, 3)
    tq, tk, tv = token_major(q), token_major(k), token_major(v)
    with pytest.raises(ValueError, match="layout must be one of 'bhnd', "
                                         "'bnhd', got 'nhd'"):
        linattn.linear_attention(q, k, v, layout="nhd")
    with pytest.raises(ValueError, match="takes no initial_state"):
        linattn.linear_attention(tq, tk, tv, layout="bnhd",
                                 output_final_state=True)
    with pytest.raises(ValueError, match=r"rank 4 \(\[B, N, H, D\]\)"):
        linattn.linear_attention(tq[0], tk, tv, layout="bnhd")
    # Heads that disagree: k with 3 heads against q's 2.
    k3 = np.concatenate([tk, tk[:, :, :1]], axis=2)
    with pytest.raises(ValueError, match="batch and head"):
        linattn.linear_attention(tq, k3, tv, layout="bnhd")
    with pytest.raises(ValueError, match="shape"):
        linattn.linear_attention(tq, tk, tv, layout="bnhd",
                                 out=np.empty((1, 2, 7, 3), np.float32))
