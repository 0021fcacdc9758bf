#!/usr/bin/env python3
"""Static report of linattn's GPU kernels: what ptxas and the SASS say.

No GPU runs. For a set of representative kernels (the chunked tensor-core
scan in bf16 and f16 at F = 64 and 128 with chunks of 16, 32 and 64, and
in bf16 on sm_90a's wgmma (PTX for sm_90a goes to ptxas as such); the
strict-fp32 recurrent scan; the decode step; kv_summary and query_readout;
scores and apply_scores) this script

1. writes a small module per configuration and lowers it with
   `linattn-opt --linattn-lower-to-nvvm="format=isa chip=..."`, then takes
   the PTX the module embeds and the block size of each launch from the
   host code;
2. compiles the PTX with the toolkit's `ptxas -O3 -v` (the options the
   pipeline uses) and reads registers, shared memory, stack and spills;
3. disassembles the cubin with `cuobjdump --dump-sass` and counts the
   instruction mix;
4. computes the theoretical occupancy (H100 for sm_90, A100 for sm_80) and,
   for the chunked kernels, the tensor-core flops and the shared-memory loads
   per HMMA;
5. with --fit, lowers the module again with `fit-registers=true`
   (linattn-gpu-fit-registers: each kernel whose registers limit its
   blocks per SM compiled again under `.minnctapersm` for one block more at
   a time) and reports the blocks and registers of the kernels it bounds.

It writes bench/results/gpu-static.{md,csv}.

  bench/gpu/static_report.py [--build-dir build] [--chips sm_90,sm_80]
                             [--out-dir bench/results] [--keep DIR]
                             [--only REGEX] [--fit]

cuobjdump is taken from the toolkit's bin/, else from NVIDIA's
nvidia-cuda-cuobjdump wheel in this Python (scripts/install-deps.sh installs
it), else from PATH.
"""

import argparse
import collections
import csv
import datetime
import glob
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

#===------------------------------------------------------------------------===#
# Configurations
#===------------------------------------------------------------------------===#

# Leading dimensions of the modules: batch 8, 16 heads (the issue's B8·H16).
BATCH, HEADS = 8, 16


def _t(shape, dtype):
    return "tensor<" + "x".join(str(s) for s in shape) + f"x{dtype}>"


def scan_module(dtype, f, dv, normalized=True, token_major=False):
    """Causal elu+1 attention as a scan, f32 state, returning O only;
    normalized, or not (the benchmark's function). `token_major`: on
    [B, T, H, D] arguments and result, transposed around the scan."""
    x = _t((BATCH, HEADS, "?", f), dtype)
    v = _t((BATCH, HEADS, "?", dv), dtype)
    s = _t((BATCH, HEADS, f, dv), "f32")
    z = _t((BATCH, HEADS, f), "f32")
    norm = " normalize(eps = 1.0e-6)" if normalized else ""
    scan = f"""  %fq = linattn.feature_map elu %q : {x} -> {x}
  %fk = linattn.feature_map elu %k : {x} -> {x}
  %o, %s, %z = linattn.scan forward %fq, %fk, %v{norm} : {x}, {x}, {v} -> {v}, {s}, {z}
"""
    if not token_major:
        return f"""func.func @scan(%q: {x}, %k: {x}, %v: {v}) -> {v} {{
{scan}  return %o : {v}
}}
"""
    xt = _t((BATCH, "?", HEADS, f), dtype)
    vt = _t((BATCH, "?", HEADS, dv), dtype)
    swap = "permutation = [0, 2, 1, 3]"
    lines = ["  %c1 = arith.constant 1 : index",
             f"  %n = tensor.dim %qt, %c1 : {xt}"]
    for name, source, target in (("q", xt, x), ("k", xt, x), ("v", vt, v)):
        lines += [f"  %{name}e = tensor.empty(%n) : {target}",
                  f"  %{name} = linalg.transpose ins(%{name}t : {source}) "
                  f"outs(%{name}e : {target}) {swap}"]
    return (f"func.func @scan(%qt: {xt}, %kt: {xt}, %vt: {vt}) -> {vt} {{\n"
            + "\n".join(lines) + "\n" + scan +
            f"  %oe = tensor.empty(%n) : {vt}\n"
            f"  %ot = linalg.transpose ins(%o : {v}) outs(%oe : {vt}) {swap}\n"
            f"  return %ot : {vt}\n}}\n")


# A segment target no grid reaches: every sequence long enough splits.
SPLIT = 1000000000


def grid_options(target):
    """The options of a module run batch-parallel (0) or split into segments
    (SPLIT). Splitting keeps small-grid-value-tile's wider tiles: with the
    target that high every grid would count as small, where at the modules'
    B8·H16 the default target leaves them their tiles."""
    if not target:
        return "sequence-parallel-blocks=0"
    return f"sequence-parallel-blocks={target} small-grid-value-tile=0"


def step_module(batch, heads, f, dv):
    """One decode step of causal elu+1 attention for every (batch, head)."""
    x = _t((batch, heads, f), "f32")
    v = _t((batch, heads, dv), "f32")
    s = _t((batch, heads, f, dv), "f32")
    return f"""func.func @decode(%q: {x}, %k: {x}, %v: {v}, %s: {s}, %z: {x}) -> ({v}, {s}, {x}) {{
  %fq = linattn.feature_map elu %q : {x} -> {x}
  %fk = linattn.feature_map elu %k : {x} -> {x}
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = 1.0e-6) : {x}, {x}, {v}, {s}, {x} -> {v}, {s}, {x}
  return %o, %s1, %z1 : {v}, {s}, {x}
}}
"""


def attention_module(f, causal, dtype="f32"):
    """elu+1 attention in one op; decomposed by the pipeline."""
    x = _t((BATCH, HEADS, "?", f), dtype)
    mask = " causal" if causal else ""
    return f"""func.func @attention(%q: {x}, %k: {x}, %v: {x}) -> {x} {{
  %0 = linattn.attention elu %q, %k, %v{mask} normalize(eps = 1.0e-6) : {x}, {x}, {x} -> {x}
  return %0 : {x}
}}
"""


class Config:
    def __init__(self, label, module, options, kind, f=None, dv=None,
                 dtype="f32", normalized=True, slots=None, states_slots=None):
        self.label = label
        self.module = module
        # The chunked rows read the mma.sync chunk loops (HMMA per chunk,
        # padded tiles); the wgmma ones, the default on sm_90, are their own
        # kind.
        if kind == "chunked" and "wgmma=" not in options:
            options += " wgmma=false"
        self.options = options
        self.kind = kind  # chunked | wgmma | recurrent | step | linear | quadratic
        self.f = f
        self.dv = dv
        self.dtype = dtype
        self.normalized = normalized
        # Slots of the staged tiles: 2 with async copies (the default of
        # 16-bit chunked kernels; f32 data says), copy-stages more, 1 when
        # staged synchronously or copied a chunk at a time; the segment
        # states' (states-copy-stages), the same by default.
        if slots is None:
            slots = 2 if (kind in ("chunked", "wgmma") and dtype != "f32" and
                          "async-copies=false" not in options) else 1
        self.slots = slots
        self.states_slots = slots if states_slots is None else states_slots


