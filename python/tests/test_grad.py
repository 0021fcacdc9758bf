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
