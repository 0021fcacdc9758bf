"""Checks vector-bitcast.mlir's results (in argv[1]) against numpy's views of
the input, bit for bit."""

import os
import sys

import numpy as np

d = sys.argv[1]
x = np.load(os.path.join(d, "x.npy"))
r = [np.load(os.path.join(d, f"result{i}.npy")) for i in range(5)]


def same_bits(got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got, want)
    assert got.tobytes() == want.tobytes(), (what, got, want)


same_bits(r[0], x.view(np.float16).astype(np.float32), "f32 as f16")
same_bits(r[1], x.view(np.float64), "f32 as f64")
same_bits(r[2], x, "f16 back to f32")
same_bits(r[3], x, "f64 back to f32")
same_bits(r[4], x.reshape(32, 4)[:, :3].reshape(-1), "i24 back to f32")
print("vector.bitcast: 32 threads' f32 as f16, f64 and back, i24 and back")