def configurations():
    configs = []
    for f in (64, 128):
        for dtype in ("bf16", "f16"):
            for chunk in (16, 32, 64):
                configs.append(Config(
                    f"chunked {dtype} F{f} chunk-size={chunk}",
                    scan_module(dtype, f, f),
                    f"scan-kernel=chunked chunk-size={chunk} "
                    "sequence-parallel-blocks=0", "chunked", f, f, dtype))
            configs.append(Config(
                f"chunked {dtype} F{f} sequence-parallel",
                scan_module(dtype, f, f),
                "scan-kernel=chunked " + grid_options(SPLIT),
                "chunked", f, f, dtype))
        # The benchmark's function: unnormalized, O only (no z anywhere).
        for parallel in (0, SPLIT):
            configs.append(Config(
                f"chunked bf16 F{f} unnormalized" +
                (" sequence-parallel" if parallel else ""),
                scan_module("bf16", f, f, normalized=False),
                f"scan-kernel=chunked {grid_options(parallel)}",
                "chunked", f, f, "bf16", normalized=False))
        # Value tiles of 32 columns: twice the batch-parallel blocks, each
        # computing its chunks' scores (B8·H16·D64: 256 blocks, which take
        # the batch-parallel kernel where 64 columns take the segments).
        configs.append(Config(
            f"chunked bf16 F{f} unnormalized value-tile=32",
            scan_module("bf16", f, f, normalized=False),
            "scan-kernel=chunked sequence-parallel-blocks=0 value-tile=32",
            "chunked", f, f, "bf16", normalized=False))
        # Value tiles of 128 columns (dynamic shared memory, eight warps at
        # F = 128): one block per head computes the scores once.
        if f == 128:
            configs.append(Config(
                f"chunked bf16 F{f} unnormalized value-tile=128",
                scan_module("bf16", f, f, normalized=False),
                "scan-kernel=chunked sequence-parallel-blocks=0 value-tile=128",
                "chunked", f, f, "bf16", normalized=False))
        # Registers for 4 blocks per SM (min-blocks-per-sm=4, .minnctapersm)
        # in the normalized kernel, which ptxas otherwise gives 3.
        configs.append(Config(
            f"chunked bf16 F{f} min-blocks-per-sm=4",
            scan_module("bf16", f, f),
            "scan-kernel=chunked sequence-parallel-blocks=0 min-blocks-per-sm=4",
            "chunked", f, f, "bf16"))
        # The same with 32-bit offsets (narrow-offset-limit=2^31), for the
        # comparison with the 64-bit offsets the chunk loops take by default.
        configs.append(Config(
            f"chunked bf16 F{f} unnormalized 32-bit offsets",
            scan_module("bf16", f, f, normalized=False),
            "scan-kernel=chunked sequence-parallel-blocks=0 "
            "narrow-offset-limit=2147483648", "chunked", f, f, "bf16",
            normalized=False))
        # Staging's L2 prefetch of the next chunk (prefetch-chunks=1), as the
        # benchmark calls it, batch- and sequence-parallel.
        for parallel in (0, SPLIT):
            configs.append(Config(
                f"chunked bf16 F{f} unnormalized prefetch-chunks=1" +
                (" sequence-parallel" if parallel else ""),
                scan_module("bf16", f, f, normalized=False),
                f"scan-kernel=chunked {grid_options(parallel)} "
                "prefetch-chunks=1", "chunked", f, f, "bf16", normalized=False))
        # cp.async double buffering: doubled staged tiles in dynamic shared
        # memory, normalized and as the benchmark calls it.
        for normalized in (True, False):
            configs.append(Config(
                f"chunked bf16 F{f} " +
                ("" if normalized else "unnormalized ") + "async-copies",
                scan_module("bf16", f, f, normalized=normalized),
                "scan-kernel=chunked sequence-parallel-blocks=0 "
                "async-copies=true", "chunked", f, f, "bf16",
                normalized=normalized, slots=2))
        # The chunk loops on sm_90a's wgmma (wgmma=true: the scores and, in
        # bf16, the state update), normalized and as the benchmark calls it;
        # on sm_80 the option does not apply and the kernels are the rows
        # above. At F = 128 wgmma needs chunks of 64, which the shared memory
        # of every chip leaves to wgmma-chunks (up to 113 KiB, sm_90: two
        # warpgroups, the state update by wgmma too; the default takes them
        # for the unnormalized loops, the rows force them for both).
        # Unpadded swizzled tiles: no MMA-section table.
        wide = " wgmma-chunks=true" if f == 128 else ""

        def both_grids(label, options, kind, normalized=False):
            """The bf16 scan of `options` as `label`, batch-parallel and
            sequence-parallel (normalized: labelled so, else unnormalized)."""
            for parallel in (0, SPLIT):
                configs.append(Config(
                    f"chunked bf16 F{f} " +
                    ("" if normalized else "unnormalized ") + label +
                    (" sequence-parallel" if parallel else ""),
                    scan_module("bf16", f, f, normalized=normalized),
                    f"scan-kernel=chunked {grid_options(parallel)} {options}",
                    kind, f, f, "bf16", normalized=normalized))

        for normalized in (True, False):
            both_grids("wgmma" + wide, "wgmma=true" + wide, "wgmma", normalized)
        # The benchmark's token-major row: the same kernels on [B, T, H, D]
        # operands (rows H·D elements apart, H a kernel argument).
        for parallel in (0, SPLIT):
            configs.append(Config(
                f"chunked bf16 F{f} unnormalized wgmma{wide} token-major" +
                (" sequence-parallel" if parallel else ""),
                scan_module("bf16", f, f, normalized=False, token_major=True),
                f"scan-kernel=chunked {grid_options(parallel)} wgmma=true{wide}",
                "wgmma", f, f, "bf16", normalized=False))
        # Three slots per staged tile (copy-stages=3: the copies of the next
        # two chunks in flight), four for the segment states
        # (states-copy-stages=4), as the benchmark calls them: on sm_90 the
        # wgmma kernels at F = 64, mma.sync at F = 128 (chunks of 32).
        for parallel in (0, SPLIT):
            configs.append(Config(
                f"chunked bf16 F{f} unnormalized copy-stages=3" +
                (" states-copy-stages=4 sequence-parallel" if parallel else ""),
                scan_module("bf16", f, f, normalized=False),
                f"scan-kernel=chunked {grid_options(parallel)} "
                "copy-stages=3 states-copy-stages=4" +
                (" wgmma=true" if f == 64 else ""),
                "wgmma" if f == 64 else "chunked", f, f, "bf16",
                normalized=False, slots=3, states_slots=4))
        # Bulk copies (bulk-copies=true): one per padded row of a whole
        # chunk, on an mbarrier per slot, as the benchmark calls them; at
        # F = 64 in bf16 every tile is in wgmma's swizzle (no bulk copies),
        # so mma.sync's padded tiles instead (wgmma=false).
        both_grids("bulk-copies", "bulk-copies=true", "chunked")
        # The masked scores in registers (scores-in-registers=true), which
        # applies where one warp per row tile takes all keys (F = 64; F =
        # 128 takes two): the benchmark's function on wgmma.
        # There the S tile drops its padding for the 128-byte swizzle
        # (57344 bytes: four blocks per SM, as its rows' padding left
        # three), which registers bounded for four blocks make the
        # occupancy (the benchmark's `4 blocks/SM` row).
        if f == 64:
            both_grids("wgmma scores-in-registers",
                       "wgmma=true scores-in-registers=true", "wgmma")
            both_grids("wgmma scores-in-registers min-blocks-per-sm=4",
                       "wgmma=true scores-in-registers=true "
                       "min-blocks-per-sm=4", "wgmma")
        # The outputs by wgmma too (wgmma-outputs=true): at F = 64 on one
        # warpgroup, at F = 128 on two with chunks of 64 (wgmma-chunks); the
        # benchmark's function and normalized.
        for normalized in (False, True):
            both_grids("wgmma-outputs", "wgmma=true wgmma-outputs=true" + wide,
                       "wgmma", normalized)
        # With the scores in registers too (F = 64, one warpgroup): P·V by
        # wgmma with A in registers, no scores tile.
        if f == 64:
            for normalized in (False, True):
                both_grids("wgmma-outputs scores-in-registers",
                           "wgmma=true wgmma-outputs=true "
                           "scores-in-registers=true", "wgmma", normalized)
        # The groups of a chunk staged unrolled (unroll-staging=true): the
        # benchmark's function, the default's kernels otherwise.
        both_grids("wgmma unroll-staging", "wgmma=true unroll-staging=true" + wide,
                   "wgmma")
        # f32 copies asynchronously at F = 64 (two slots of the staged
        # tiles); at F = 128 the second slots would shrink the chunks, and
        # the chunk loops copy a chunk at a time into one, the segment
        # states (φ(K_c) and V_c only) into two.
        slots = 2 if f == 64 else 1
        for parallel in (0, SPLIT):
            configs.append(Config(
                f"chunked tf32 F{f}" +
                (" sequence-parallel" if parallel else ""),
                scan_module("f32", f, f),
                f"tf32=true {grid_options(parallel)}", "chunked", f,
                f, slots=slots, states_slots=2))
        # tf32x3: the same tiles, each product three of the operands' tf32
        # parts; normalized and as the benchmark calls it (batch-parallel,
        # and in segments as at B2·H16).
        for normalized in (True, False):
            configs.append(Config(
                f"chunked tf32x3 F{f}" + ("" if normalized else " unnormalized"),
                scan_module("f32", f, f, normalized),
                "tf32x3=true sequence-parallel-blocks=0", "chunked", f, f,
                normalized=normalized, slots=slots))
        configs.append(Config(
            f"chunked tf32x3 F{f} unnormalized sequence-parallel",
            scan_module("f32", f, f, normalized=False),
            f"tf32x3=true {grid_options(SPLIT)}", "chunked", f, f,
            normalized=False, slots=slots, states_slots=2))
        # Two warps per row tile at F = 64 (row-tile-warps=2): four warps a
        # block instead of two, the same tiles.
        if f == 64:
            for option in ("tf32", "tf32x3"):
                configs.append(Config(
                    f"chunked {option} F{f} row-tile-warps=2",
                    scan_module("f32", f, f),
                    f"{option}=true row-tile-warps=2 "
                    "sequence-parallel-blocks=0", "chunked", f, f, slots=2))
    # Feature sizes between 64 and 128: F = 80 is what the normalized
    # gradients' scans take as queries and keys at Dv = 64 in 16-bit data
    # ([g, h] and [V, 1] padded by linattn-decompose{column-multiple=16}).
    # F = 256: FAVOR+'s usual number of random features, at a head size of
    # 64 (value tiles of 32 columns in dynamic shared memory).
    for f, dv in ((80, 64), (96, 64), (256, 64)):
        configs.append(Config(
            f"chunked bf16 F{f} Dv{dv} unnormalized",
            scan_module("bf16", f, dv, normalized=False),
            "scan-kernel=chunked sequence-parallel-blocks=0", "chunked", f, dv,
            "bf16", normalized=False, slots=2))
    # tf32 at F = 160: value tiles of 32 columns too, copied a chunk at a
    # time into one slot.
    configs.append(Config(
        "chunked tf32 F160 Dv64", scan_module("f32", 160, 64),
        "tf32=true sequence-parallel-blocks=0", "chunked", 160, 64, slots=1))
    for f in (64, 128):
        for normalized in (True, False):
            suffix = "" if normalized else " unnormalized"
            module = scan_module("f32", f, f, normalized)
            configs.append(Config(f"recurrent f32 F{f}{suffix}", module,
                                  "scan-kernel=recurrent", "recurrent", f, f,
                                  normalized=normalized))
            configs.append(Config(
                f"recurrent f32 F{f}{suffix} 1 column/thread", module,
                "scan-kernel=recurrent scan-thread-columns=1", "recurrent",
                f, f, normalized=normalized))
        configs.append(Config(f"recurrent f32 F{f} synchronous staging",
                              scan_module("f32", f, f),
                              "scan-kernel=recurrent async-copies=false "
                              "scan-thread-columns=1", "recurrent", f, f))
        # One block a head (tune.py --form=recurrent): 4·F threads cover
        # Dv = F columns, staging and mapping φ(Q), φ(K) once a head.
        configs.append(Config(
            f"recurrent f32 F{f} unnormalized scan-tile={4 * f}",
            scan_module("f32", f, f, False),
            f"scan-kernel=recurrent scan-tile={4 * f}", "recurrent", f, f,
            normalized=False))
    # The chunkwise scan on CUDA cores (simt-chunks=true): strict fp32 as
    # register-blocked products.
    for f in (64, 128):
        for normalized in (True, False):
            suffix = "" if normalized else " unnormalized"
            configs.append(Config(
                f"simt chunks f32 F{f}{suffix}",
                scan_module("f32", f, f, normalized),
                "simt-chunks=true sequence-parallel-blocks=0", "recurrent", f,
                f, normalized=normalized))
    configs.append(Config(
        "recurrent f32 F128 unnormalized 32 columns/warp",
        scan_module("f32", 128, 128, False),
        "scan-kernel=recurrent scan-feature-lanes=1", "recurrent", 128, 128,
        normalized=False))
    configs.append(Config("recurrent bf16 F64 (scan-kernel=recurrent)",
                          scan_module("bf16", 64, 64), "scan-kernel=recurrent",
                          "recurrent", 64, 64, "bf16"))
    configs.append(Config("step f32 B8·H32 F128", step_module(8, 32, 128, 128),
                          "", "step", 128, 128))
    configs.append(Config("kv_summary + query_readout f32 F64",
                          attention_module(64, causal=False), "", "linear", 64,
                          64))
    # The linear form's tensor-core kernels: the summary's segment sums (and
    # their sum over segments) and the readout.
    for f in (64, 128):
        configs.append(Config(f"kv_summary + query_readout bf16 F{f} (chunked)",
                              attention_module(f, causal=False, dtype="bf16"),
                              "", "linear", f, f, "bf16"))
    configs.append(Config("scores + apply_scores f32 F64",
                          attention_module(64, causal=True),
                          "rewrite-forms=false", "quadratic", 64, 64))
    return configs


