"""The numbers of `make demo`: runs the example through linattn-run on seeded
inputs, compares the output with a float64 reference of causal linear
attention, and times the same shape as causal softmax attention in numpy
(its matrix products run in the BLAS numpy ships with, on every core).

Usage: demo_report.py BUILD_DIR EXAMPLE.mlir
"""

import os
import re
import subprocess
import sys
import time

import numpy as np

B, H, N, D = 1, 8, 1024, 64
EPS = 1e-6
REPEAT = 10


def elu1(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def causal_linear_attention_f64(q, k, v):
    """The paper's causal linear attention in float64, as prefix sums."""
    fq, fk, v = elu1(q.astype(np.float64)), elu1(k.astype(np.float64)), v.astype(np.float64)
    s = np.cumsum(fk[..., :, :, None] * v[..., :, None, :], axis=-3)  # [.., N, D, Dv]
    z = np.cumsum(fk, axis=-2)
    num = np.einsum("bhnd,bhnde->bhne", fq, s)
    den = np.einsum("bhnd,bhnd->bhn", fq, z)[..., None] + EPS
    return num / den


def causal_softmax_attention(q, k, v, future):
    """softmax(QKᵀ/√D + mask) V in float32, in place where numpy allows;
    `future` marks the masked (j > i) entries."""
    scores = q @ np.swapaxes(k, -1, -2)
    scores *= np.float32(1.0 / np.sqrt(q.shape[-1]))
    scores[..., future] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores @ v


def main():
    build, example = sys.argv[1], sys.argv[2]
    out = os.path.join(build, "demo")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(2020)
    q, k, v = (rng.standard_normal((B, H, N, D)).astype(np.float32) for _ in range(3))
    paths = []
    for name, x in (("q", q), ("k", k), ("v", v)):
        paths.append(os.path.join(out, f"{name}.npy"))
        np.save(paths[-1], x)

    cmd = [os.path.join(build, "bin", "linattn-run"), example, f"--output-dir={out}",
           f"--repeat={REPEAT}"] + [f"--input={p}" for p in paths]
    print("$ " + " ".join(os.path.relpath(c) if os.path.exists(c) else c for c in cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    print(proc.stdout, end="")
    ours_ms = float(re.search(r"median time: ([0-9.]+) ms", proc.stdout).group(1))
    o = np.load(os.path.join(out, "result0.npy"))

    ref = causal_linear_attention_f64(q, k, v)
    err = np.max(np.abs(o - ref)) / np.max(np.abs(ref))
    print(f"max |error| / max |reference| vs float64: {err:.2e}")

    future = np.triu(np.ones((N, N), dtype=bool), 1)
    causal_softmax_attention(q, k, v, future)  # warm-up
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        causal_softmax_attention(q, k, v, future)
        times.append(time.perf_counter() - start)
    softmax_ms = float(np.median(times)) * 1e3
    flops = 4.0 * D * D * B * H * N
    print(f"linear attention (linattn, {os.cpu_count()} threads): {ours_ms:8.3f} ms"
          f"  ({flops / ours_ms / 1e6:.1f} GFLOP/s)")
    print(f"softmax attention (numpy + BLAS, causal):   {softmax_ms:8.3f} ms"
          f"  -> linattn is {softmax_ms / ours_ms:.1f}x faster at N = {N}")
    return 0 if err < 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
