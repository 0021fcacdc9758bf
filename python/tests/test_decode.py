"""RecurrentState: decoding token by token equals the full causal scan;
linear_attention from a state and returning its final state (segments)."""

import numpy as np
import pytest

import linattn
from linattn import RecurrentState
from linattn import reference as ref

from conftest import TOL, needs_emulator, rand, rel_err


def qkv(rng, b, h, n, d, dv, dtype=np.float32):
    return (rand(rng, b, h, n, d, dtype=dtype),
            rand(rng, b, h, n, d, dtype=dtype),
            rand(rng, b, h, n, dv, dtype=dtype))


def decode(state, q, k, v):
    outs = []
    for i in range(q.shape[2]):
        outs.append(state.step(np.ascontiguousarray(q[:, :, i]),
                               np.ascontiguousarray(k[:, :, i]),
                               np.ascontiguousarray(v[:, :, i])))
    return np.stack(outs, axis=2)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("feature_map", ["elu", "relu", "poly2", "favor"])
def test_decode_equals_full_scan(rng, dtype, feature_map):
    b, h, n, d, dv = 2, 3, 12, 4, 5
    q, k, v = qkv(rng, b, h, n, d, dv, dtype)
    if feature_map == "relu":
        q, k = np.abs(q), np.abs(k)
    p = None
    if feature_map == "favor":
        p = rng.standard_normal((d, 6)).astype(dtype)
    full = linattn.linear_attention(q, k, v, feature_map=feature_map,
                                    projection=p)
    state = RecurrentState(b, h, d, dv, feature_map=feature_map,
                           projection=p, dtype=dtype)
    got = decode(state, q, k, v)
    assert got.dtype == dtype
    assert rel_err(got, full) < 10 * TOL[dtype]
    want, s, z = ref.causal_linear_attention_rnn(q, k, v,
                                                 feature_map=feature_map,
                                                 projection=p)
    assert rel_err(got, want) < TOL[dtype]
    assert rel_err(state.S, s) < TOL[dtype]
    assert rel_err(state.z, z) < TOL[dtype]
    assert state.position == n
    assert state.S.dtype == state.z.dtype == state.state_dtype
    assert state.state_dtype == (np.float32 if dtype == np.float16 else dtype)
    assert state.S.shape == (b, h, state.feature_dim, dv)
    assert state.z.shape == (b, h, state.feature_dim)


def test_prompt_then_decode(rng):
    """update() a prompt with the scan, then step() the rest: the same as
    the whole sequence at once."""
    b, h, n, d, dv = 1, 4, 20, 8, 8
    q, k, v = qkv(rng, b, h, n, d, dv)
    full = linattn.linear_attention(q, k, v)
    state = RecurrentState(b, h, d)
    prompt = state.update(q[:, :, :13].copy(), k[:, :, :13].copy(),
                          v[:, :, :13].copy())
    rest = decode(state, q[:, :, 13:], k[:, :, 13:], v[:, :, 13:])
    got = np.concatenate([prompt, rest], axis=2)
    assert rel_err(got, full) < TOL[np.float32]
    assert state.position == n
    # Two updates in a row continue from the carried state too.
    state2 = RecurrentState(b, h, d)
    a = state2.update(q[:, :, :7].copy(), k[:, :, :7].copy(),
                      v[:, :, :7].copy())
    c = state2.update(q[:, :, 7:].copy(), k[:, :, 7:].copy(),
                      v[:, :, 7:].copy())
    assert rel_err(np.concatenate([a, c], axis=2), full) < TOL[np.float32]


def test_unnormalized_decode(rng):
    b, h, n, d, dv = 1, 2, 9, 4, 3
    q, k, v = qkv(rng, b, h, n, d, dv)
    state = RecurrentState(b, h, d, dv, normalize=False)
    got = decode(state, q, k, v)
    want = ref.linear_attention(q, k, v, normalize=False)
    assert rel_err(got, want) < TOL[np.float32]