#===------------------------------------------------------------------------===#
# Tools
#===------------------------------------------------------------------------===#

def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"static_report.py: {' '.join(cmd)} failed:\n{p.stderr}")
    return p.stdout, p.stderr


def find_cuda():
    for root in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"),
                 "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "bin", "ptxas")):
            return root
    ptxas = shutil.which("ptxas")
    if ptxas:
        return os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))
    sys.exit("static_report.py: no CUDA toolkit (ptxas) found; set CUDA_PATH")


def find_cuobjdump(cuda):
    candidates = [os.path.join(cuda, "bin", "cuobjdump")]
    try:
        import nvidia  # NVIDIA's wheels, a namespace package
        for path in nvidia.__path__:
            candidates += sorted(glob.glob(os.path.join(path, "*", "bin",
                                                        "cuobjdump")))
    except ImportError:
        pass
    candidates.append(shutil.which("cuobjdump") or "")
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("static_report.py: no cuobjdump; run scripts/install-deps.sh "
             "(pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")


def tool_version(cmd):
    out, _ = run(cmd)
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[-2].strip() + ", " + lines[-1].strip() if len(lines) >= 2 \
        else out.strip()


#===------------------------------------------------------------------------===#
# Parsing
#===------------------------------------------------------------------------===#

def embedded_object(text, key):
    """The bytes of `key = "..."` in a gpu.object (MLIR's \\XX escapes)."""
    m = re.search(key + r' = "((?:[^"\\]|\\.)*)"', text, re.S)
    if not m:
        sys.exit(f"static_report.py: no {key} in the lowered module")
    s, out, i = m.group(1), bytearray(), 0
    while i < len(s):
        if s[i] == "\\":
            nxt = s[i + 1]
            if nxt in "\\\"":
                out.append(ord(nxt))
                i += 2
            elif nxt in "nt":
                out.append(10 if nxt == "n" else 9)
                i += 2
            else:
                out.append(int(s[i + 1:i + 3], 16))
                i += 3
        else:
            out.extend(s[i].encode())
            i += 1
    return bytes(out)


