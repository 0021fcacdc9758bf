"""Inputs for mma-rounding.mlir, and its results checked against the model
of a tensor core's dot product (tf32 m16n8k8, fragments in the PTX ISA's
layout): operands read as tf32 (the low 13 bits of each f32 dropped), the
exact products and the accumulator aligned to the largest and truncated to
25 bits, summed exactly, the sum rounded to f32 toward zero. A row of A
with an infinite element and one of zeros (with zero accumulators) give
IEEE sums: infinities, and zeros. Where the model does not hold (on a GPU),
the last line says which other windows (22 to 28 bits), cuts of the terms
(toward zero, or floored as in two's complement) and roundings of the sum
(toward zero, to nearest) every output agrees with.

Usage: mma-rounding.mlir.py make IN.npy | check IN.npy OUT.npy
"""
import math
import sys
from fractions import Fraction

import numpy as np

WINDOW_BITS = 25


def tf32(x):
    bits = np.float32(x).view(np.uint32) & np.uint32(0xffffe000)
    return Fraction(float(bits.view(np.float32)))


def toward_zero(x):
    """x (a Fraction) rounded to f32 toward zero."""
    f = np.float32(float(x))
    while abs(Fraction(float(f))) > abs(x):
        f = np.nextafter(f, np.float32(0))
    return f


def to_nearest(x):
    """x (a Fraction) rounded to f32, to nearest, ties to even."""
    f = np.float32(float(x))
    candidates = [f, np.nextafter(f, np.float32(-np.inf)),
                  np.nextafter(f, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - x),
                                          int(c.view(np.uint32)) & 1))


def windowed(acc, a, b, bits=WINDOW_BITS, rounding=toward_zero, cut=int):
    """acc + Σ a·b with every term aligned to the largest and cut to `bits`
    below its leading bit (`cut`: int toward zero, math.floor as two's
    complement would), the sum rounded by `rounding`: the model with bits =
    WINDOW_BITS, terms and sum toward zero."""
    if not all(math.isfinite(x) for x in (acc, *a)):
        # Non-finite terms: the IEEE sum (rounded to nearest).
        return np.float32(float(acc) + sum(float(tf32(x) * tf32(y)) if math.isfinite(x)
                                           else x * float(tf32(y))
                                           for x, y in zip(a, b)))
    terms = [Fraction(float(acc))] + [tf32(x) * tf32(y) for x, y in zip(a, b)]
    largest = max(abs(t) for t in terms)
    if largest == 0:
        return np.float32(0)
    _, exponent = math.frexp(float(largest))
    quantum = Fraction(2) ** (exponent - bits)
    return rounding(sum(cut(t / quantum) for t in terms) * quantum)


model = windowed


def fused(acc, a, b):
    """acc + Σ a·b by f32 fused multiply-adds rounding to nearest."""
    acc = np.float32(acc)
    for x, y in zip(a, b):
        acc = np.float32(float(Fraction(float(acc)) + tf32(x) * tf32(y)))
    return acc


def exact_toward_zero(acc, a, b):
    return toward_zero(Fraction(float(acc)) +
                       sum(tf32(x) * tf32(y) for x, y in zip(a, b)))


def matrices(regs):
    """A (16 x 8), B (8 x 8, [k][n]) and C (16 x 8) of the lanes' registers
    (32 x 10: A0..A3, B0, B1, C0..C3)."""
    A = np.zeros((16, 8), np.float32)
    B = np.zeros((8, 8), np.float32)
    C = np.zeros((16, 8), np.float32)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        r = regs[lane]
        A[g, t], A[g + 8, t], A[g, t + 4], A[g + 8, t + 4] = r[0:4]
        B[t, g], B[t + 4, g] = r[4:6]
        C[g, 2 * t], C[g, 2 * t + 1] = r[6:8]
        C[g + 8, 2 * t], C[g + 8, 2 * t + 1] = r[8:10]
    return A, B, C


def make(path):
    rng = np.random.default_rng(7)
    regs = np.zeros((32, 10), np.float32)
    # Products 2^-9 to 2^-25 of an accumulator near ±1: their low bits fall
    # below its last place, where the three ways of summing part.
    regs[:, 0:4] = rng.uniform(-1, 1, (32, 4)) * 2.0 ** -8
    regs[:, 4:6] = rng.uniform(-1, 1, (32, 2)) * 2.0 ** rng.integers(-16, -2, (32, 2))
    regs[:, 6:10] = rng.choice([-1, 1], (32, 4)) * rng.uniform(1, 2, (32, 4))
    # Some accumulators zero, where a product is the largest term.
    regs[::5, 6:10] = 0
    # Row 5 of A (lanes 20..23) over 2^-40 .. 2^10: terms from far above
    # the accumulator to wholly below the window.
    regs[20:24, 0:4:2] *= 2.0 ** rng.integers(-32, 18, (4, 2))
    # Row 0 (lanes 0..3's A0 and A2) with an infinity: every output of the
    # row infinite, its sign that of B's element.
    regs[3, 0] = np.inf
    # Row 9 (lanes 4..7's A1 and A3) and its accumulators all zero.
    regs[4:8, 1:4:2] = 0
    regs[4:8, 8:10] = 0
    np.save(path, regs.reshape(-1))


# The rows `make` gives an infinity (0) and only zeros (9).
SPECIAL_ROWS = (0, 9)


def check(in_path, out_path):
    A, B, C = matrices(np.load(in_path).reshape(32, 10))
    out = np.load(out_path).reshape(32, 4)
    D = np.zeros((16, 8), np.float32)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        D[g, 2 * t], D[g, 2 * t + 1], D[g + 8, 2 * t], D[g + 8, 2 * t + 1] = out[lane]
    ok = not_fused = not_exact = special = special_ok = 0
    # Other windows and roundings, for where the model does not hold: which
    # of them every output agrees with.
    variants = {(bits, cut, rounding): True for bits in range(22, 29)
                for cut in (int, math.floor)
                for rounding in (toward_zero, to_nearest)}
    for m in range(16):
        for n in range(8):
            want = model(C[m, n], A[m], B[:, n])
            got = D[m, n]
            same = got.view(np.uint32) == want.view(np.uint32)
            if m in SPECIAL_ROWS:
                special += 1
                special_ok += same
                continue
            ok += same
            for bits, cut, rounding in variants:
                variants[bits, cut, rounding] &= bool(
                    got.view(np.uint32) ==
                    windowed(C[m, n], A[m], B[:, n], bits, rounding, cut).view(np.uint32))
            not_fused += fused(C[m, n], A[m], B[:, n]) != want
            not_exact += exact_toward_zero(C[m, n], A[m], B[:, n]) != want
    rounded = 128 - special
    print(f"{ok} of {rounded} outputs as the tensor cores round them "
          f"(not fused multiply-adds: {not_fused}, not the exact sum toward "
          f"zero: {not_exact})")
    print(f"{special_ok} of {special} outputs of infinite and zero terms as "
          f"IEEE sums")
    cuts = {int: "terms cut toward zero", math.floor: "terms floored"}
    roundings = {toward_zero: "sum toward zero", to_nearest: "sum to nearest"}
    matching = [f"{bits} bits, {cuts[cut]}, {roundings[rounding]}"
                for (bits, cut, rounding), all_same in variants.items() if all_same]
    print("windows and roundings that every output agrees with: " +
          ("; ".join(matching) or "none (22-28 bits, terms cut toward zero "
                                  "or floored, sum toward zero or to nearest)"))
    return 0 if ok == rounded and special_ok == special and not_fused and not_exact else 1


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