def test_reset_and_copy(rng):
    b, h, n, d = 1, 2, 6, 4
    q, k, v = qkv(rng, b, h, n, d, d)
    state = RecurrentState(b, h, d)
    first = decode(state, q, k, v)
    branch = state.copy()
    state.reset()
    assert state.position == 0 and not state.S.any() and not state.z.any()
    again = decode(state, q, k, v)
    np.testing.assert_array_equal(first, again)
    # The copy kept the state from before the reset.
    assert branch.position == n
    np.testing.assert_array_equal(branch.S, state.S)
    step = branch.step(q[:, :, 0].copy(), k[:, :, 0].copy(), v[:, :, 0].copy())
    assert step.shape == (b, h, d) and branch.position == n + 1
    assert state.position == n
    assert "RecurrentState(" in repr(state)


def test_state_arrays_are_snapshots(rng):
    """S and z returned before a step keep their values after it."""
    b, h, d = 1, 1, 4
    q, k, v = qkv(rng, b, h, 2, d, d)
    state = RecurrentState(b, h, d)
    state.step(q[:, :, 0].copy(), k[:, :, 0].copy(), v[:, :, 0].copy())
    s_before = state.S
    saved = s_before.copy()
    state.step(q[:, :, 1].copy(), k[:, :, 1].copy(), v[:, :, 1].copy())
    np.testing.assert_array_equal(s_before, saved)
    assert not np.array_equal(state.S, saved)


def test_state_arrays_are_reused_when_not_handed_out(rng):
    """Steps nobody reads the state between write into the previous
    state's arrays (two buffers in turn, no fresh memory per token); the
    results are those of the scan all the same."""
    b, h, n, d = 2, 3, 9, 4
    q, k, v = qkv(rng, b, h, n, d, d)
    state = RecurrentState(b, h, d)
    got, buffers = [], set()
    for i in range(n):
        got.append(state.step(q[:, :, i].copy(), k[:, :, i].copy(),
                              v[:, :, i].copy()))
        if i >= 1:
            buffers.add((id(state._s), id(state._z)))
    assert len(buffers) == 2
    want, s, z = ref.causal_linear_attention_rnn(q, k, v)
    assert rel_err(np.stack(got, axis=2), want) < TOL[np.float32]
    assert rel_err(state.S, s) < TOL[np.float32]
    assert rel_err(state.z, z) < TOL[np.float32]


def test_handed_out_z_and_branches_stay_apart(rng):
    """z read between steps keeps its value too, and a copy stepped in turn
    with its original never shares an array with it."""
    b, h, n, d = 1, 2, 6, 4
    q, k, v = qkv(rng, b, h, 2 * n, d, d)
    state = RecurrentState(b, h, d)
    decode(state, q[:, :, :n], k[:, :, :n], v[:, :, :n])
    z_before = state.z
    saved = z_before.copy()
    branch = state.copy()
    for i in range(n, 2 * n):
        token = (q[:, :, i].copy(), k[:, :, i].copy(), v[:, :, i].copy())
        state.step(*token)
        branch.step(*token)
        assert not np.shares_memory(state._s, branch._s)
    np.testing.assert_array_equal(z_before, saved)
    np.testing.assert_array_equal(branch.S, state.S)
    np.testing.assert_array_equal(branch.z, state.z)
    _, s, z = ref.causal_linear_attention_rnn(q, k, v)
    assert rel_err(state.S, s) < TOL[np.float32]
    assert rel_err(branch.z, z) < TOL[np.float32]


