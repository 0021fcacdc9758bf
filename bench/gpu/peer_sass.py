#!/usr/bin/env python3
"""The chunk loops of flash-linear-attention's kernels beside linattn's,
instruction by instruction, without a GPU.

FLA's kernels are Triton: this compiles, from the installed fla-core
package, `fused_chunk_fwd_kernel` (the kernel of `fused_chunk_linear_attn`)
and with --chunk also `chunk_fwd_kernel_h` and `chunk_fwd_kernel_o` (the
two of `chunk_linear_attn`: every chunk's state, then every chunk's
outputs from it) for sm_90 with Triton's compiler, for each configuration
its autotuner tries on an H100, with 16-byte aligned tensors (what
Triton's launcher specializes torch's tensors to), bf16, chunks of 64,
unnormalized and without gates: what bench.py times. Beside them,
linattn's kernels of the same function as `static_report.py` compiles them:
the batch-parallel chunk loop (`sequence-parallel-blocks=0`) plain and with
`wgmma-outputs=true`, and with --chunk the segment states and outputs. Per
kernel: warps, registers, stack and shared memory, and the instructions of
its chunk loop (the longest backward branch's body; FLA's outputs kernel,
one chunk a block, whole) by class. FLA's loops are straight-line code,
one pass a chunk; linattn's hold the paths a block picks between (aligned
or not, whole chunk or the last) and count their staging loops once.
Which configuration FLA's autotuner takes on a GPU, bench.py's FLA rows
say (`fla_configs`).

Needs triton and fla-core (`pip install flash-linear-attention`); the
features are computed before FLA's kernel (its loop has no feature map),
inside linattn's (elu + 1 in place, the `map` phase of the phase clocks).

  bench/gpu/peer_sass.py --tools=build/bin --features=64,128 --chunk \\
      --out=bench/results
"""

import argparse
import os
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import static_report as sr  # noqa: E402

# What FLA's autotuners try on Hopper: (BK, BV, warps, stages). The fused
# kernel (fla/ops/common/fused_chunk.py: BKV_LIST where the shared memory
# allows, NUM_WARPS on Hopper; BK is min(K, 64)), the states'
# (chunk_h.py) and the outputs' (chunk_o.py: its list, the 128 x 128 one
# where Blackwell's race does not drop it).
FUSED_CONFIGS = [(None, bv, warps, stages) for bv in (64, 128)
                 for warps in (2, 4) for stages in (2, 3, 4)]
STATE_CONFIGS = [(bk, bv, warps, stages) for bk in (64, 128) for bv in (64, 128)
                 for warps in (1, 2, 4, 8) for stages in (2, 3, 4)]
OUTPUT_CONFIGS = [(128, 128, 8, 3), (64, 64, 4, 3), (32, 32, 2, 3)]
CLASSES = ["HGMMA", "HMMA", "LDSM", "LDS.64/128", "STS", "LDG", "STG", "BAR",
           "MUFU", "convert/pack", "control"]


def fla_kernels():
    """{fused, states, outputs}: FLA's forward kernels as JITFunctions, or
    exits saying what is missing."""
    warnings.filterwarnings("ignore")
    try:
        from triton.runtime.jit import JITFunction
        import fla.ops.common.chunk_h as chunk_h
        import fla.ops.common.chunk_o as chunk_o
        import fla.ops.common.fused_chunk as fused
    except ImportError as e:
        sys.exit(f"peer_sass.py: needs triton and fla-core ({e})")

    def unwrap(kernel):
        while not isinstance(kernel, JITFunction):  # autotune, heuristics
            kernel = kernel.fn
        return kernel
    return {"fused": unwrap(fused.fused_chunk_fwd_kernel),
            "states": unwrap(chunk_h.chunk_fwd_kernel_h),
            "outputs": unwrap(chunk_o.chunk_fwd_kernel_o)}