def launch_sizes(host):
    """{kernel: (grid, block, dynamic shared memory bytes)} from the
    gpu.launch_func ops of the host code; sizes that are not constants are
    None, no dynamic shared memory is 0."""
    lines = host.splitlines()
    result = {}
    for n, line in enumerate(lines):
        m = re.search(r"gpu\.launch_func .*@(\w+) blocks in \(([^)]*)\) "
                      r"threads in \(([^)]*)\)", line)
        if not m:
            continue

        def resolve(name):
            for prev in reversed(lines[:n]):
                d = re.match(r"\s*" + re.escape(name) +
                             r" = llvm\.mlir\.constant\((-?\d+)", prev)
                if d:
                    return int(d.group(1))
                if re.match(r"\s*llvm\.func ", prev):
                    return None
            return None

        grid = tuple(resolve(x.strip()) for x in m.group(2).split(","))
        block = tuple(resolve(x.strip()) for x in m.group(3).split(","))
        d = re.search(r"dynamic_shared_memory_size (%\w+)", line)
        dynamic = resolve(d.group(1)) if d else 0
        result[m.group(1)] = (grid, block, dynamic)
    return result


def ptx_kernels(ptx):
    """The kernels' names in the PTX's order (the module's launches')."""
    return re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.M)


ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i64": 8}


def workgroup_buffers(ir):
    """{kernel: [bytes of each workgroup buffer, in order]} from the gpu.func
    ops of the IR after convert-linattn-to-gpu (before
    linattn-gpu-dynamic-shared-memory turns large ones into views), but the
    mbarriers of bulk copies (i64), which are no tiles."""
    result = {}
    for m in re.finditer(r"gpu\.func @(\w+)\(.*?\) workgroup\((.*?)\) "
                         r"kernel", ir):
        result[m.group(1)] = [
            int(n) * ELEMENT_BYTES[t] for n, t in
            re.findall(r"memref<(\d+)x(\w+), #gpu\.address_space<"
                       r"workgroup>>", m.group(2)) if t != "i64"]
    return result