def test_step_errors(rng):
    state = RecurrentState(2, 3, 4, 5)
    good_q = rand(rng, 2, 3, 4)
    good_v = rand(rng, 2, 3, 5)
    with pytest.raises(ValueError, match=r"rank 3 \(\[B, H, D\]\)"):
        state.step(rand(rng, 2, 3, 1, 4), good_q, good_v)
    with pytest.raises(ValueError, match=r"v must have shape \(2, 3, 5\)"):
        state.step(good_q, good_q, rand(rng, 2, 3, 4))
    with pytest.raises(ValueError, match=r"q must have shape \(2, 3, 4\)"):
        state.step(rand(rng, 1, 3, 4), good_q, good_v)
    with pytest.raises(TypeError, match="dtype float64, the state float32"):
        state.step(good_q.astype(np.float64), good_q, good_v)
    with pytest.raises(ValueError, match="not C-contiguous"):
        state.step(rand(rng, 2, 3, 8)[:, :, ::2], good_q, good_v)
    with pytest.raises(ValueError, match="empty dimension 2"):
        state.update(rand(rng, 2, 3, 0, 4), rand(rng, 2, 3, 0, 4),
                     rand(rng, 2, 3, 0, 5))
    with pytest.raises(ValueError, match="must have shape"):
        state.update(rand(rng, 2, 3, 3, 4), rand(rng, 2, 3, 2, 4),
                     rand(rng, 2, 3, 3, 5))
    assert state.position == 0


def test_constructor_errors():
    with pytest.raises(ValueError, match="heads must be a positive integer"):
        RecurrentState(1, 0, 4)
    with pytest.raises(TypeError,
                       match="dtype must be float16, float32 or float64"):
        RecurrentState(1, 1, 4, dtype=np.int16)
    with pytest.raises(ValueError, match="needs a projection"):
        RecurrentState(1, 1, 4, feature_map="favor")
    with pytest.raises(ValueError, match="unknown feature_map"):
        RecurrentState(1, 1, 4, feature_map="softmax")
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        RecurrentState(1, 1, 4, backend="tpu")
    if "cuda" not in linattn.available_backends():
        with pytest.raises(NotImplementedError, match="backend='cuda'"):
            RecurrentState(1, 1, 4, backend="cuda")


#===------------------------------------------------------------------------===#
# linear_attention(initial_state=, output_final_state=)
#===------------------------------------------------------------------------===#


def segments(q, k, v, cuts, **options):
    """linear_attention over the segments `cuts` splits the tokens into,
    each from the state the one before ended with: the outputs joined and
    the final state."""
    bounds = [0] + list(cuts) + [q.shape[2]]
    outs, state = [], None
    for lo, hi in zip(bounds, bounds[1:]):
        o, state = linattn.linear_attention(
            *(np.ascontiguousarray(x[:, :, lo:hi]) for x in (q, k, v)),
            initial_state=state, output_final_state=True, **options)
        outs.append(o)
    return np.concatenate(outs, axis=2), state


@pytest.mark.parametrize("feature_map", ["elu", "relu", "poly2", "favor"])
@pytest.mark.parametrize("normalize", [True, False])
def test_segments_equal_the_whole_sequence(rng, feature_map, normalize):
    # float64, segments of 7, 1 and 12 tokens: the whole sequence's outputs
    # and its final state (the float64 RNN's) to rounding.
    b, h, n, d, dv = 2, 3, 20, 4, 5
    q, k, v = qkv(rng, b, h, n, d, dv, np.float64)
    if feature_map == "relu":
        q, k = np.abs(q), np.abs(k)
    p = rng.standard_normal((d, 6)) if feature_map == "favor" else None
    options = dict(feature_map=feature_map, normalize=normalize, projection=p)
    got, (s, z) = segments(q, k, v, (7, 8), **options)
    want, want_s, want_z = ref.causal_linear_attention_rnn(q, k, v, **options)
    f = want_s.shape[-2]
    assert s.shape == (b, h, f, dv) and z.shape == (b, h, f)
    assert s.dtype == z.dtype == np.float64
    assert rel_err(got, want) < 1e-12
    assert rel_err(s, want_s) < 1e-12 and rel_err(z, want_z) < 1e-12


