"""Checks vector-convert.mlir: f32 rounded to bf16 and to f16 (nearest even)
and widened back, against numpy's roundings."""

import sys

import numpy as np

x = np.load(sys.argv[1]).astype(np.float32)
bf = np.load(sys.argv[2]).astype(np.float32)
half = np.load(sys.argv[3]).astype(np.float32)

# bf16: the high 16 bits of f32, rounded to nearest even (no NaNs here).
bits = x.view(np.uint32).astype(np.uint64)
rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
want_bf = rounded.astype(np.uint32).view(np.float32)
with np.errstate(over="ignore"):
    want_half = x.astype(np.float16).astype(np.float32)

assert (bf.view(np.uint32) == want_bf.view(np.uint32)).all(), (x, bf, want_bf)
assert (half.view(np.uint32) == want_half.view(np.uint32)).all(), (
    x, half, want_half)
# The ties round to even, 70000 overflows f16.
assert bf[0] == 1 and bf[1] == 1 + 2.0**-6, bf[:2]
assert half[2] == 1 and half[3] == 1 + 2.0**-9, half[2:4]
assert np.isinf(half[4]), half[4]
print(f"{len(x)} values rounded to bf16 and f16 as numpy rounds them")
