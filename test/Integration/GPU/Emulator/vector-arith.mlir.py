"""Makes the input of vector-arith.mlir (--make X.npy), or checks its six
results in DIR against numpy: x + y rounded once, maximum and minimum (NaN
if either is NaN, +0 above -0), in bf16 and in f16."""

import os
import sys

import numpy as np


def bf16(x):
    """f32 to bf16 (nearest even), as f32; NaN stays NaN."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def make(path):
    r = np.random.default_rng(11)
    x = (r.standard_normal(256) * 4.0 ** r.integers(-6, 7, 256)).astype(np.float32)
    special = {
        # bf16 ties: 1 + 2^-8 (to even: 1), 1 + 3·2^-8 (up).
        0: (1.0, 2.0 ** -8), 1: (1.0, 3 * 2.0 ** -8),
        # f16 ties: 1 + 2^-11, 1 + 3·2^-11; an f16 overflow.
        2: (1.0, 2.0 ** -11), 3: (1.0, 3 * 2.0 ** -11), 4: (60000.0, 60000.0),
        # Signed zeros and NaN.
        5: (0.0, -0.0), 6: (-0.0, 0.0), 7: (np.nan, 1.0), 8: (-2.0, np.nan),
        9: (-0.0, -0.0), 10: (np.inf, -3.0), 11: (-np.inf, 5.0),
    }
    for i, (a, b) in special.items():
        x[i], x[128 + i] = a, b
    np.save(path, x)


def check(x_path, out):
    x = np.load(x_path).astype(np.float32)
    a, b = x[:128], x[128:]
    got = [np.load(os.path.join(out, f"result{i}.npy")).astype(np.float32)
           for i in range(6)]

    def same(name, have, want):
        have, want = np.asarray(have, np.float32), np.asarray(want, np.float32)
        ok = (have.view(np.uint32) == want.view(np.uint32)) | (
            np.isnan(have) & np.isnan(want))
        assert ok.all(), (name, np.nonzero(~ok), have[~ok], want[~ok])

    def maximum(p, q):
        m = np.where(p > q, p, q)
        m = np.where((p == 0) & (q == 0), np.where(np.signbit(p), q, p), m)
        return np.where(np.isnan(p) | np.isnan(q), np.float32(np.nan), m)

    def minimum(p, q):
        m = np.where(p < q, p, q)
        m = np.where((p == 0) & (q == 0), np.where(np.signbit(p), p, q), m)
        return np.where(np.isnan(p) | np.isnan(q), np.float32(np.nan), m)

    with np.errstate(over="ignore", invalid="ignore"):
        ba, bb = bf16(a), bf16(b)
        # The sum of two bf16 values is exact in f64; one rounding to bf16.
        exact = ba.astype(np.float64) + bb.astype(np.float64)
        same("bf16 sum", got[0], bf16(exact.astype(np.float32)))
        same("bf16 max", got[1], maximum(ba, bb))
        same("bf16 min", got[2], minimum(ba, bb))
        ha, hb = a.astype(np.float16), b.astype(np.float16)
        hexact = ha.astype(np.float64) + hb.astype(np.float64)
        same("f16 sum", got[3], hexact.astype(np.float16).astype(np.float32))
        same("f16 max", got[4], maximum(ha.astype(np.float32), hb.astype(np.float32)))
        same("f16 min", got[5], minimum(ha.astype(np.float32), hb.astype(np.float32)))
    assert got[0][0] == 1 and got[0][1] == 1 + 2.0 ** -6, got[0][:2]
    assert got[3][2] == 1 and got[3][3] == 1 + 2.0 ** -9, got[3][2:4]
    assert np.isinf(got[3][4]), got[3][4]
    assert np.signbit(got[2][5]) and not np.signbit(got[1][5]), (got[1][5], got[2][5])
    assert np.isnan(got[1][7]) and np.isnan(got[2][8]), (got[1][7], got[2][8])
    print(f"{len(a)} pairs: bf16 and f16 sums rounded once, maxima and minima "
          "with NaN and signed zeros")


if __name__ == "__main__":
    if sys.argv[1] == "--make":
        make(sys.argv[2])
    else:
        check(sys.argv[1], sys.argv[2])
