"""Sets the best_config of FLA's autotuners by hand and prints what
bench.fla_configs makes of them (bench-fla-configs.test)."""
import importlib
import sys
import warnings

warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
import bench  # noqa: E402
import triton  # noqa: E402
from triton.runtime.autotuner import Autotuner  # noqa: E402

print("before:", repr(bench.fla_configs("chunk_linear_attn")))
for module, name, config in [
        ("fla.ops.common.fused_chunk", "fused_chunk_fwd_kernel",
         triton.Config({"BV": 64}, num_warps=4, num_stages=2)),
        ("fla.ops.common.chunk_h", "chunk_fwd_kernel_h",
         triton.Config({"BK": 64, "BV": 64}, num_warps=4, num_stages=3)),
        ("fla.ops.common.chunk_o", "chunk_fwd_kernel_o",
         triton.Config({"BK": 128, "BV": 128}, num_warps=8, num_stages=3))]:
    kernel = getattr(importlib.import_module(module), name)
    while not isinstance(kernel, Autotuner):
        kernel = kernel.fn
    kernel.best_config = config
print("fused:", bench.fla_configs("fused_chunk_linear_attn"))
print("chunk:", bench.fla_configs("chunk_linear_attn"))
print("unknown:", repr(bench.fla_configs("nothing")))