def constants(kind, d, bk, bv):
    """The constexpr arguments of FLA's `kind` kernel at F = Dv = d."""
    common = dict(g=None, g_gamma=None, cu_seqlens=None, H=16, K=d, V=d,
                  BT=64, BV=bv, USE_G=False, USE_G_GAMMA=False, IS_VARLEN=False)
    if kind == "fused":
        return dict(common, h0=None, ht=None, B=8, BK=min(d, 64),
                    USE_INITIAL_STATE=False, STORE_FINAL_STATE=False)
    if kind == "states":
        return dict(common, gk=None, gv=None, h0=None, ht=None,
                    split_offsets=None, BS=64, BK=bk, USE_GK=False,
                    USE_GV=False, USE_INITIAL_STATE=False,
                    STORE_FINAL_STATE=False, STATE_V_FIRST=False)
    return dict(common, chunk_indices=None, HV=16, BK=bk, STATE_V_FIRST=False)


def compile_fla(kernels, kind, d, config, work):
    """The cubin and shared memory of FLA's `kind` kernel at F = Dv = d for
    one configuration (BK, BV, warps, stages)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    bk, bv, warps, stages = config
    kernel = kernels[kind]
    const = constants(kind, d, bk, bv)
    pointers = ("q", "k", "v", "o", "h")
    signature = {n: "constexpr" if n in const else
                 "*bf16" if n in pointers else "fp32" if n == "scale" else "i32"
                 for n in kernel.arg_names}
    index = kernel.arg_names.index
    source = ASTSource(
        fn=kernel, signature=signature,
        constexprs={(index(n),): v for n, v in const.items()},
        attrs={(index(n),): [["tt.divisibility", 16]] for n in pointers
               if n in kernel.arg_names})
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                              options=dict(num_warps=warps, num_stages=stages))
    path = os.path.join(work, f"fla_{kind}_D{d}_{bk}_{bv}_{warps}w{stages}s.cubin")
    with open(path, "wb") as f:
        f.write(compiled.asm["cubin"])
    return path, compiled.metadata.shared


def linattn_cubin(tools, cuda, d, options, work):
    """The cubin of linattn's scan function at F = Dv = d, bf16, B8·H16,
    and {kernel: threads a block} of its launches."""
    module = sr.scan_module("bf16", d, d, normalized=False)
    opt = os.path.join(tools, "linattn-opt")
    host, _ = sr.run([opt, "-", "--linattn-lower-to-nvvm=format=isa chip=sm_90 "
                      + options], stdin=module)
    ptx = sr.embedded_object(host, "assembly").decode()
    threads = {k: block[0] for k, (_, block, _) in sr.launch_sizes(host).items()
               if block and block[0]}
    stem = os.path.join(work, f"linattn_D{d}_{len(os.listdir(work))}")
    cubin, _, _ = sr.assemble(os.path.join(cuda, "bin", "ptxas"), ptx, stem,
                              "sm_90")
    return cubin, threads


def loop_of(cuobjdump, cubin, kernel_prefix, whole=False):
    """(registers, stack bytes, the chunk loop's instructions) of the first
    kernel whose name starts with `kernel_prefix`: its longest loop's body,
    or (`whole`: a kernel of one chunk a block, whose loops are over
    feature blocks) the whole kernel."""
    sass, _ = sr.run([cuobjdump, "--dump-sass", cubin])
    usage, _ = sr.run([cuobjdump, "--dump-resource-usage", cubin])
    functions = sr.sass_functions(sass)
    name = next(k for k in functions if k.startswith(kernel_prefix))
    instructions = functions[name]
    # Not the self-branch cuobjdump shows after the last EXIT.
    branches = [b for b in sr.backward_branches(sass).get(name, [])
                if b[0] != b[1]]
    loop = instructions
    if branches and not whole:
        address, start = max(branches, key=lambda b: b[0] - b[1])
        loop = [(a, op) for a, op in instructions if start <= a <= address]
    line = usage[usage.index(name):]
    regs = int(line.split("REG:")[1].split()[0])
    stack = int(line.split("STACK:")[1].split()[0])
    return regs, stack, loop


def row(label, warps, regs, stack, smem, loop):
    counts = sr.mix(loop)
    return (f"| {label} | {warps} | {regs} | {stack} | {smem} | {counts['total']} | "
            + " | ".join(str(counts[c]) for c in CLASSES) + " |")


# (label, its configurations, its name's prefix in the SASS, whether a
# block's whole kernel is one chunk) of each FLA kernel.
FLA_KERNELS = {
    "fused": ("FLA fused", FUSED_CONFIGS, "fused_chunk_fwd", False),
    "states": ("FLA chunk states (h)", STATE_CONFIGS, "chunk_fwd_kernel_h",
               False),
    "outputs": ("FLA chunk outputs (o)", OUTPUT_CONFIGS, "chunk_fwd_kernel_o",
                True),
}
# linattn's kernels beside them: (label, options, kernel name prefix). The
# segments' kernels as static_report.py compiles them (a target no grid
# reaches, so that they are built).
LINATTN_KERNELS = [
    ("linattn batch-parallel", "sequence-parallel-blocks=0",
     "linattn_scan_chunked"),
    ("linattn batch-parallel, wgmma-outputs",
     "sequence-parallel-blocks=0 wgmma-outputs=true", "linattn_scan_chunked"),
]
LINATTN_SEGMENT_KERNELS = [
    ("linattn segment states", sr.grid_options(sr.SPLIT),
     "linattn_scan_segment_states"),
    ("linattn segment outputs", sr.grid_options(sr.SPLIT),
     "linattn_scan_segment_outputs"),
]


def fla_rows(kernels, kind, d, cuobjdump, work):
    label, configs, prefix, whole = FLA_KERNELS[kind]
    rows = []
    for config in configs:
        bk, bv, warps, stages = config
        if bv > d or (bk or 0) > d:
            continue
        name = (f"{label} " + (f"BK={bk}, " if bk else "")
                + f"BV={bv}, {warps} warps, {stages} stages")
        try:
            cubin, smem = compile_fla(kernels, kind, d, config, work)
        except Exception as e:  # a configuration Triton rejects
            rows.append(f"| {name} | not compiled: {type(e).__name__} |")
            continue
        regs, stack, loop = loop_of(cuobjdump, cubin, prefix, whole)
        rows.append(row(name, warps, regs, stack, smem, loop))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", default="build/bin")
    parser.add_argument("--features", default="64",
                        help="F = Dv values, comma-separated (64, 128)")
    parser.add_argument("--chunk", action="store_true",
                        help="also chunk_linear_attn's two kernels, beside "
                             "linattn's segment kernels")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    cuda = sr.find_cuda()
    cuobjdump = sr.find_cuobjdump(cuda)
    kernels = fla_kernels()
    import triton
    out = ["# FLA's chunk loops beside linattn's (static, no GPU)", "",
           f"`bench/gpu/peer_sass.py`; Triton {triton.__version__}, "
           f"{sr.tool_version([os.path.join(cuda, 'bin', 'ptxas'), '--version'])}. "
           "Each kernel of the benchmark's function (bf16, B8·H16, chunks of 64, "
           "unnormalized) compiled for sm_90 in every configuration FLA's "
           "autotuner tries on Hopper (BK, BV: the tile of features and value "
           "columns a block takes); the instructions of its chunk loop, per "
           "thread (of `warps` a block) and 64-token chunk (static: FLA's loops are one straight "
           "pass a chunk, linattn's hold the paths a block picks between and "
           "its staging loops count once; FLA's outputs kernel whole: one "
           "chunk a block, its loops over blocks of BK features). FLA's features come computed; "
           "linattn's loops apply elu + 1. Shared memory in bytes (FLA: "
           "Triton's; linattn: dynamic, as the launch sets it).", ""]
    header = ("| kernel | warps | regs | stack | smem | loop | "
              + " | ".join(CLASSES) + " |")
    kinds = ["fused"] + (["states", "outputs"] if args.chunk else [])
    ours = LINATTN_KERNELS + (LINATTN_SEGMENT_KERNELS if args.chunk else [])
    with tempfile.TemporaryDirectory() as work:
        for d in (int(x) for x in args.features.split(",")):
            out += [f"## F = Dv = {d}", "", header,
                    "|---" * (6 + len(CLASSES)) + "|"]
            for kind in kinds:
                out += fla_rows(kernels, kind, d, cuobjdump, work)
            for label, options, prefix in ours:
                cubin, threads = linattn_cubin(args.tools, cuda, d, options, work)
                regs, stack, loop = loop_of(cuobjdump, cubin, prefix)
                warps = next((t // 32 for k, t in threads.items()
                              if k.startswith(prefix)), "?")
                out.append(row(label, warps, regs, stack, "-", loop))
            out.append("")
    text = "\n".join(out)
    print(text)
    if args.out:
        path = os.path.join(args.out, "gpu-static-peers.md")
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
