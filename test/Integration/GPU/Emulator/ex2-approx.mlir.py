"""Checks ex2-approx.mlir's results: 2^x in f32 with subnormal inputs read as
zero and subnormal results flushed to zero, exact to the last bit except for
the host's exp2f rounding (within an ulp)."""

import sys

import numpy as np

x = np.load(sys.argv[1]).astype(np.float32)
y = np.load(sys.argv[2]).astype(np.float32)
tiny = np.finfo(np.float32).tiny
flushed = np.where(np.abs(x) < tiny, np.float32(0), x)
with np.errstate(over="ignore", under="ignore", invalid="ignore"):
    want = np.exp2(flushed.astype(np.float64))
    want = np.where(np.abs(want) < tiny, 0.0, want).astype(np.float32)
for xi, yi, wi in zip(x, y, want):
    if np.isnan(wi):
        assert np.isnan(yi), (xi, yi)
    elif np.isinf(wi) or wi == 0:
        assert yi == wi and not np.signbit(yi), (xi, yi, wi)
    else:
        assert abs(float(yi) - float(wi)) <= np.spacing(wi), (xi, yi, wi)
# The cases the flush decides: 2^-126 is the smallest normal result.
def at(value):
    return y[np.flatnonzero(x == np.float32(value))[0]]


assert at(-126) == tiny and at(-126.5) == 0 and at(-140) == 0
assert at(1e-40) == 1 and at(-1e-40) == 1
print(f"{len(x)} values: exp2 with subnormals flushed")
