"""Random cases of the Python API against float64 references.

The other tests pin the cases; these draw them: backend options, dtypes,
every feature map, causal and not, sizes off the tiles, and RecurrentState
fed through random mixes of `step` and `update`. A fresh seed each run
(``LINATTN_TEST_SEED=S`` replays one); a failure names the seed and the
case.
"""

import os
import random

import numpy as np
import pytest

import linattn
from linattn import reference as ref

from conftest import TOL, needs_emulator, rel_err

SEED = int(os.environ.get("LINATTN_TEST_SEED",
                          random.SystemRandom().randrange(2**31)))

BACKENDS = [pytest.param("cpu"),
            pytest.param("gpu-emulator", marks=needs_emulator)]
# Pipeline options that change the code, not the result.
OPTIONS = {
    "cpu": [None, {"tokens-per-block": 2}, {"column-vectors": 1},
            {"num-threads": 1}, {"kernels": False}, {"vector-width": 8}],
    "gpu-emulator": [None, {"chunk-size": 32}, {"value-tile": 32},
                     {"scan-kernel": "recurrent"}, {"block-size": 64}],
}


def draw_inputs(rnd, rng, dtype, feature_map, shapes):
    """q, k (non-negative for the maps that need positive denominators), v
    and favor's projection. favor's q and k are scaled by D^(-1/4), as
    Performers scale them: exp(-|x|²/2) of unscaled rows of 64 features is
    about 2e-5, and float16 outputs of such features underflow."""
    q, k, v = (rng.uniform(-1, 1, s).astype(dtype) for s in shapes)
    if feature_map in ("relu", "identity", "poly2"):
        q, k = np.abs(q), np.abs(k)
    p = None
    if feature_map == "favor":
        head = shapes[0][-1]
        scale = dtype(head ** -0.25)
        q, k = q * scale, k * scale
        p = (rng.normal(size=(head, rnd.choice([1, 8, 24]))) * 0.3).astype(dtype)
    return q, k, v, p


def f64(x):
    return None if x is None else np.asarray(x, np.float64)


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_linear_attention(backend):
    rnd = random.Random(f"{SEED}/attention/{backend}")
    for i in range(25):
        dtype = rnd.choice([np.float16, np.float32, np.float64])
        feature_map = rnd.choice(["elu", "relu", "identity", "poly2", "favor"])
        causal = rnd.random() < 0.5
        normalize = feature_map != "identity" and rnd.random() < 0.7
        b, h = rnd.choice([1, 2, 3]), rnd.choice([1, 2, 5])
        d = (rnd.choice([1, 3, 4, 8]) if feature_map == "poly2"
             else rnd.choice([1, 4, 16, 17, 32, 64]))
        n = rnd.choice([1, 2, 7, 33, 100, 257])
        m = n if causal else rnd.choice([1, 5, 64, 129])
        dv = rnd.choice([1, 3, 8, 24, 64, 65])
        options = rnd.choice(OPTIONS[backend])
        rng = np.random.default_rng([SEED, i])
        q, k, v, p = draw_inputs(rnd, rng, dtype, feature_map,
                                 [(b, h, n, d), (b, h, m, d), (b, h, m, dv)])
        case = (f"seed {SEED} case {i}: {dtype.__name__} {feature_map} "
                f"causal={causal} normalize={normalize} B{b} H{h} N{n} M{m} "
                f"D{d} Dv{dv} {options}")
        got = linattn.linear_attention(
            q, k, v, feature_map=feature_map, causal=causal,
            normalize=normalize, projection=p, backend=backend,
            compile_options=options)
        want = ref.linear_attention(f64(q), f64(k), f64(v),
                                    feature_map=feature_map, causal=causal,
                                    normalize=normalize, projection=f64(p))
        assert rel_err(got, want) <= TOL[dtype], case


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_recurrent_state(backend):
    # A state fed T tokens at a time by `update` and one by `step`, in a
    # random mix, gives the causal attention of the whole sequence.
    rnd = random.Random(f"{SEED}/recurrent/{backend}")
    for i in range(10):
        dtype = rnd.choice([np.float32, np.float64])
        feature_map = rnd.choice(["elu", "relu", "poly2", "favor"])
        normalize = rnd.random() < 0.7
        b, h = rnd.choice([1, 2]), rnd.choice([1, 3])
        d = rnd.choice([2, 4]) if feature_map == "poly2" else rnd.choice([4, 16, 33])
        dv = rnd.choice([1, 5, 16])
        rng = np.random.default_rng([SEED, 1000 + i])
        p = None
        if feature_map == "favor":
            p = (rng.normal(size=(d, 12)) * 0.3).astype(dtype)
        state = linattn.RecurrentState(b, h, d, dv, dtype=dtype,
                                       feature_map=feature_map,
                                       normalize=normalize, projection=p,
                                       backend=backend)
        parts = []
        for _ in range(rnd.choice([1, 2, 4])):
            t = rnd.choice([1, 3, 17])
            q, k, v, _ = draw_inputs(rnd, rng, dtype, "relu",
                                     [(b, h, t, d), (b, h, t, d), (b, h, t, dv)])
            if t == 1 and rnd.random() < 0.5:
                o = state.step(q[:, :, 0], k[:, :, 0], v[:, :, 0])[:, :, None]
            else:
                o = state.update(q, k, v)
            parts.append((q, k, v, o))
        q, k, v, o = (np.concatenate(x, axis=2) for x in zip(*parts))
        want = ref.linear_attention(f64(q), f64(k), f64(v),
                                    feature_map=feature_map, causal=True,
                                    normalize=normalize, projection=f64(p))
        case = (f"seed {SEED} case {i}: {dtype.__name__} {feature_map} "
                f"normalize={normalize} B{b} H{h} D{d} Dv{dv} "
                f"{[x[0].shape[2] for x in parts]} tokens at a time")
        assert rel_err(o, want) <= TOL[dtype], case