def ptxas_resources(stderr):
    """{kernel: {registers, barriers, smem, cmem, stack, spill_st, spill_ld}}
    from ptxas -v."""
    result, current = {}, None
    for line in stderr.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = result.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m:
            current.update(stack=int(m.group(1)), spill_st=int(m.group(2)),
                           spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            current["barriers"] = int(b.group(1)) if b else 0
            s = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(s.group(1)) if s else 0
    return result


INSTRUCTION = re.compile(
    r"^\s+/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]\s+)?([A-Z][A-Z0-9_.]*)")


def by_function(sass, pattern, item):
    """{kernel: [item(match)]} for the lines of cuobjdump's SASS that
    `pattern` matches, those for which `item` returns None left out."""
    result, current = {}, None
    for line in sass.splitlines():
        m = re.match(r"\s*Function : (\w+)", line)
        if m:
            current = result.setdefault(m.group(1), [])
            continue
        m = pattern.match(line)
        if m and current is not None:
            x = item(m)
            if x is not None:
                current.append(x)
    return result


def sass_functions(sass):
    """{kernel: [(address, opcode with modifiers)]} from cuobjdump."""
    return by_function(sass, INSTRUCTION,
                       lambda m: (int(m.group(1), 16), m.group(2)))


# The instruction classes of the report, by opcode (the part before the
# first dot) or full mnemonic.
def classify(op):
    base = op.split(".")[0]
    if base == "HMMA":
        return "HMMA"
    if base == "HGMMA":
        return "HGMMA"
    if base in ("FFMA", "FFMA32I"):
        return "FFMA"
    if base in ("FADD", "FMUL", "FMNMX", "FSEL", "FSETP", "FADD32I",
                "FMUL32I"):
        return "FADD/FMUL"
    if base == "DFMA" or base in ("DADD", "DMUL"):
        return "DFMA/DADD"
    if base == "LDSM":
        return "LDSM"
    if base == "LDS":
        if ".U16" in op or ".S16" in op or ".U8" in op or ".S8" in op:
            return "LDS.16"
        if ".64" in op or ".128" in op:
            return "LDS.64/128"
        return "LDS.32"
    if base == "STS":
        return "STS"
    if base in ("LDG", "LD"):
        return "LDG"
    if base in ("STG", "ST"):
        return "STG"
    if base == "BAR":
        return "BAR"
    if base == "SHFL":
        return "SHFL"
    if base == "MUFU":
        return "MUFU"
    if base in ("PRMT", "F2FP", "HADD2", "F2F", "I2F", "F2I"):
        return "convert/pack"
    if base in ("BRA", "BSSY", "BSYNC", "CALL", "RET", "EXIT", "WARPSYNC",
                "BREAK", "BMOV"):
        return "control"
    if base == "NOP":
        return "NOP"
    return "other"


CLASSES = ["HMMA", "HGMMA", "FFMA", "FADD/FMUL", "DFMA/DADD", "LDS.16", "LDS.32",
           "LDS.64/128", "LDSM", "STS", "LDG", "STG", "BAR", "SHFL", "MUFU",
           "convert/pack", "control", "NOP", "other"]


def mix(instructions):
    counts = collections.Counter(classify(op) for _, op in instructions)
    counts["total"] = len(instructions)
    return counts


BRANCH = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/.*\bBRA\b.*?0x([0-9a-f]+)")


def backward_branches(sass):
    """{kernel: [(branch address, target)]} of the branches to an earlier
    address (loops) in cuobjdump's SASS."""
    def loop(m):
        address, target = int(m.group(1), 16), int(m.group(2), 16)
        return (address, target) if target <= address else None
    return by_function(sass, BRANCH, loop)


def token_loop(instructions, branches):
    """The recurrent scan's token loop: of the loops (`branches`, from
    backward_branches) without a barrier, the one with the most FFMA; its
    mix (an empty one if none) and the 32-bit words its shared loads return
    per lane."""
    best = []
    for address, start in branches:
        loop = [(a, o) for a, o in instructions if start <= a <= address]
        if any(o.startswith("BAR") for _, o in loop):
            continue
        key = sum(classify(o) == "FFMA" for _, o in loop)
        if key and key > sum(classify(o) == "FFMA" for _, o in best):
            best = loop
    words = sum(4 if ".128" in o else 2 if ".64" in o else 1
                for _, o in best if o.startswith("LDS"))
    return mix(best), words


def mma_section(instructions):
    """The instructions from the first HMMA to the last (the unrolled
    tensor-core part of the chunk loop), or []."""
    idx = [i for i, (_, op) in enumerate(instructions) if op.startswith("HMMA")]
    return instructions[idx[0]:idx[-1] + 1] if idx else []


#===------------------------------------------------------------------------===#
# Occupancy
#===------------------------------------------------------------------------===#

# Per SM: registers, shared memory, threads, blocks, warps; registers per
# thread; shared memory the driver reserves per block; allocation units.
GPUS = {
    "sm_90": dict(name="H100", regs=65536, smem=228 * 1024, threads=2048,
                  blocks=32, warps=64, max_regs=255, reserved=1024,
                  reg_unit=256, smem_unit=128, sms=132),
    "sm_80": dict(name="A100", regs=65536, smem=164 * 1024, threads=2048,
                  blocks=32, warps=64, max_regs=255, reserved=1024,
                  reg_unit=256, smem_unit=128, sms=108),
}


def occupancy(chip, registers, smem, threads):
    """Blocks per SM and the limiting resource, as the CUDA occupancy
    calculator (cuda_occupancy.h) computes them: registers are allocated per
    warp in units of 256 from the four sub-partitions' register files."""
    g = GPUS[chip]
    warps = math.ceil(threads / 32)
    limits = {"blocks": g["blocks"], "threads": g["warps"] // warps}
    regs_per_warp = math.ceil(registers * 32 / g["reg_unit"]) * g["reg_unit"]
    if regs_per_warp:
        per_partition = (g["regs"] // 4) // regs_per_warp
        limits["registers"] = (per_partition * 4) // warps
    else:
        limits["registers"] = g["blocks"]
    per_block = math.ceil((smem + g["reserved"]) / g["smem_unit"]) * \
        g["smem_unit"]
    limits["shared memory"] = g["smem"] // per_block
    blocks = min(limits.values())
    limiter = "/".join(k for k, v in limits.items() if v == blocks)
    return blocks, blocks * warps / g["warps"], limiter, limits


#===------------------------------------------------------------------------===#
# The report
#===------------------------------------------------------------------------===#

def min_blocks(ptx):
    """{kernel: N} for the entries of `ptx` with `.minnctapersm N`."""
    return {k: int(n) for k, n in re.findall(
        r"\.entry (\w+)\([^{]*?\.minnctapersm (\d+)", ptx)}


def assemble(ptxas, ptx, stem, chip):
    """Writes `ptx` to <stem>.ptx and compiles it with `ptxas -O3 -v` for
    the PTX's own target (sm_90a where the kernels use wgmma; `chip` where
    it names none) into <stem>.cubin: (the cubin's path, ptxas' log, the
    target)."""
    target = re.search(r"^\.target (\w+)", ptx, re.M)
    target = target.group(1) if target else chip
    with open(stem + ".ptx", "w") as out:
        out.write(ptx)
    _, log = run([ptxas, f"-arch={target}", "-O3", "-v", stem + ".ptx", "-o",
                  stem + ".cubin"])
    return stem + ".cubin", log, target


def fitted_bounds(opt, options, module, ptxas, cuda, target):
    """{kernel: (blocks, registers)} for the kernels to which
    linattn-gpu-fit-registers (the pipeline's fit-registers=true) gives a
    bound of their own: ptxas asked under `.minnctapersm` one block more at
    a time, for kernels whose registers hold them below their shared memory
    and threads, the most blocks it fits without spilling, and the
    registers it then takes. ptxas takes all the registers a bound gives,
    so this is the headroom a bound can buy, not what ptxas alone would
    choose."""
    host, _ = run([opt, "-", f"--linattn-lower-to-nvvm={options} "
                   f"fit-registers=true cuda-path={cuda}"], stdin=module)
    ptx = embedded_object(host, "assembly").decode()
    with tempfile.TemporaryDirectory() as tmp:
        _, log, _ = assemble(ptxas, ptx, os.path.join(tmp, "fit"), target)
    resources = ptxas_resources(log)
    return {k: (n, resources[k]["registers"])
            for k, n in min_blocks(ptx).items()}


def analyze(config, chip, opt, cuda, ptxas, cuobjdump, keep, fit=False):
    options = f"format=isa chip={chip} {config.options}".strip()
    host, converted = run([opt, "-", f"--linattn-lower-to-nvvm={options}",
                           "--mlir-print-ir-after=convert-linattn-to-gpu"],
                          stdin=config.module)
    ptx = embedded_object(host, "assembly").decode()
    launches = launch_sizes(host)
    shared = workgroup_buffers(converted)
    with tempfile.TemporaryDirectory() as tmp:
        stem = re.sub(r"\W+", "_", f"{config.label}_{chip}").strip("_")
        cubin, log, target = assemble(ptxas, ptx,
                                      os.path.join(keep or tmp, stem), chip)
        sass, _ = run([cuobjdump, "--dump-sass", cubin])
        if keep:
            with open(os.path.join(keep, stem + ".sass"), "w") as out:
                out.write(sass)
    resources = ptxas_resources(log)
    functions = sass_functions(sass)
    bounds = min_blocks(ptx)
    fitted = fitted_bounds(opt, options, config.module, ptxas, cuda,
                           target) if fit else {}
    rows = []
    for kernel in ptx_kernels(ptx):
        # With sequence-parallel-blocks=0 the segment kernels run only for
        # sequences whose 32-bit offsets would not fit in one block (over
        # 16.7M tokens at F, Dv <= 128): left out.
        if ("sequence-parallel-blocks=0" in config.options
                and "_segment_" in kernel):
            continue
        res = resources[kernel]
        instructions = functions[kernel]
        grid, block, dynamic = launches.get(kernel,
                                            ((None,) * 3, (None,) * 3, 0))
        # ptxas counts static shared memory only; the launch adds the rest.
        res["smem"] += dynamic
        res["dynamic_smem"] = dynamic
        threads = math.prod(b for b in block if b) if all(block) else None
        row = dict(config=config.label, chip=chip, kernel=kernel,
                   threads=threads, grid="×".join(str(g) if g else "?"
                                                  for g in grid),
                   **res)
        row["mix"] = mix(instructions)
        if threads:
            blocks, occ, limiter, limits = occupancy(chip, res["registers"],
                                                     res["smem"], threads)
            row.update(blocks_per_sm=blocks, occupancy=occ, limiter=limiter,
                       limits="/".join(str(limits[k]) for k in
                                       ("registers", "shared memory",
                                        "threads")))
            if all(grid):
                # The share of the GPU's resident block slots the launch fills
                # (above 1: more than one wave).
                row["fill"] = math.prod(grid) / (blocks * GPUS[chip]["sms"])
            ahead = copies_ahead(config, shared.get(kernel, []))
            if ahead is not None:
                row["ahead"] = blocks * ahead
            if kernel in fitted and fitted[kernel][0] != bounds.get(kernel):
                row["fits_blocks"], row["fits_registers"] = fitted[kernel]
        if config.kind == "chunked":
            row.update(chunked_shape(config, shared.get(kernel, []), threads, row,
                                     instructions))
        if config.kind == "recurrent":
            row["token_loop"], row["token_loop_words"] = token_loop(
                instructions, backward_branches(sass).get(kernel, []))
        rows.append(row)
    return rows


def copies_ahead(config, shared):
    """Bytes a block of a chunked kernel staging by async copies has in
    flight while it computes a chunk: the staged tiles' slots but the one
    the products read (φ(Q_c), φ(K_c), V_c; the segment states: φ(K_c),
    V_c), or None for other kernels."""
    if config.kind not in ("chunked", "wgmma") or len(shared) < 2:
        return None
    states = len(shared) == 2
    slots = config.states_slots if states else config.slots
    if slots < 2:
        return None
    return sum(shared[:2 if states else 3]) * (slots - 1) // slots


def chunked_shape(config, shared, threads, row, instructions):
    """Chunk C and value tile DT from the kernel's shared buffers (φ(Q_c):
    C·(F+p), φ(K_c): C·(F+p), V_c: C·(DT+p), scores: C·(C+p), S: F·(DT+p),
    in the data type, rows padded by p = 16 bytes (V_c and S in tf32: 32
    bytes where they fit, else none: the unit swizzle); z: F, f32; the
    segment-state kernel: φ(K_c) and V_c), the flops of one chunk of one
    block, the shared-memory loads per HMMA."""
    hmma = row["mix"]["HMMA"]  # per warp and chunk: the loop is unrolled
    if not shared or not hmma:  # the sequence-parallel scan over segments
        return {}
    f = config.f
    size = 4 if config.dtype == "f32" else 2  # tf32 tiles are f32
    k = 8 if config.dtype == "f32" else 16    # m16n8k8 or m16n8k16
    pad = 16 // size
    # The segment-state kernel stages only φ(K_c) and V_c, in slots of its
    # own. tf32 rows of V_c take 8 elements of padding where they fit, none
    # (swizzled) where a row is whole 128-byte segments, 4 otherwise; DT is
    # a power of two.
    # With states-feature-split its blocks take F / s features (s = 1, 2, 4)
    # and s value tiles: the s for which φ(K_c) is a chunk of 16, 32 or 64
    # rows.
    states = len(shared) == 2
    slots = config.states_slots if states else config.slots
    if states:
        f = next(f // s for s in (1, 2, 4) if f % (16 * s) == 0 and
                 shared[0] % (slots * size * (f // s + pad)) == 0 and
                 shared[0] // (slots * size * (f // s + pad)) in (16, 32, 64))
    chunk = shared[0] // (slots * size * (f + pad))
    row = shared[1 if states else 2] // (slots * size * chunk)
    dv_tile = next(row - p for p in (0, pad, 2 * pad)
                   if row - p > 0 and (row - p) & (row - p - 1) == 0)
    warps = threads // 32
    tc_flops = hmma * warps * 2 * 16 * 8 * k
    # Outside the tensor cores, per chunk: the normalizer φ(q)·z (2·C·F),
    # z += Σ φ(k) (C·F), the scores' row sums (C·C), the scaling by the
    # reciprocal denominators (C·DT).
    cuda_flops = (2 * chunk * f + chunk * f + chunk * chunk + chunk * dv_tile
                  if config.normalized else 0)
    section = mma_section(instructions)
    smix = mix(section)
    lds = smix["LDS.16"] + smix["LDS.32"] + smix["LDS.64/128"] + smix["LDSM"]
    return dict(chunk=chunk, dv_tile=dv_tile, features=f, warps=warps,
                tc_flops=tc_flops,
                cuda_flops=cuda_flops,
                tc_share=tc_flops / (tc_flops + cuda_flops),
                mma_instructions=smix["total"],
                mma_lds=lds, mma_lds16=smix["LDS.16"],
                mma_pack=smix["convert/pack"])


def write_reports(rows, meta, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, "gpu-static.csv")
    fields = ["config", "chip", "kernel", "threads", "grid", "registers",
              "smem", "dynamic_smem", "stack", "spill_st", "spill_ld", "barriers",
              "blocks_per_sm", "limits", "occupancy", "limiter", "fill",
              "ahead", "fits_blocks", "fits_registers"] + \
        ["sass_" + c for c in CLASSES] + ["sass_total"] + \
        ["chunk", "features", "dv_tile", "warps", "tc_flops", "cuda_flops", "tc_share",
         "mma_instructions", "mma_lds", "mma_lds16", "mma_pack"]
    with open(csv_path, "w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=fields)
        w.writeheader()
        for r in rows:
            d = {k: r.get(k, "") for k in fields}
            for c in CLASSES:
                d["sass_" + c] = r["mix"][c]
            d["sass_total"] = r["mix"]["total"]
            if isinstance(d["occupancy"], float):
                d["occupancy"] = f"{d['occupancy']:.4f}"
            if isinstance(d["fill"], float):
                d["fill"] = f"{d['fill']:.4f}"
            if isinstance(d["tc_share"], float):
                d["tc_share"] = f"{d['tc_share']:.4f}"
            w.writerow(d)

    md = []
    md.append("# GPU kernels, static report (no GPU ran)\n")
    md.append("Generated by `bench/gpu/static_report.py` (see "
              "`bench/gpu/README.md`). Nothing here was measured on a GPU: "
              "the numbers are what ptxas reports and what the SASS of the "
              "cubins contains, and occupancies are theoretical. What the "
              "kernels measure on a GPU is in the `bench/gpu/run.sh` reports "
              "beside this one (`<device>-<date>.md`).\n")
    md.append("```")
    for k, v in meta.items():
        md.append(f"{k}: {v}")
    md.append("```\n")
    md.append(f"Modules: batch {BATCH} × {HEADS} heads, dynamic sequence "
              "length, elu+1 features, normalized unless the configuration "
              "says unnormalized (those return O only, the benchmark's "
              "function); Dv = F. Each module is "
              "lowered with `linattn-lower-to-nvvm=\"format=isa chip=... "
              "<options>\"`, its PTX compiled with `ptxas -O3 -v` and the "
              "cubin disassembled with `cuobjdump --dump-sass`. Instruction "
              "counts are static (instructions in the code, not executed). "
              "Chunk loops address the rows of their block by 64-bit "
              "offsets (the default; 32-bit in the `32-bit offsets` rows, "
              "`narrow-offset-limit=2147483648`, whose segment kernels run "
              "only for sequences too long for 32-bit offsets in one block "
              "and are left out); `sequence-parallel-blocks=0` leaves out "
              "the sequence-parallel kernels, and the `sequence-parallel` "
              "rows set a target no grid reaches with "
              "`small-grid-value-tile=0`, so that they are the kernels "
              "B8·H16 runs. "
              "`bench/gpu/README.md` reads the chunked kernel's SASS: what "
              "limits it and what would remove the limits.\n")

    for chip in meta["chips"].split(","):
        g = GPUS[chip]
        chip_rows = [r for r in rows if r["chip"] == chip]
        if not chip_rows:
            continue
        md.append(f"## {chip} ({g['name']} limits)\n")
        md.append(f"Occupancy: resident blocks per SM and warps per SM over "
                  f"{g['warps']}, from {g['regs']} registers, "
                  f"{g['smem'] // 1024} KiB shared memory (plus "
                  f"{g['reserved']} B reserved per block), {g['threads']} "
                  f"threads and {g['blocks']} blocks per SM; registers "
                  f"allocated per warp in units of {g['reg_unit']} from the "
                  f"four sub-partitions (as `cuda_occupancy.h` computes it); "
                  f"`r/s/t` are the block limits from registers, shared "
                  f"memory and threads. `smem` is ptxas' static shared memory "
                  f"per block plus the launch's dynamic shared memory (marked "
                  f"d: all of it is dynamic). The grid is the launch's for any sequence "
                  f"length (? where it depends on it); `fill` is the grid's "
                  f"blocks over the resident blocks of all {g['sms']} SMs "
                  f"(below 100%: SMs idle or under-occupied); `ahead` is what "
                  f"the resident blocks of a kernel that stages by async "
                  f"copies have in flight per SM while they compute, the "
                  f"staged tiles' slots but one (the loads' latency times "
                  f"an SM's share of the HBM bandwidth is what it must "
                  f"cover). With `--fit`, `fits` is, for kernels whose "
                  f"registers limit them, the most blocks per SM ptxas fits "
                  f"them into without spilling when asked "
                  f"(`.minnctapersm`), and its registers then, as "
                  f"`fit-registers=true` (linattn-gpu-fit-registers) sets "
                  f"them (- where none more fit).\n")
        md.append("| configuration | kernel | threads | grid | regs | smem B "
                  "| spills st/ld | blocks/SM | r/s/t | occupancy | limited by "
                  "| fill | ahead KiB/SM | fits |")
        md.append("|---|---|---:|---|---:|---:|---|---:|---|---:|---|---:|---:|"
                  "---|")
        for r in chip_rows:
            occ = f"{r['occupancy']:.1%}" if "occupancy" in r else "?"
            fill = f"{r['fill']:.0%}" if "fill" in r else "?"
            ahead = f"{r['ahead'] / 1024:.0f}" if "ahead" in r else ""
            fits = (f"{r['fits_blocks']} ({r['fits_registers']})"
                    if "fits_blocks" in r else
                    "-" if meta.get("fit") and "registers" in r.get(
                        "limiter", "") else "")
            md.append(f"| {r['config']} | `{r['kernel']}` | "
                      f"{r['threads'] or '?'} | {r['grid']} | "
                      f"{r['registers']} | {r['smem']}"
                      f"{' d' if r['dynamic_smem'] else ''} | "
                      f"{r['spill_st']}/{r['spill_ld']} | "
                      f"{r.get('blocks_per_sm', '?')} | "
                      f"{r.get('limits', '?')} | {occ} | "
                      f"{r.get('limiter', '?')} | {fill} | {ahead} | {fits} |")
        md.append("")
        md.append("SASS instruction mix (static counts). LDS.16 are 16-bit "
                  "shared loads (LDS.U16), LDS.32 32-bit ones, LDSM is "
                  "ldmatrix, HGMMA wgmma (each warp of a warpgroup issues it); "
                  "convert/pack are PRMT, F2FP, HADD2.F32 and "
                  "friends.\n")
        shown = ["HMMA", "HGMMA", "FFMA", "FADD/FMUL", "DFMA/DADD", "LDS.16",
                 "LDS.32", "LDS.64/128", "LDSM", "STS", "LDG", "STG", "BAR",
                 "SHFL", "MUFU", "convert/pack"]
        md.append("| configuration | kernel | " + " | ".join(shown) +
                  " | total |")
        md.append("|---|---|" + "---:|" * (len(shown) + 1))
        for r in chip_rows:
            md.append(f"| {r['config']} | `{r['kernel']}` | " +
                      " | ".join(str(r["mix"][c]) for c in shown) +
                      f" | {r['mix']['total']} |")
        md.append("")
        chunked = [r for r in chip_rows if "chunk" in r]
        if chunked:
            md.append("Chunked kernels. C, F and DT (chunk, features and "
                      "value tile of a block) as the "
                      "conversion picked them (it lowers the chunk when F·C "
                      "does not fit its register and shared-memory budget, so "
                      "chunk-size=64 at F = 128 gives C = 32; the segment "
                      "states share out the features where Dv takes several "
                      "value tiles, states-feature-split); HMMA flops per chunk and block "
                      "= HMMAs per warp × warps × 4096 (m16n8k16); CUDA-core "
                      "flops per chunk = 2·C·F (normalizer) + C·F (z) + C² "
                      "(row sums) + C·DT (scaling), none unnormalized; the "
                      "MMA section is the "
                      "SASS from the first HMMA to the last.\n")
            md.append("| configuration | C | F | DT | warps | HMMA/warp | HMMA "
                      "flops/chunk | CUDA-core flops/chunk | tensor-core "
                      "share | MMA-section instr. | per HMMA | shared loads "
                      "per HMMA | of them 16-bit | pack per HMMA |")
            md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
                      "---:|---:|---:|---:|")
            for r in chunked:
                h = r["mix"]["HMMA"]
                md.append(
                    f"| {r['config']} | {r['chunk']} | {r['features']} | "
                    f"{r['dv_tile']} | "
                    f"{r['warps']} | {h} | {r['tc_flops']} | "
                    f"{r['cuda_flops']} | {r['tc_share']:.1%} | "
                    f"{r['mma_instructions']} | "
                    f"{r['mma_instructions'] / h:.1f} | "
                    f"{r['mma_lds'] / h:.2f} | {r['mma_lds16'] / h:.2f} | "
                    f"{r['mma_pack'] / h:.2f} |")
            md.append("")
        recurrent = [r for r in chip_rows
                     if r.get("token_loop") and r["token_loop"]["FFMA"]]
        if recurrent:
            md.append("Recurrent scans: the token loop (of the loops without "
                      "a barrier, the one with the most FFMA; LLVM may unroll "
                      "it, so an iteration can be several tokens). Shared "
                      "registers are the 32-bit words its shared loads "
                      "return per lane; an SM returns one such word per lane "
                      "of one warp per cycle and issues four warp-wide FFMA "
                      "per cycle. Modules with a dynamic N hold the "
                      "batch-parallel scan and the sequence-parallel one "
                      "(segment states, segment outputs).\n")
            md.append("| configuration | kernel | instructions | FFMA | "
                      "LDS.64/128 | LDS.32 | SHFL | FADD/FMUL | instructions "
                      "per FFMA | shared registers per FFMA |")
            md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for r in recurrent:
                t = r["token_loop"]
                ffma = t["FFMA"]
                md.append(
                    f"| {r['config']} | `{r['kernel']}` | {t['total']} | "
                    f"{ffma} | "
                    f"{t['LDS.64/128']} | {t['LDS.32']} | {t['SHFL']} | "
                    f"{t['FADD/FMUL']} | {t['total'] / ffma:.2f} | "
                    f"{r['token_loop_words'] / ffma:.2f} |")
            md.append("")
    md_path = os.path.join(out_dir, "gpu-static.md")
    with open(md_path, "w") as out:
        out.write("\n".join(md))
    return md_path, csv_path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--chips", default="sm_90,sm_80")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench",
                                                      "results"))
    ap.add_argument("--keep", help="also write the PTX, cubins and SASS here")
    ap.add_argument("--fit", action="store_true",
                    help="for kernels whose registers limit their blocks per "
                         "SM, the most blocks ptxas fits them into without "
                         "spilling, as fit-registers=true finds them (each "
                         "module lowered and compiled again)")
    ap.add_argument("--only", help="only the configurations whose label "
                    "matches this regular expression (a partial report)")
    args = ap.parse_args()

    opt = os.path.join(args.build_dir, "bin", "linattn-opt")
    if not os.access(opt, os.X_OK):
        sys.exit(f"static_report.py: no {opt}; run `make build` first")
    cuda = find_cuda()
    ptxas = os.path.join(cuda, "bin", "ptxas")
    cuobjdump = find_cuobjdump(cuda)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    chips = [c.strip() for c in args.chips.split(",") if c.strip()]
    for c in chips:
        if c not in GPUS:
            sys.exit(f"static_report.py: no limits for {c} (known: "
                     f"{', '.join(GPUS)})")

    try:
        # "-dirty" when the tree differs from the commit it names.
        commit = subprocess.run(["git", "-C", ROOT, "describe", "--always",
                                 "--dirty"], capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = "?"
    llvm = run([opt, "--version"])[0]
    m = re.search(r"LLVM version (\S+)", llvm)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"),
        "linattn": commit or "?",
        "LLVM/MLIR": m.group(1) if m else "?",
        "ptxas": f"{ptxas}: " + tool_version([ptxas, "--version"]),
        "cuobjdump": f"{cuobjdump}: " + tool_version([cuobjdump, "--version"]),
        "chips": ",".join(chips),
        "GPU": "none (static analysis only)",
    }
    if args.fit:
        meta["fit"] = ("blocks per SM under .minnctapersm searched (--fit: "
                       "fit-registers=true)")

    rows = []
    for config in configurations():
        if args.only and not re.search(args.only, config.label):
            continue
        for chip in chips:
            if config.kind == "wgmma" and chip != "sm_90":
                continue  # the same kernels as without wgmma
            print(f"static_report: {config.label} ({chip})", flush=True)
            rows += analyze(config, chip, opt, cuda, ptxas, cuobjdump, args.keep,
                            fit=args.fit)
    md, csv_path = write_reports(rows, meta, args.out_dir)
    print(f"static_report: wrote {md} and {csv_path}")


if __name__ == "__main__":
    main()
