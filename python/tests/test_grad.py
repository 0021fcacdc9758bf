"""linear_attention_grad against float64 references and against central
differences of linear_attention itself."""

import numpy as np
import pytest

import linattn
from linattn import reference as ref

from conftest import TOL, needs_emulator, rel_err
from test_attention import FEATURE_MAPS, inputs


def grad_inputs(rng, b, h, n, m, d, dv, dtype, feature_map):
    q, k, v, p = inputs(rng, b, h, n, m, d, dv, dtype=dtype,
                        feature_map=feature_map)
    do = rng.uniform(-1.0, 1.0, (b, h, n, dv)).astype(dtype)
    return q, k, v, do, p


@pytest.mark.parametrize("feature_map", FEATURE_MAPS)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("normalize", [True, False])
def test_every_feature_map(rng, feature_map, causal, normalize):
    n, m = (9, 9) if causal else (9, 6)
    q, k, v, do, p = grad_inputs(rng, 2, 3, n, m, 4, 3, np.float32,
                                 feature_map)
    options = dict(feature_map=feature_map, causal=causal,
                   normalize=normalize, projection=p)
    got = linattn.linear_attention_grad(q, k, v, do, **options)
    want = ref.linear_attention_grad(q, k, v, do, **options)
    for x, g, w in zip((q, k, v), got, want):
        assert g.shape == x.shape and g.dtype == np.float32
        assert rel_err(g, w) < TOL[np.float32]


@pytest.mark.parametrize("feature_map", ["elu", "poly2", "favor"])
@pytest.mark.parametrize("causal", [True, False])
def test_central_differences(rng, feature_map, causal):
    """The compiled backward pass against differences of the compiled
    forward pass, both in float64: they agree only if both are right."""
    n, m = (6, 6) if causal else (6, 4)
    q, k, v, do, p = grad_inputs(rng, 1, 2, n, m, 3, 2, np.float64,
                                 feature_map)
    options = dict(feature_map=feature_map, causal=causal, eps=1e-3,
                   projection=p)
    grads = linattn.linear_attention_grad(q, k, v, do, **options)
    step = 1e-6
    for which, grad in enumerate(grads):
        operands = [q, k, v]
        numeric = np.zeros_like(grad)
        for index in np.ndindex(*grad.shape):
            up = [x.copy() for x in operands]
            down = [x.copy() for x in operands]
            up[which][index] += step
            down[which][index] -= step
            numeric[index] = np.sum(
                do * (linattn.linear_attention(*up, **options)
                      - linattn.linear_attention(*down, **options))) / (2 * step)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_float16_long(rng):
    """float16 data over 200 tokens: sums in float32, each gradient
    rounded to float16."""
    q, k, v, do, _ = grad_inputs(rng, 1, 2, 200, 200, 16, 8, np.float16, "elu")
    got = linattn.linear_attention_grad(q, k, v, do)
    want = ref.linear_attention_grad(q, k, v, do)
    for g, w in zip(got, want):
        assert g.dtype == np.float16
        assert rel_err(g, w) < 4 * TOL[np.float16]


@needs_emulator
@pytest.mark.parametrize("causal", [True, False])
def test_gpu_emulator(rng, causal):
    q, k, v, do, _ = grad_inputs(rng, 1, 2, 33, 33 if causal else 20, 16, 8,
                                 np.float32, "elu")
    got = linattn.linear_attention_grad(q, k, v, do, causal=causal,
                                        backend="gpu-emulator")
    want = ref.linear_attention_grad(q, k, v, do, causal=causal)
    for g, w in zip(got, want):
        assert rel_err(g, w) < TOL[np.float32]


def test_errors(rng):
    q, k, v, do, _ = grad_inputs(rng, 1, 2, 5, 5, 4, 3, np.float32, "elu")
    with pytest.raises(ValueError, match="grad_out must have the output's shape"):
        linattn.linear_attention_grad(q, k, v, np.ascontiguousarray(do[:, :, :4]))
    with pytest.raises(TypeError, match="same dtype"):
        linattn.linear_attention_grad(q, k, v, do.astype(np.float64))
    with pytest.raises(ValueError, match="causal attention needs as many"):
        linattn.linear_attention_grad(q, np.ascontiguousarray(k[:, :, :4]),
                                      np.ascontiguousarray(v[:, :, :4]), do)


#===------------------------------------------------------------------------===#
# Training in segments: initial_state and final_state_grad
#===------------------------------------------------------------------------===#


