"""Plain numpy implementations of linear attention, in float64.

These are the definitions the compiled kernels are tested against:

* `feature_map` -- the feature maps of ``linattn.feature_map``;
* `linear_attention` -- the quadratic (masked) form, (φ(Q)φ(K)ᵀ ⊙ L) V,
  divided by the row sums plus eps when normalized;
* `causal_linear_attention_rnn` -- the paper's recurrent form (Katharopoulos
  et al. 2020, section 3.4): for each token i,
  S_i = S_{i-1} + φ(k_i) v_iᵀ, z_i = z_{i-1} + φ(k_i),
  o_i = φ(q_i)ᵀ S_i / (φ(q_i)ᵀ z_i + eps);
* `feature_map_grad`, `linear_attention_grad` -- their gradients, by the
  chain rule through the quadratic form;
* `normalized_cancellation` -- how much the terms of the normalized
  gradients of φ(Q) and φ(K) cancel (what 16-bit errors are bounded by).

Arrays have any number of leading batch dimensions: [..., N, D].
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

__all__ = [
    "FEATURE_MAPS",
    "causal_linear_attention_rnn",
    "feature_dim",
    "feature_map",
    "feature_map_grad",
    "linear_attention",
    "linear_attention_grad",
    "normalized_cancellation",
]

FEATURE_MAPS = ("elu", "relu", "identity", "poly2", "favor")


def feature_dim(kind: str, head_dim: int,
                projection: Optional[np.ndarray] = None) -> int:
    """F, the size of φ(x) for inputs of size `head_dim`."""
    if kind in ("elu", "relu", "identity"):
        return head_dim
    if kind == "poly2":
        return 1 + head_dim + head_dim * head_dim
    if kind == "favor":
        if projection is None:
            raise ValueError("the favor feature map needs a projection")
        return int(np.shape(projection)[1])
    raise ValueError(f"unknown feature map {kind!r}")


def feature_map(kind: str, x: np.ndarray,
                projection: Optional[np.ndarray] = None) -> np.ndarray:
    """φ(x) in float64.

    ``elu``: elu(x) + 1; ``relu``: max(x, 0); ``identity``: x;
    ``poly2``: [1, x, vec(x xᵀ)/√2] (so φ(q)·φ(k) = 1 + q·k + (q·k)²/2);
    ``favor``: exp(x P - |x|²/2) / √m for a [D, m] projection P.
    """
    x = np.asarray(x, dtype=np.float64)
    if kind == "elu":
        return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))
    if kind == "relu":
        return np.maximum(x, 0.0)
    if kind == "identity":
        return x.copy()
    if kind == "poly2":
        d = x.shape[-1]
        outer = (x[..., :, None] * x[..., None, :]).reshape(
            x.shape[:-1] + (d * d,))
        ones = np.ones(x.shape[:-1] + (1,))
        return np.concatenate([ones, x, outer / np.sqrt(2.0)], axis=-1)
    if kind == "favor":
        if projection is None:
            raise ValueError("the favor feature map needs a projection")
        p = np.asarray(projection, dtype=np.float64)
        sq = np.sum(x * x, axis=-1, keepdims=True)
        return np.exp(x @ p - sq / 2.0) / np.sqrt(p.shape[1])
    raise ValueError(f"unknown feature map {kind!r}")


_phi = feature_map  # the arguments below named feature_map shadow it


def linear_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, *,
                     feature_map: str = "elu", causal: bool = True,
                     normalize: bool = True, eps: float = 1e-6,
                     projection: Optional[np.ndarray] = None) -> np.ndarray:
    """Linear attention in its quadratic form, in float64:
    A = φ(Q)φ(K)ᵀ (lower-triangular part when causal), O = A V, divided by
    A's row sums plus eps when normalized."""
    fq = _phi(feature_map, q, projection)
    fk = _phi(feature_map, k, projection)
    a = fq @ np.swapaxes(fk, -1, -2)
    if causal:
        n, m = a.shape[-2:]
        a = a * np.tril(np.ones((n, m)))
    o = a @ np.asarray(v, dtype=np.float64)
    if normalize:
        o = o / (np.sum(a, axis=-1, keepdims=True) + eps)
    return o


def feature_map_grad(kind: str, x: np.ndarray, grad: np.ndarray,
                     projection: Optional[np.ndarray] = None) -> np.ndarray:
    """The gradient with respect to x of Σ grad ⊙ φ(x), in float64 (none
    with respect to a favor projection)."""
    x = np.asarray(x, dtype=np.float64)
    g = np.asarray(grad, dtype=np.float64)
    if kind == "elu":
        return g * np.where(x > 0, 1.0, np.exp(np.minimum(x, 0.0)))
    if kind == "relu":
        return g * (x > 0)
    if kind == "identity":
        return g.copy()
    if kind == "poly2":
        d = x.shape[-1]
        block = g[..., 1 + d:].reshape(x.shape[:-1] + (d, d))
        block = block + np.swapaxes(block, -1, -2)
        return g[..., 1:1 + d] + np.einsum("...mj,...j->...m", block,
                                           x) / np.sqrt(2.0)
    if kind == "favor":
        w = g * _phi(kind, x, projection)
        p = np.asarray(projection, dtype=np.float64)
        return w @ p.T - x * np.sum(w, axis=-1, keepdims=True)
    raise ValueError(f"unknown feature map {kind!r}")


