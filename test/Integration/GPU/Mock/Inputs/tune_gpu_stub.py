"""tune.py's GPU device (Gpu) on a stand-in for bench.py's Bench that
prints what it is asked: the contract between the two scripts (the inputs'
element type per form, one reference per result), without torch or a GPU.

Usage: tune_gpu_stub.py <bench/gpu>
"""

import sys
import types

sys.path.insert(0, sys.argv[1])
import bench  # noqa: E402


class Tensor:
    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def float(self):
        return Tensor(self.name, "f32")

    def __repr__(self):
        return f"{self.name}:{self.dtype}"


class StubBench:
    device_name, copy_bw, launch_floor = "stub", 1e9, 0.0
    torch = types.SimpleNamespace(
        __version__="stub", cuda=types.SimpleNamespace(empty_cache=lambda: None))

    def __init__(self, args):
        pass

    def prefill_inputs(self, shape):
        return tuple(Tensor(n, "bf16") for n in "qkv")

    def reference(self, q, k, v, causal=True):
        return Tensor("ref", "f32" if causal else "f32-noncausal")

    def time_linattn(self, library, inputs, refs):
        print(f"  time_linattn {library} inputs {list(inputs)} refs {list(refs)}")
        return 0.0, 1.0


bench.Bench = StubBench
import tune  # noqa: E402

for form in ("causal", "noncausal", "recurrent"):
    gpu = tune.Gpu(types.SimpleNamespace(form=form))
    print(f"{form}: element {gpu.element}, tolerance {gpu.tolerance:g}")
    case = gpu.case((1, 2, 64, 32))
    print(f"  measured {gpu.measure('lib.so', case)}")
