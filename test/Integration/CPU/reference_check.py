"""Checks reference.scan, which sums chunk by chunk, against
reference.scan_steps, the recurrence token by token as the scan op defines
it: forward and reverse, with and without an initial state and a
normalizer, signed keys (sums that cancel) without one, lengths below, at and across
the chunk size, no batch and two batch dimensions. Prints the largest
difference relative to the outputs' magnitude (each term's absolute value
summed), which float64 keeps near 1e-16."""

import argparse
import itertools

import numpy as np

import reference as ref


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int,
                        default=int(np.random.SeedSequence().entropy % 2**31))
    seed = parser.parse_args().seed
    rng = np.random.default_rng(seed)
    worst = 0.0
    shapes = [((), 1, 3, 2), ((2,), 63, 8, 5), ((2, 3), 64, 4, 4),
              ((1,), 65, 16, 7), ((2,), 300, 8, 3)]
    for (batch, n, f, dv), reverse, eps, init in itertools.product(
            shapes, (False, True), (None, 1e-6), (False, True)):
        fq = rng.random(batch + (n, f))
        # Signed keys cancel in the state; with a normalizer they would
        # also bring its denominator near zero, which no feature map does.
        fk = (rng.random if eps else rng.standard_normal)(batch + (n, f))
        v = rng.standard_normal(batch + (n, dv))
        s0 = rng.standard_normal(batch + (f, dv)) if init else None
        z0 = rng.random(batch + (f,)) if init else None
        got = ref.scan(fq, fk, v, s0, z0, reverse, eps, chunk=64)
        want = ref.scan_steps(fq, fk, v, s0, z0, reverse, eps)
        scales = ref.magnitude(ref.scan_steps, fq, fk, v, s0, z0, reverse, eps)
        for g, w, m in zip(got, want, scales):
            worst = max(worst, float(np.max(np.abs(g - w) / np.maximum(m, 1e-300))))
    verdict = "ok" if worst < 1e-12 else "FAIL"
    print(f"reference scan {verdict}: chunked vs token by token, largest "
          f"difference {worst:.1e} of the magnitude (seed {seed})")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    raise SystemExit(main())