def _scaled_grad(q, k, v, grad_out, feature_map, causal, eps, projection):
    """φ(Q), φ(K), V, the mask L, the masked scores A, and the result
    gradient's scaled forms g = dO / D and h = −(dO·(A V)) / D² ([..., N, 1])
    with D the row sums plus `eps`; g = dO and h = 0 unnormalized (`eps`
    None)."""
    fq = _phi(feature_map, q, projection)
    fk = _phi(feature_map, k, projection)
    v = np.asarray(v, dtype=np.float64)
    do = np.asarray(grad_out, dtype=np.float64)
    n, m = fq.shape[-2], fk.shape[-2]
    mask = np.tril(np.ones((n, m))) if causal else np.ones((n, m))
    a = (fq @ np.swapaxes(fk, -1, -2)) * mask
    if eps is None:
        return fq, fk, v, mask, a, do, 0.0
    den = np.sum(a, axis=-1, keepdims=True) + eps
    h = -np.sum(do * (a @ v), axis=-1, keepdims=True) / den**2
    return fq, fk, v, mask, a, do / den, h


def linear_attention_grad(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                          grad_out: np.ndarray, *, feature_map: str = "elu",
                          causal: bool = True, normalize: bool = True,
                          eps: float = 1e-6,
                          projection: Optional[np.ndarray] = None
                          ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gradients of Σ grad_out ⊙ linear_attention(q, k, v, ...) with
    respect to q, k and v, in float64: with A the masked scores and, when
    normalized, D their row sums plus eps, g = dO / D and
    h = −(dO·(A V)) / D² (g = dO, h = 0 otherwise), dA = g Vᵀ + h (masked),
    dφ(Q) = dA φ(K), dφ(K) = dAᵀ φ(Q), dV = Aᵀ g."""
    fq, fk, v, mask, a, g, h = _scaled_grad(
        q, k, v, grad_out, feature_map, causal, eps if normalize else None,
        projection)
    da = (g @ np.swapaxes(v, -1, -2) + h) * mask
    return (feature_map_grad(feature_map, q, da @ fk, projection),
            feature_map_grad(feature_map, k, np.swapaxes(da, -1, -2) @ fq,
                             projection),
            np.swapaxes(a, -1, -2) @ g)


def normalized_cancellation(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                            grad_out: np.ndarray, *, feature_map: str = "elu",
                            causal: bool = True, eps: float = 1e-6,
                            projection: Optional[np.ndarray] = None
                            ) -> Tuple[float, float]:
    """How much larger than dφ(Q) and dφ(K) the terms they sum are,
    normalized, as (for dq, for dk): with g_i = dO_i / D_i and h_i =
    -(dO_i·N_i) / D_i², dφ(q_i) = Σ_j (g_i·v_j + h_i) φ(k_j) and dφ(k_j) =
    Σ_i (g_i·v_j + h_i) φ(q_i), where g_i·v_j + h_i = g_i·(v_j - O_i)
    cancels (O_i does not change with the scale of φ(q_i), so dφ(q_i) is
    orthogonal to φ(q_i)). g and h are rounded to the data type before the
    scans, so in f16 and bf16 the gradients' error is that rounding times
    these terms, not times the gradients."""
    fq, fk, v, mask, _, g, h = _scaled_grad(q, k, v, grad_out, feature_map,
                                            causal, eps, projection)
    # The coefficients g_i·v_j + h_i of both sums, and their magnitudes.
    gv = g @ np.swapaxes(v, -1, -2)
    coefficients = (gv + h) * mask
    magnitudes = (np.abs(gv) + np.abs(h)) * mask
    kappas = []
    for coefficient, magnitude, features in (
            (coefficients, magnitudes, fk),
            (np.swapaxes(coefficients, -1, -2),
             np.swapaxes(magnitudes, -1, -2), fq)):
        terms = magnitude @ np.abs(features)
        grad = coefficient @ features
        kappas.append(float(np.max(terms) /
                            max(np.max(np.abs(grad)), 1e-300)))
    return kappas[0], kappas[1]


def causal_linear_attention_rnn(
        q: np.ndarray, k: np.ndarray, v: np.ndarray, *,
        feature_map: str = "elu", normalize: bool = True, eps: float = 1e-6,
        projection: Optional[np.ndarray] = None,
        state: Optional[Tuple[np.ndarray, np.ndarray]] = None
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paper's causal linear attention as an RNN, token by token, in
    float64. Returns (outputs, final S, final z); `state` is an optional
    initial (S, z)."""
    fq = _phi(feature_map, q, projection)
    fk = _phi(feature_map, k, projection)
    v = np.asarray(v, dtype=np.float64)
    batch = fq.shape[:-2]
    n, f = fq.shape[-2:]
    dv = v.shape[-1]
    if state is None:
        s = np.zeros(batch + (f, dv))
        z = np.zeros(batch + (f,))
    else:
        s = np.array(state[0], dtype=np.float64)
        z = np.array(state[1], dtype=np.float64)
    out = np.zeros(batch + (n, dv))
    for i in range(n):
        s = s + fk[..., i, :, None] * v[..., i, None, :]
        z = z + fk[..., i, :]
        o = np.einsum("...f,...fd->...d", fq[..., i, :], s)
        if normalize:
            o = o / (np.einsum("...f,...f->...", fq[..., i, :], z)[..., None]
                     + eps)
        out[..., i, :] = o
    return out, s, z
