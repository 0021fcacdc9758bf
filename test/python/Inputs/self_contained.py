"""The package on a self-contained libLinAttnCAPI.so (test/python/bundle.test):
which backends and runtime libraries it finds beside the library, a causal
attention against float64, and which LLVM libraries the process mapped."""

import os

import numpy as np

import linattn
from linattn import reference as ref
from linattn.jit import default_shared_libs

print("backends:", linattn.available_backends())
print("shared libs:", " ".join(os.path.basename(p) for p in default_shared_libs()))

rng = np.random.default_rng(5)
q, k, v = (rng.uniform(-1, 1, (2, 3, 77, 16)).astype(np.float32)
           for _ in range(3))
got = linattn.linear_attention(q, k, v, causal=True)
want = ref.linear_attention(q, k, v, causal=True)
print("relative error: %.2e" % (np.max(np.abs(got - want)) / np.max(np.abs(want))))

with open("/proc/self/maps") as maps:
    mapped = sorted({os.path.basename(line.split()[-1]) for line in maps
                     if "libMLIR" in line or "libLLVM" in line})
print("LLVM libraries mapped:", mapped)