def test_state_is_the_recurrent_states(rng):
    # float16 data, float32 state: the final state RecurrentState.update
    # ends with; a given initial state is used and left unchanged.
    b, h, n, d, dv = 1, 2, 50, 16, 8
    q, k, v = qkv(rng, b, h, n, d, dv, np.float16)
    s0 = rng.uniform(0, 1, (b, h, d, dv)).astype(np.float32)
    z0 = rng.uniform(0.5, 1, (b, h, d)).astype(np.float32)
    kept = s0.copy(), z0.copy()
    o, (s, z) = linattn.linear_attention(q, k, v, initial_state=(s0, z0),
                                         output_final_state=True)
    assert o.dtype == np.float16 and s.dtype == z.dtype == np.float32
    assert np.array_equal(s0, kept[0]) and np.array_equal(z0, kept[1])
    state = RecurrentState(b, h, d, dv, dtype=np.float16)
    state.S[...], state.z[...] = s0, z0
    assert np.array_equal(o, state.update(q, k, v))
    assert np.array_equal(s, state.S) and np.array_equal(z, state.z)
    want, want_s, _ = ref.causal_linear_attention_rnn(q, k, v,
                                                      state=(s0, z0))
    # The features are rounded to float16 before they are summed.
    assert rel_err(o, want) < TOL[np.float16]
    assert rel_err(s, want_s) < TOL[np.float16]


def test_initial_state_alone_and_out(rng):
    # initial_state without output_final_state returns the outputs alone,
    # into `out` when given (also when `out` is the queries).
    q, k, v = qkv(rng, 1, 2, 9, 4, 4, np.float64)
    s0, z0 = rng.uniform(0, 1, (1, 2, 4, 4)), rng.uniform(0.5, 1, (1, 2, 4))
    want, _, _ = ref.causal_linear_attention_rnn(q, k, v, state=(s0, z0))
    o = linattn.linear_attention(q, k, v, initial_state=(s0, z0))
    assert isinstance(o, np.ndarray) and rel_err(o, want) < 1e-12
    out = np.empty_like(o)
    assert linattn.linear_attention(q, k, v, initial_state=(s0, z0),
                                    out=out) is out
    assert rel_err(out, want) < 1e-12
    got = linattn.linear_attention(q, k, v, initial_state=(s0, z0), out=q)
    assert got is q and rel_err(q, want) < 1e-12


@needs_emulator
def test_segments_gpu_emulator(rng):
    # The GPU's scan from a state (host buffers), chunked for float16.
    for dtype, tol in ((np.float32, TOL[np.float32]),
                       (np.float16, TOL[np.float16])):
        q, k, v = qkv(rng, 1, 2, 70, 16, 8, dtype)
        got, (s, _) = segments(q, k, v, (33,), backend="gpu-emulator")
        want, want_s, _ = ref.causal_linear_attention_rnn(q, k, v)
        assert rel_err(got, want) < 2 * tol
        assert rel_err(s, want_s) < 2 * tol


def test_state_errors(rng):
    q, k, v = qkv(rng, 1, 2, 5, 4, 3)
    s, z = np.zeros((1, 2, 4, 3), np.float32), np.zeros((1, 2, 4), np.float32)
    attention = linattn.linear_attention
    with pytest.raises(ValueError, match="need causal=True"):
        attention(q, k, v, causal=False, output_final_state=True)
    with pytest.raises(ValueError, match="need causal=True"):
        attention(q, k, v, causal=False, initial_state=(s, z))
    with pytest.raises(ValueError, match=r"initial_state's S must have shape "
                                         r"\(1, 2, 4, 3\)"):
        attention(q, k, v, initial_state=(s[:, :, :3].copy(), z))
    with pytest.raises(TypeError, match="initial_state's z has dtype float64; "
                                        "the state of this data is float32"):
        attention(q, k, v, initial_state=(s, z.astype(np.float64)))
    with pytest.raises(TypeError, match=r"must be a pair \(S, z\)"):
        attention(q, k, v, initial_state=s)
    with pytest.raises(ValueError, match="not C-contiguous"):
        attention(q, k, v, initial_state=(np.zeros((1, 2, 3, 4),
                                                   np.float32).swapaxes(2, 3),
                                          z))
