"""float64 reference implementations of the linattn ops (see LinAttnOps.td).

Every function takes numpy arrays with any number of leading batch
dimensions and computes in float64. The feature maps and their gradients
are the Python package's definitions (python/linattn/reference.py, loaded by
path: it needs nothing but numpy, not the package's compiled library).
"""

import importlib.util
import os

import numpy as np


def _load_package_reference():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "..", "python", "linattn", "reference.py")
    spec = importlib.util.spec_from_file_location("linattn_package_reference",
                                                  os.path.normpath(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_package = _load_package_reference()
feature_map = _package.feature_map
feature_map_grad = _package.feature_map_grad



def scores(fq, fk, causal=False, scale=1.0):
    a = scale * (fq @ np.swapaxes(fk, -1, -2))
    if causal:
        n, m = a.shape[-2:]
        a = a * np.tril(np.ones((n, m)))
    return a


def apply_scores(a, v, eps=None):
    o = a @ v
    if eps is not None:
        o = o / (np.sum(a, axis=-1, keepdims=True) + eps)
    return o


def apply_scores_magnitude(a, v, eps=None, a_terms=None):
    """The scale of `apply_scores`' rounding errors, per output, as
    `attention_magnitude` takes it: the product with each score replaced by
    the magnitude of the terms it sums (`a_terms`, |a| by default) and each
    value by its magnitude, and, when normalized, the output times the
    denominator's condition number Σ|a| / |Σa + eps|, whichever is larger.
    Near the output where nothing cancels (non-negative features, scale and
    values); far above it where values of both signs average out, or a
    negative scale brings a row sum close to -eps, whose rounding the
    division then magnifies."""
    a = np.asarray(a, dtype=np.float64)
    a_terms = np.abs(a) if a_terms is None else np.asarray(a_terms, dtype=np.float64)
    terms = a_terms @ np.abs(np.asarray(v, dtype=np.float64))
    if eps is None:
        return terms
    den = np.abs(np.sum(a, axis=-1, keepdims=True) + eps)
    cond = np.sum(a_terms, axis=-1, keepdims=True) / den
    return np.maximum(terms / den, np.abs(apply_scores(a, v, eps)) * cond)


def kv_summary(fk, v):
    return np.swapaxes(fk, -1, -2) @ v, np.sum(fk, axis=-2)


def query_readout(fq, s, z=None, eps=None):
    o = fq @ s
    if z is not None:
        o = o / (np.einsum("...nf,...f->...n", fq, z)[..., None] + eps)
    return o


def magnitude(form, *operands, **options):
    """`form` (scan, step, kv_summary, query_readout) with every array
    operand replaced by its magnitude: each result's sum of its terms'
    magnitudes, the scale of its rounding errors, which a sum that cancels
    (signed values; signed features and states) can be far below."""
    return form(*(np.abs(np.asarray(x, np.float64)) if isinstance(x, np.ndarray) else x
                  for x in operands), **options)


def step(fq, fk, v, s, z, eps=None):
    s = s + fk[..., :, None] * v[..., None, :]
    z = z + fk
    o = np.einsum("...f,...fd->...d", fq, s)
    if eps is not None:
        o = o / (np.einsum("...f,...f->...", fq, z)[..., None] + eps)
    return o, s, z


def _scan_start(fq, v, s0, z0):
    """A scan's outputs (zeros) and its initial state and normalizer (zeros
    unless given), in float64."""
    batch = fq.shape[:-2]
    n, f = fq.shape[-2:]
    dv = v.shape[-1]
    s = np.zeros(batch + (f, dv)) if s0 is None else np.asarray(s0, np.float64)
    z = np.zeros(batch + (f,)) if z0 is None else np.asarray(z0, np.float64)
    return np.zeros(batch + (n, dv)), s, z


def scan(fq, fk, v, s0=None, z0=None, reverse=False, eps=None, chunk=64):
    """The recurrence (outputs, final state, final normalizer), `chunk`
    tokens at a time: within a chunk, o_i = φq_i·(S + Σ_{j ≤ i} φk_jᵀv_j)
    from the state before the chunk and the causally masked scores, then
    S += φK_cᵀV_c (z likewise). The same sums as `scan_steps`, token by
    token, in another order: the two agree to float64's rounding, and this
    one is several times faster (the emulated chunked group's 302 scans:
    1.3 s instead of 8.1)."""
    fq, fk, v = (np.asarray(x, np.float64) for x in (fq, fk, v))
    out, s, z = _scan_start(fq, v, s0, z0)
    n = fq.shape[-2]
    starts = range(0, n, chunk)
    for start in reversed(starts) if reverse else starts:
        c = slice(start, min(start + chunk, n))
        q, k, x = fq[..., c, :], fk[..., c, :], v[..., c, :]
        m = q.shape[-2]
        mask = np.triu(np.ones((m, m))) if reverse else np.tril(np.ones((m, m)))
        a = (q @ np.swapaxes(k, -1, -2)) * mask
        o = q @ s + a @ x
        if eps is not None:
            o = o / ((q @ z[..., None])[..., 0] + np.sum(a, axis=-1) + eps)[..., None]
        out[..., c, :] = o
        s = s + np.swapaxes(k, -1, -2) @ x
        z = z + np.sum(k, axis=-2)
    return out, s, z


def scan_steps(fq, fk, v, s0=None, z0=None, reverse=False, eps=None):
    """The recurrence as the scan op defines it, token by token with
    `step`: (outputs, final state, final normalizer)."""
    out, s, z = _scan_start(fq, v, s0, z0)
    n = fq.shape[-2]
    order = range(n - 1, -1, -1) if reverse else range(n)
    for i in order:
        out[..., i, :], s, z = step(fq[..., i, :], fk[..., i, :], v[..., i, :], s, z, eps)
    return out, s, z


def _features_grad(fq, fk, v, dout, mask, eps, magnitude):
    """The gradients of O = (A ⊙ mask) V (rows divided by their sums plus
    `eps` when given), A = φ(Q)φ(K)ᵀ, with respect to φ(Q), φ(K) and V, or
    with `magnitude` every operand replaced by its magnitude and every term
    added with a plus sign."""
    fq, fk, v, dout = (np.asarray(x, dtype=np.float64) for x in (fq, fk, v, dout))
    if magnitude:
        fq, fk, v, dout = (np.abs(x) for x in (fq, fk, v, dout))
    a = (fq @ np.swapaxes(fk, -1, -2)) * mask
    g, h = dout, 0.0
    if eps is not None:
        den = np.sum(a, axis=-1, keepdims=True) + eps
        g = dout / den
        h = np.sum(dout * (a @ v), axis=-1, keepdims=True) / den**2
        if not magnitude:
            h = -h
    da = (g @ np.swapaxes(v, -1, -2) + h) * mask
    return da @ fk, np.swapaxes(da, -1, -2) @ fq, np.swapaxes(a, -1, -2) @ g


def _scan_grad(fq, fk, v, dout, reverse, eps, magnitude):
    n = np.shape(fq)[-2]
    mask = np.tril(np.ones((n, n)))
    return _features_grad(fq, fk, v, dout, mask.T if reverse else mask, eps,
                          magnitude)


def scan_grad(fq, fk, v, dout, reverse=False, eps=None):
    """The gradients of a scan's outputs (no initial state) with respect to
    φ(Q), φ(K) and V for the output gradient `dout`, from the quadratic
    form: O = (A ⊙ L) V, A = φ(Q)φ(K)ᵀ and L the causal mask (transposed for
    a reverse scan), divided by D = the row sums of A ⊙ L plus `eps` when
    given. With g = dO / D and h = -(dO·(A ⊙ L)V) / D² (g = dO, h = 0
    unnormalized), dA = (g Vᵀ + h) ⊙ L. Returns (dφ(Q), dφ(K), dV)."""
    return _scan_grad(fq, fk, v, dout, reverse, eps, magnitude=False)


def scan_grad_magnitude(fq, fk, v, dout, reverse=False, eps=None):
    """`scan_grad` with every sum replaced by the sum of its terms'
    magnitudes: the scale of the gradients' rounding errors (dO·v has both
    signs, and normalized, g·v and h cancel)."""
    return _scan_grad(fq, fk, v, dout, reverse, eps, magnitude=True)


def _check_against_differences(what, loss, operands, grads, step=1e-6):
    """Raises unless `grads` are the central differences of `loss` (a
    function of `operands`) at `operands`."""
    for which, grad in enumerate(grads):
        numeric = np.zeros_like(grad)
        for index in np.ndindex(*grad.shape):
            up = [x.copy() for x in operands]
            down = [x.copy() for x in operands]
            up[which][index] += step
            down[which][index] -= step
            numeric[index] = (loss(*up) - loss(*down)) / (2 * step)
        if not np.allclose(grad, numeric, rtol=1e-6, atol=1e-8):
            raise AssertionError(
                f"{what} operand {which} differs from central differences by "
                f"{np.max(np.abs(grad - numeric)):.3e}")


def check_scan_grad(seed=0, n=5, f=3, dv=2):
    """Checks `scan_grad` against central differences of the loss
    Σ dout ⊙ scan(...) in both directions, unnormalized and normalized;
    raises if they differ."""
    rng = np.random.default_rng(seed)
    fq, fk = rng.uniform(0.0, 1.0, (2, n, f))
    v, dout = rng.uniform(-1.0, 1.0, (2, n, dv))
    for reverse in (False, True):
        for eps in (None, 1e-3):
            def loss(fq, fk, v):
                return float(np.sum(dout * scan(fq, fk, v, reverse=reverse, eps=eps)[0]))
            _check_against_differences(
                f"scan_grad (reverse={reverse}, eps={eps})", loss, [fq, fk, v],
                scan_grad(fq, fk, v, dout, reverse, eps))


def scan_grad_states(fq, fk, v, dout, s0, z0, ds=None, dz=None,
                     reverse=False, eps=None, magnitude=False):
    """The gradients of a scan from the state (s0, z0) for the gradients
    `dout` of its outputs and `ds`, `dz` of its final state and normalizer
    (zero when None), by the recurrences themselves: Sᵢ, zᵢ forward, then
    Rⱼ = dS + Σ_{i ≥ j} φ(qᵢ)gᵢᵀ and rⱼ = dz + Σ_{i ≥ j} φ(qᵢ)hᵢ backward
    (the order reversed for a reverse scan). Returns (dφ(Q), dφ(K), dV, dS₀,
    dz₀). With `magnitude`, every operand is replaced by its magnitude and
    every term added with a plus sign: the scale of the rounding errors."""
    fq, fk, v, dout, s0, z0 = (np.asarray(x, np.float64)
                               for x in (fq, fk, v, dout, s0, z0))
    ds = np.zeros_like(s0) if ds is None else np.asarray(ds, np.float64)
    dz = np.zeros_like(z0) if dz is None else np.asarray(dz, np.float64)
    if magnitude:
        fq, fk, v, dout, s0, z0, ds, dz = (
            np.abs(x) for x in (fq, fk, v, dout, s0, z0, ds, dz))
    if reverse:
        fq, fk, v, dout = (np.flip(x, -2) for x in (fq, fk, v, dout))
    n = fq.shape[-2]
    s, z = s0, z0
    g, h = np.zeros_like(dout), np.zeros(dout.shape[:-1])
    dfq = np.zeros_like(fq)
    for i in range(n):
        s = s + fk[..., i, :, None] * v[..., i, None, :]
        z = z + fk[..., i, :]
        if eps is None:
            g[..., i, :] = dout[..., i, :]
        else:
            num = np.einsum("...f,...fv->...v", fq[..., i, :], s)
            den = np.einsum("...f,...f->...", fq[..., i, :], z) + eps
            g[..., i, :] = dout[..., i, :] / den[..., None]
            h[..., i] = np.sum(dout[..., i, :] * num, axis=-1) / den**2
            if not magnitude:
                h[..., i] = -h[..., i]
        dfq[..., i, :] = (np.einsum("...fv,...v->...f", s, g[..., i, :])
                          + z * h[..., i, None])
    r_s, r_z = ds, dz
    dfk, dv = np.zeros_like(fk), np.zeros_like(v)
    for j in range(n - 1, -1, -1):
        r_s = r_s + fq[..., j, :, None] * g[..., j, None, :]
        r_z = r_z + fq[..., j, :] * h[..., j, None]
        dfk[..., j, :] = np.einsum("...fv,...v->...f", r_s, v[..., j, :]) + r_z
        dv[..., j, :] = np.einsum("...fv,...f->...v", r_s, fk[..., j, :])
    if reverse:
        dfq, dfk, dv = (np.flip(x, -2) for x in (dfq, dfk, dv))
    return dfq, dfk, dv, r_s, r_z


def check_scan_grad_states(seed=0, n=5, f=3, dv=2):
    """Checks `scan_grad_states` against central differences of the loss
    Σ dout ⊙ O + Σ ds ⊙ S_N + Σ dz ⊙ z_N of `scan` from a random state, in
    both directions, unnormalized and normalized; raises if they differ."""
    rng = np.random.default_rng(seed)
    fq, fk = rng.uniform(0.0, 1.0, (2, n, f))
    v, dout = rng.uniform(-1.0, 1.0, (2, n, dv))
    s0, ds = rng.uniform(-1.0, 1.0, (2, f, dv))
    z0 = rng.uniform(0.0, 1.0, f)
    dz = rng.uniform(-1.0, 1.0, f)
    for reverse in (False, True):
        for eps in (None, 1e-3):
            def loss(fq, fk, v, s0, z0):
                out, s, z = scan(fq, fk, v, s0, z0, reverse, eps)
                return float(np.sum(dout * out) + np.sum(ds * s) +
                             np.sum(dz * z))
            _check_against_differences(
                f"scan_grad_states (reverse={reverse}, eps={eps})", loss,
                [fq, fk, v, s0, z0],
                scan_grad_states(fq, fk, v, dout, s0, z0, ds, dz, reverse,
                                 eps))


def attention(kind, q, k, v, projection=None, causal=False, eps=None):
    fq = feature_map(kind, q, projection)
    fk = feature_map(kind, k, projection)
    return apply_scores(scores(fq, fk, causal), v, eps)


def attention_magnitude(kind, q, k, v, projection=None, causal=False, eps=None):
    """`attention` with every sum replaced by the sum of its terms'
    magnitudes (|φ(q)|·|φ(k)| for a score, |score|·|v| for an output): the
    scale of the rounding errors of each, which a sum that cancels (signed
    features: identity; signed values, all maps) can be far below."""
    fq = np.abs(feature_map(kind, q, projection))
    fk = np.abs(feature_map(kind, k, projection))
    return apply_scores(scores(fq, fk, causal), np.abs(v), eps)


def feature_map_grad_magnitude(kind, x, dphi, projection=None):
    """`feature_map_grad` with every sum replaced by the sum of its terms'
    magnitudes: the elementwise maps' slopes are not negative, poly2's terms
    are products of dφ and x, favor's weights dφ·φ times P and x."""
    dphi = np.abs(np.asarray(dphi, np.float64))
    x = np.asarray(x, np.float64)
    if kind == "favor":
        w = dphi * feature_map(kind, x, projection)
        return (w @ np.abs(np.asarray(projection, np.float64)).T
                + np.abs(x) * np.sum(w, axis=-1, keepdims=True))
    return feature_map_grad(kind, np.abs(x) if kind == "poly2" else x, dphi)


def _attention_grad(kind, q, k, v, dout, projection, causal, eps, magnitude):
    fq = feature_map(kind, q, projection)
    fk = feature_map(kind, k, projection)
    n, m = fq.shape[-2], fk.shape[-2]
    mask = np.tril(np.ones((n, m))) if causal else np.ones((n, m))
    dfq, dfk, dv = _features_grad(fq, fk, v, dout, mask, eps, magnitude)
    chain = feature_map_grad_magnitude if magnitude else feature_map_grad
    return (chain(kind, q, dfq, projection), chain(kind, k, dfk, projection), dv)


def attention_grad(kind, q, k, v, dout, projection=None, causal=False, eps=None):
    """The gradients of Σ dout ⊙ attention(kind, q, k, v, ...) with respect
    to q, k and v."""
    return _attention_grad(kind, q, k, v, dout, projection, causal, eps, False)


def attention_grad_magnitude(kind, q, k, v, dout, projection=None, causal=False,
                             eps=None):
    """`attention_grad` with every sum replaced by the sum of its terms'
    magnitudes: the scale of the gradients' rounding errors."""
    return _attention_grad(kind, q, k, v, dout, projection, causal, eps, True)


def check_attention_grad(seed=0, n=4, m=5, d=3, dv=2, features=4):
    """Checks `attention_grad` (and with it `feature_map_grad`) against
    central differences of Σ dout ⊙ attention(...) for every feature map,
    causal or not, normalized or not; raises if they differ."""
    rng = np.random.default_rng(seed)
    for kind in ("elu", "relu", "identity", "poly2", "favor"):
        p = rng.normal(size=(d, features)) if kind == "favor" else None
        for causal in (False, True):
            keys = n if causal else m
            q = rng.uniform(-0.5, 1.0, (n, d))
            k = rng.uniform(-0.5, 1.0, (keys, d))
            v = rng.uniform(-1.0, 1.0, (keys, dv))
            dout = rng.uniform(-1.0, 1.0, (n, dv))
            # Normalized maps whose scores can vanish or change sign divide
            # by near zero: only the positive ones are normalized here.
            for eps in ((None, 1e-3) if kind in ("elu", "favor") else (None,)):
                def loss(q, k, v):
                    return float(np.sum(dout * attention(kind, q, k, v, p, causal, eps)))
                _check_against_differences(
                    f"attention_grad ({kind}, causal={causal}, eps={eps})",
                    loss, [q, k, v],
                    attention_grad(kind, q, k, v, dout, p, causal, eps))