def segment_grads(q, k, v, do, cuts, backend="cpu", **options):
    """The gradients of the whole sequence, computed segment by segment: the
    forward passes by RecurrentState.update from the state the previous
    segment ended with, then the backward passes from the last segment to
    the first, each handing dS₀, dz₀ to the one before as its
    final_state_grad. Returns the concatenated dq, dk, dv."""
    b, h, _, d = q.shape
    bounds = [0] + list(cuts) + [q.shape[2]]
    state = linattn.RecurrentState(b, h, d, v.shape[3], dtype=q.dtype,
                                   backend=backend, **options)
    starts = []
    for lo, hi in zip(bounds, bounds[1:]):
        starts.append((state.S.copy(), state.z.copy()))
        state.update(*(np.ascontiguousarray(x[:, :, lo:hi]) for x in (q, k, v)))
    grads, final = [], None
    for (lo, hi), start in reversed(list(zip(zip(bounds, bounds[1:]),
                                             starts))):
        dq, dk, dv, ds0, dz0 = linattn.linear_attention_grad(
            *(np.ascontiguousarray(x[:, :, lo:hi]) for x in (q, k, v, do)),
            initial_state=start, final_state_grad=final, backend=backend,
            **options)
        grads.append((dq, dk, dv))
        final = (ds0, dz0)
    return [np.concatenate([g[i] for g in reversed(grads)], axis=2)
            for i in range(3)]


@pytest.mark.parametrize("feature_map", FEATURE_MAPS)
@pytest.mark.parametrize("normalize", [True, False])
def test_segments_equal_the_whole_sequence(rng, feature_map, normalize):
    # float64, three segments of 7, 1 and 12 tokens: the same gradients as
    # the whole sequence's to rounding.
    q, k, v, do, p = grad_inputs(rng, 2, 3, 20, 20, 4, 3, np.float64,
                                 feature_map)
    options = dict(feature_map=feature_map, normalize=normalize,
                   projection=p)
    want = ref.linear_attention_grad(q, k, v, do, **options)
    got = segment_grads(q, k, v, do, (7, 8), **options)
    for g, w in zip(got, want):
        assert rel_err(g, w) < 1e-12


def test_segment_state_gradients(rng):
    # dS₀ and dz₀ against central differences of RecurrentState.update from
    # (S₀, z₀) in float64, with the final state in the loss (dS, dz).
    q, k, v, do, _ = grad_inputs(rng, 1, 2, 5, 5, 3, 2, np.float64, "elu")
    s0 = rng.uniform(0, 1, (1, 2, 3, 2))
    z0 = rng.uniform(0.5, 1, (1, 2, 3))
    ds, dz = rng.uniform(-1, 1, s0.shape), rng.uniform(-1, 1, z0.shape)
    *_, ds0, dz0 = linattn.linear_attention_grad(
        q, k, v, do, initial_state=(s0, z0), final_state_grad=(ds, dz))

    def loss(s, z):
        state = linattn.RecurrentState(1, 2, 3, 2, dtype=np.float64)
        state.S[...] = s
        state.z[...] = z
        o = state.update(q, k, v)
        return np.sum(do * o) + np.sum(ds * state.S) + np.sum(dz * state.z)

    step = 1e-6
    for which, grad in ((0, ds0), (1, dz0)):
        numeric = np.zeros_like(grad)
        for index in np.ndindex(*grad.shape):
            up, down = [s0.copy(), z0.copy()], [s0.copy(), z0.copy()]
            up[which][index] += step
            down[which][index] -= step
            numeric[index] = (loss(*up) - loss(*down)) / (2 * step)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)


def test_segments_float16(rng):
    # float16 data with float32 states: segments of 50 and 30 tokens against
    # the whole sequence's float64 gradients, as test_float16_long bounds it.
    q, k, v, do, _ = grad_inputs(rng, 1, 2, 80, 80, 16, 8, np.float16, "elu")
    want = ref.linear_attention_grad(q, k, v, do)
    got = segment_grads(q, k, v, do, (50,))
    for g, w in zip(got, want):
        assert g.dtype == np.float16
        assert rel_err(g, w) < 4 * TOL[np.float16]


@needs_emulator
def test_segments_gpu_emulator(rng):
    # The scans' gradients from a state on the GPU kernels (host buffers).
    q, k, v, do, _ = grad_inputs(rng, 1, 2, 40, 40, 16, 8, np.float32, "elu")
    want = ref.linear_attention_grad(q, k, v, do)
    got = segment_grads(q, k, v, do, (17,), backend="gpu-emulator")
    for g, w in zip(got, want):
        assert rel_err(g, w) < 4 * TOL[np.float32]


def test_segment_errors(rng):
    q, k, v, do, _ = grad_inputs(rng, 1, 2, 5, 5, 4, 3, np.float32, "elu")
    s, z = np.zeros((1, 2, 4, 3), np.float32), np.zeros((1, 2, 4), np.float32)
    grad = linattn.linear_attention_grad
    with pytest.raises(ValueError, match="need causal=True"):
        grad(q, k, v, do, causal=False, initial_state=(s, z))
    with pytest.raises(ValueError, match=r"initial_state's S must have shape "
                                         r"\(1, 2, 4, 3\)"):
        grad(q, k, v, do, initial_state=(s[:, :, :3].copy(), z))
    with pytest.raises(TypeError, match="final_state_grad's z has dtype "
                                        "float64; the state of this data is "
                                        "float32"):
        grad(q, k, v, do, final_state_grad=(s, z.astype(np.float64)))
    with pytest.raises(TypeError, match="must be a pair"):
        grad(q, k, v, do, initial_state=s)
    # Only the final state's gradient: three results.
    assert len(grad(q, k, v, do, final_state_grad=(s, z))) == 3
