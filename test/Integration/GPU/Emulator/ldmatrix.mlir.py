"""The ldmatrix fragments of ldmatrix.mlir as the PTX ISA specifies them."""
import sys

import numpy as np

out = np.load(sys.argv[1]).reshape(32, 2, 4, 2)
tile = np.arange(256, dtype=np.float32).reshape(16, 16)
# Matrix i: tile rows 8(i % 2).., columns 8(i // 2)..
matrices = [tile[8 * (i % 2):8 * (i % 2) + 8, 8 * (i // 2):8 * (i // 2) + 8] for i in range(4)]
for lane in range(32):
    g, t = lane // 4, lane % 4
    for i, m in enumerate(matrices):
        plain = [m[g, 2 * t], m[g, 2 * t + 1]]
        trans = [m[2 * t, g], m[2 * t + 1, g]]
        assert list(out[lane, 0, i]) == plain, (lane, i, out[lane, 0, i], plain)
        assert list(out[lane, 1, i]) == trans, (lane, i, out[lane, 1, i], trans)
print("ldmatrix fragments ok")
