"""RecurrentState: decoding token by token equals the full causal scan."""

import numpy as np
import pytest

import linattn
from linattn import RecurrentState
from linattn import reference as ref

from conftest import TOL, rand, rel_err


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
