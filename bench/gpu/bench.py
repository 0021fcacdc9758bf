#!/usr/bin/env python3
"""GPU benchmark of linattn's kernels against the peers a user would pick.

One run measures, on one GPU and with correctness checked in the same run:

- linattn: the causal scan compiled ahead of time (`linattn-compile
  --target=cuda --shared`: device buffers, the caller's stream; aot.py) and
  called through ctypes on the same torch tensors as the peers, on a torch
  stream: the chunked tensor-core scan in bf16 and, on f32 inputs, in tf32
  and tf32x3 (three tf32 products each: about f32's accuracy; all with fused
  elu+1), and the strict-fp32 recurrent scan; the decode
  step, compiled the same way and timed per token by `decode_graph.cpp` as
  CUDA graph replays (with a ping-pong pair of states and with the state
  updated in place) and as plain launches, next to an empty kernel's;
- flash-linear-attention (`fla.ops.linear_attn.chunk_linear_attn`,
  `fused_chunk_linear_attn`), bf16;
- fast-transformers' CUDA causal product
  (`fast_transformers.causal_product.causal_dot_product`), fp32;
- PyTorch SDPA, causal (FlashAttention), bf16;

on the shapes of issue 7, and at 256 features and Dv = 64 (FAVOR+'s usual
number of random features; linattn's chunked and strict-fp32 scans, FLA
and fast-transformers); and non-causal attention (the linear form
φ(Q)(φ(K)ᵀV), "noncausal" rows): linattn's tensor-core kernels of the linear
form in bf16, its scalar kernels (`linear-kernel=scalar`), tf32 and tf32x3, against
the same two products in torch (cuBLAS, bf16) and non-causal SDPA. The computed function is unnormalized causal linear
attention O = tril(φ(Q)φ(K)ᵀ)V with φ = elu + 1 (what every peer computes);
each prefill peer is timed twice: with φ applied by torch inside the timed
region (what its user pays) and, in its ", features precomputed" row, on
φ(Q), φ(K) computed before it (the peer's kernels alone; linattn's kernels
apply φ as they load). Two more linattn rows
("…, normalized") time the paper's normalized form, each row divided by
φ(q)ᵀz + eps, against a normalized reference: the cost of normalization,
which no peer computes here. Every output is compared
with a float64 chunked reference computed by torch on the GPU from the same
(bf16-rounded) inputs.

Every implementation is timed the same way: CUDA events around one call on
the stream it runs on, the median of --repeat calls after a first one. Reported per
case: median ms, the HBM floor (compulsory bytes / copy bandwidth, measured in
the same run with a large device-to-device copy), the fraction of that floor
reached, ratios to linattn, and the targets of issue 7. Results go to
bench/results/<device>-<date>.{json,md}, with the figure of plot.py (.png)
where matplotlib is installed.

Peers that are not installed are reported as skipped. `--dry-run` needs
neither a GPU nor torch: it prints the plan (shapes, bytes, commands).
"""

import argparse
import ctypes
import concurrent.futures
import datetime
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# (B, H, T, D): the prefill shapes.
PREFILL = ([(8, 16, t, 64) for t in (4096, 16384, 65536)] +
           [(8, 16, t, 128) for t in (4096, 16384, 65536)] +
           # flash-linear-attention's standard shapes (B, T, H, D there).
           [(1, 96, 8192, 128), (2, 16, 16384, 128), (4, 16, 2048, 128),
            (8, 8, 1024, 64)] +
           # (B, H, T, F, Dv): 256 features, FAVOR+'s usual number of random
           # features, at a head size of 64 (elu + 1 of 256-wide q and k: the
           # scan's cost; the random projection is a kernel of its own).
           [(8, 16, 16384, 256, 64)])
# The linattn rows of the prefill shapes whose features are wider than the
# values (PREFILL's (B, H, T, F, Dv)): the defaults of each kernel, the
# chunked scan staged synchronously, and normalized.
WIDE_FEATURE_IMPLS = ("linattn chunked bf16", "linattn chunked bf16, synchronous staging",
                      "linattn chunked tf32", "linattn chunked tf32x3",
                      "linattn recurrent f32",
                      "linattn chunked bf16, normalized")
# Variants whose kernels differ from the default's only at these feature
# sizes (F = Dv): elsewhere they would time the default again.
ONLY_FEATURES = {
    "linattn chunked bf16, scores in registers": (64,),
    "linattn chunked bf16, scores in registers, 4 blocks/SM": (64,),
    "linattn chunked bf16, chunks of 32": (128,),
    "linattn chunked bf16, wgmma chunks, 1 warpgroup": (128,),
    "linattn chunked bf16, wgmma chunks, normalized": (128,),
    "linattn chunked bf16, sequence-parallel-blocks=384": (128,),
    "linattn chunked bf16, wgmma outputs": (64, 128),
    "linattn chunked bf16, wgmma outputs, scores in registers": (64,),
    "linattn chunked bf16, wgmma outputs, scores in registers, "
    "sequence-parallel-blocks=512": (64,),
    "linattn chunked bf16, wgmma outputs, normalized": (64,),
    "linattn recurrent f32, fitted registers": (128,),
}
# Variants whose kernels differ from the default's only on the shapes this
# predicate of (B, H, T, F, Dv) accepts.
ONLY_SHAPES = {
    # The default narrows the chunk loop's value tiles where a grid of
    # 32-column tiles (times the segments) stays within one block per H100
    # SM: never past B·H·⌈Dv / 32⌉ = 132.
    "linattn chunked bf16, small grids unnarrowed":
        lambda b, h, t, d, dv: b * h * -(-dv // 32) <= 132,
    # The strict-fp32 scan counts blocks of 128 threads (32 value columns):
    # a target of 528 splits the sequence where B·H·⌈Dv / 32⌉ stays below
    # 264, the default's 264 only below 132; past 264 both run batch-parallel.
    "linattn recurrent f32, sequence-parallel-blocks=528":
        lambda b, h, t, d, dv: b * h * -(-dv // 32) < 264,
}
# The prefill shapes the targets name, first when a run has a budget
# (--budget-s): FLA's B2·T16K·D128 (1.3x FLA, the shape furthest from the
# HBM floor), then T = 16K (the HBM floor, 5x SDPA), then the rest in
# PREFILL's order, T = 64K (the longest calls) last among the issue's.
BUDGET_FIRST = [(2, 16, 16384, 128), (8, 16, 16384, 64), (8, 16, 16384, 128)]


def budget_order(shapes):
    """`shapes` with BUDGET_FIRST's first, T = 65536 last."""
    def key(shape):
        if shape in BUDGET_FIRST:
            return (0, BUDGET_FIRST.index(shape))
        return (2 if shape[2] == 65536 else 1, 0)
    return sorted(shapes, key=key)


# --lease: the prefill rows a short lease times (bench/gpu/README.md, "When
# GPU time is short"): the defaults of each kernel, the rows whose options
# are still undecided (the portable chunk loops at D = 128 against the
# default's chunks of 64, wgmma chunks for the normalized loops, 384
# sequence-parallel blocks, the outputs by wgmma (from shared tiles, and
# with the scores as wgmma's A in registers), the scores in registers
# with three and four blocks per SM at D = 64, the strict-fp32 scan in
# blocks of 512 threads or split into segments for 528 blocks of 128, the
# strict-fp32 scan chunk by chunk on CUDA cores) and every peer.
LEASE_IMPLS = ("^linattn (chunked (bf16|tf32|tf32x3)|recurrent f32|simt chunks f32)"
               "(, scan-tile=512|, sequence-parallel-blocks=528)?$"
               "|^linattn chunked bf16, (chunks of 32|wgmma chunks, normalized"
               "|scores in registers|scores in registers, 4 blocks/SM"
               "|sequence-parallel-blocks=384|normalized|wgmma outputs"
               "|wgmma outputs, normalized|wgmma outputs, scores in registers"
               "|wgmma outputs, scores in registers, sequence-parallel-blocks=512"
               "|unrolled staging|token-major)$"
               "|^fla\\.|^fast_transformers|SDPA")
LEASE_BUDGET_S = 300

# The peers take features, not raw q and k: each prefill peer is timed with
# elu + 1 applied by torch in the call and, in a row of this suffix, on
# features computed before the timed call.
PRECOMPUTED = ", features precomputed"
# The decode step with its state updated in place (decode_graph.cpp): one
# state buffer, which at B8 fits in an H100's or H200's L2.
IN_PLACE_STEP = "linattn step (graph replay, state in place)"
FAST_TRANSFORMERS = "fast_transformers.causal_dot_product (f32)"
PEER_NOTES = {
    False: "elu + 1 by torch inside the timed call (elu, then + 1, on q and k)",
    True: "elu + 1 by torch before the timed call: the peer's kernels alone",
}

# (B, H, T, D): non-causal attention, the linear form.
NONCAUSAL = ([(8, 16, t, 64) for t in (4096, 16384, 65536)] +
             [(8, 16, 16384, 128)])
QUICK_NONCAUSAL = [(2, 4, 1024, 64)]
# (B, H, T, D): the backward pass (training), causal.
BACKWARD = ([(8, 16, t, 64) for t in (4096, 16384)] +
            [(8, 16, 4096, 128), (2, 16, 16384, 128)])
QUICK_BACKWARD = [(2, 4, 1024, 64)]
# (B, H, D): decode, one token against a state per head.
DECODE = [(b, 32, 128) for b in (1, 8, 64)]
QUICK_PREFILL = [(2, 4, 1024, 64)]
# The decode step of decode_step.mlir has 32 heads of 128 features.
QUICK_DECODE = [(2, 32, 128)]


def prefill_bytes(b, h, t, d, elem, dv=None):
    """Compulsory bytes of a causal forward: read q, k, v, write o (Dv = D
    unless `dv` says otherwise)."""
    return 2 * b * h * t * (d + (d if dv is None else dv)) * elem


def dims(shape):
    """(B, H, T, D, Dv) of a (B, H, T, D) or (B, H, T, F, Dv) shape."""
    return tuple(shape) if len(shape) == 5 else tuple(shape) + (shape[3],)


def backward_bytes(b, h, t, d, elem):
    """Compulsory bytes of a causal backward pass: read q, k, v, dO, write
    dq, dk, dv."""
    return 7 * b * h * t * d * elem


def decode_bytes(b, h, d):
    """Read and write the f32 state and normalizer; q, k, v, o are small."""
    return 2 * b * h * (d * d + d) * 4 + 4 * b * h * d * 2


def results_stem(device):
    """The default stem of a results file: the device's name made a file
    name, and the time (<device>-<YYYYmmdd-HHMM>)."""
    return "{}-{}".format(re.sub(r"[^A-Za-z0-9]+", "-", device).strip("-"),
                          datetime.datetime.now().strftime("%Y%m%d-%H%M"))


def case_name(shape, kind="prefill"):
    """BxHxTxD (prefill), BxHxD (decode), full-BxHxTxD (noncausal),
    grad-BxHxTxD (backward)."""
    name = "x".join(str(s) for s in shape)
    prefix = {"noncausal": "full-", "backward": "grad-"}.get(kind, "")
    return prefix + name


#===------------------------------------------------------------------------===#
# linattn's prefill: aot.py
#===------------------------------------------------------------------------===#

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aot  # noqa: E402
import plot  # noqa: E402

# (implementation, element type, linattn-lower-to-nvvm options, tolerance):
# the chunked scan on tensor cores in bf16 and, for f32 inputs, in tf32; the
# strict-fp32 recurrent scan.
LINATTN_VARIANTS = [
    ("linattn chunked bf16", "bf16", "", 2.5e-2),
    ("linattn chunked bf16, synchronous staging", "bf16", "async-copies=false",
     2.5e-2),
    ("linattn chunked bf16, 32-bit offsets", "bf16",
     "narrow-offset-limit=2147483648", 2.5e-2),
    ("linattn chunked bf16, value-tile=32", "bf16", "value-tile=32", 2.5e-2),
    ("linattn chunked bf16, value-tile=128", "bf16", "value-tile=128", 2.5e-2),
    ("linattn chunked bf16, mma.sync", "bf16", "wgmma=false", 2.5e-2),
    ("linattn chunked bf16, scores in registers", "bf16",
     "scores-in-registers=true", 2.5e-2),
    ("linattn chunked bf16, scores in registers, 4 blocks/SM", "bf16",
     "scores-in-registers=true min-blocks-per-sm=4 "
     "sequence-parallel-blocks=512", 2.5e-2),
    ("linattn chunked bf16, synchronous + L2 prefetch", "bf16",
     "async-copies=false prefetch-chunks=1", 2.5e-2),
    ("linattn chunked tf32", "f32", "tf32=true", 4e-3),
    ("linattn chunked tf32x3", "f32", "tf32x3=true", 1e-4),
    ("linattn chunked tf32, synchronous staging", "f32",
     "tf32=true async-copies=false", 4e-3),
    ("linattn chunked tf32x3, synchronous staging", "f32",
     "tf32x3=true async-copies=false", 1e-4),
    ("linattn chunked tf32, 2 warps a row tile", "f32",
     "tf32=true row-tile-warps=2", 4e-3),
    ("linattn chunked tf32x3, 2 warps a row tile", "f32",
     "tf32x3=true row-tile-warps=2", 1e-4),
    ("linattn chunked bf16, 2 warps a row tile", "bf16", "row-tile-warps=2",
     2.5e-2),
    ("linattn chunked bf16, 3 copy stages", "bf16", "copy-stages=3", 2.5e-2),
    ("linattn chunked bf16, 4 states copy stages", "bf16",
     "states-copy-stages=4", 2.5e-2),
    ("linattn chunked bf16, states unsplit", "bf16",
     "states-feature-split=false", 2.5e-2),
    ("linattn chunked bf16, small grids unnarrowed", "bf16",
     "small-grid-value-tile=0", 2.5e-2),
    ("linattn chunked bf16, bulk copies", "bf16", "bulk-copies=true", 2.5e-2),
    ("linattn chunked bf16, states unbounded", "bf16",
     "states-min-blocks-per-sm=0", 2.5e-2),
    ("linattn chunked bf16, sequence-parallel-blocks=384", "bf16",
     "sequence-parallel-blocks=384", 2.5e-2),
    ("linattn chunked bf16, chunks of 32", "bf16", "wgmma-chunks=false",
     2.5e-2),
    ("linattn chunked bf16, wgmma chunks, 1 warpgroup", "bf16",
     "wgmma-chunks=true row-tile-warps=1", 2.5e-2),
    ("linattn chunked bf16, wgmma outputs", "bf16", "wgmma-outputs=true",
     2.5e-2),
    ("linattn chunked bf16, wgmma outputs, scores in registers", "bf16",
     "wgmma-outputs=true scores-in-registers=true", 2.5e-2),
    ("linattn chunked bf16, wgmma outputs, scores in registers, "
     "sequence-parallel-blocks=512", "bf16",
     "wgmma-outputs=true scores-in-registers=true "
     "sequence-parallel-blocks=512", 2.5e-2),
    ("linattn chunked bf16, unrolled staging", "bf16", "unroll-staging=true",
     2.5e-2),
    ("linattn recurrent f32", "f32", "scan-kernel=recurrent", 1e-4),
    ("linattn simt chunks f32", "f32", "scan-kernel=recurrent simt-chunks=true",
     1e-4),
    ("linattn simt chunks f32, batch-parallel", "f32",
     "scan-kernel=recurrent simt-chunks=true sequence-parallel-blocks=0", 1e-4),
    ("linattn recurrent f32, batch-parallel", "f32",
     "scan-kernel=recurrent sequence-parallel-blocks=0", 1e-4),
    ("linattn recurrent f32, fitted registers", "f32",
     "scan-kernel=recurrent fit-registers=true", 1e-4),
    ("linattn recurrent f32, sequence-parallel-blocks=528", "f32",
     "scan-kernel=recurrent sequence-parallel-blocks=528", 1e-4),
    ("linattn recurrent f32, min-segment-tokens=256", "f32",
     "scan-kernel=recurrent min-segment-tokens=256", 1e-4),
    ("linattn recurrent f32, 1 column/thread", "f32",
     "scan-kernel=recurrent scan-thread-columns=1", 1e-4),
    ("linattn recurrent f32, 2 columns/thread", "f32",
     "scan-kernel=recurrent scan-thread-columns=2", 1e-4),
    ("linattn recurrent f32, synchronous staging", "f32",
     "scan-kernel=recurrent async-copies=false scan-thread-columns=1", 1e-4),
    ("linattn recurrent f32, 1 lane/column", "f32",
     "scan-kernel=recurrent scan-feature-lanes=1 scan-thread-columns=1", 1e-4),
    ("linattn recurrent f32, 32 columns/warp", "f32",
     "scan-kernel=recurrent scan-feature-lanes=1", 1e-4),
    ("linattn recurrent f32, scan-tile=32", "f32",
     "scan-kernel=recurrent scan-tile=32", 1e-4),
    ("linattn recurrent f32, scan-tile=256", "f32",
     "scan-kernel=recurrent scan-tile=256", 1e-4),
    ("linattn recurrent f32, scan-tile=512", "f32",
     "scan-kernel=recurrent scan-tile=512", 1e-4),
    ("linattn recurrent f32, 4 columns/warp", "f32",
     "scan-kernel=recurrent scan-feature-lanes=8", 1e-4),
]
LINATTN_NOTES = {
    "linattn chunked bf16":
        "the defaults: the next chunk copied by cp.async during the current "
        "one; scores and state update by wgmma (at F = 128 chunks of 64 on "
        "two warpgroups, 109568 B of shared memory, 119 registers: two "
        "blocks of eight warps per SM); 64-bit offsets",
    "linattn chunked bf16, synchronous staging":
        "async-copies=false: each chunk loaded and stored to shared memory "
        "before its products",
    "linattn chunked bf16, 32-bit offsets":
        "narrow-offset-limit=2147483648: the chunk loops' offsets from their "
        "block's first row in 32 bits (the default before an H100 ran 64-bit "
        "ones 1.17 times faster at F = 128)",
    "linattn chunked bf16, value-tile=32":
        "value-tile=32: blocks of 32 value columns, twice as many, each computing "
        "its chunks' scores",
    "linattn chunked bf16, value-tile=128":
        "value-tile=128: at D = 128 blocks of 128 value columns (eight warps, "
        "dynamic shared memory), each computing its chunks' scores once; "
        "the same kernel as the default at D = 64",
    "linattn chunked bf16, mma.sync":
        "wgmma=false: the chunk loops' scores and state update by mma.sync "
        "instead of sm_90a's wgmma from 128-byte swizzled tiles (the default; "
        "P·V and φ(Q)S stay on mma.sync either way)",
    "linattn chunked bf16, scores in registers":
        "scores-in-registers=true: at F = 64 (one warp per row tile) the "
        "masked scores stay in registers as P·V's A fragments: 9 KiB less "
        "shared memory per block and no stores or ldmatrix of them, for about "
        "15 more registers; at F = 128 (two warps a row tile) the default's "
        "kernels",
    "linattn chunked bf16, scores in registers, 4 blocks/SM":
        "scores-in-registers=true min-blocks-per-sm=4 "
        "sequence-parallel-blocks=512: at F = 64 the chunk loops' S tile "
        "unpadded in the 128-byte swizzle (57344 bytes of shared memory "
        "instead of 58368) and their registers bounded to 128 make four "
        "blocks per H100 SM instead of three; segments for 512 blocks "
        "(B8·H16·D64: 4 instead of 3), one wave of four a SM",
    "linattn chunked bf16, synchronous + L2 prefetch":
        "async-copies=false prefetch-chunks=1: staging a chunk prefetches the "
        "next chunk's rows "
        "into L2 (prefetch.L2 per 128-byte line), so that its synchronous "
        "loads wait on L2 rather than HBM",
    "linattn chunked tf32":
        "f32 inputs, tf32 tensor cores (option tf32=true); at D = 64 the "
        "next chunk copied by cp.async during the current one and rounded "
        "in place, at D = 128 (where two slots would shrink the chunks) "
        "copied a chunk at a time into one slot, the next chunk prefetched "
        "into L2, V_c and S in unpadded rows with their 16-byte units "
        "XOR-swizzled",
    "linattn chunked tf32x3":
        "f32 inputs at about f32's accuracy on tf32 tensor cores (option "
        "tf32x3=true): each product three, of the operands' high and low "
        "tf32 parts; staged as tf32; each chunk's state update summed from "
        "zero and added to the state in f32 (the tensor cores round toward "
        "zero: carried as their accumulator the state drifted, 3.9e-5 of "
        "max|O| at B2·H16·T16K·D128 on an H200)",
    "linattn chunked tf32, synchronous staging":
        "tf32=true async-copies=false: each chunk loaded, rounded and stored "
        "to shared memory before its products, no L2 prefetch (S "
        "unit-swizzled at D = 64, where one slot leaves no room for its "
        "wider padding)",
    "linattn chunked tf32x3, synchronous staging":
        "tf32x3=true async-copies=false: staged the same way",
    "linattn chunked tf32, 2 warps a row tile":
        "tf32=true row-tile-warps=2: at D = 64 four warps a block instead "
        "of two (each half the keys and half the value columns of its rows; "
        "120 registers instead of 186, 12 warps per H100 SM instead of 6); "
        "at D = 128 the default's kernel",
    "linattn chunked tf32x3, 2 warps a row tile":
        "tf32x3=true row-tile-warps=2: the same at D = 64 (128 registers "
        "instead of 252)",
    "linattn chunked bf16, 2 warps a row tile":
        "row-tile-warps=2: at D = 64 eight warps a block instead of four "
        "(127 registers, 2 blocks per H100 SM instead of 3: 16 warps "
        "instead of 12); at D = 128 the default's kernel",
    "linattn chunked bf16, 3 copy stages":
        "copy-stages=3: three slots per staged tile, the copies of the next "
        "two chunks in flight instead of one (87040 B at D = 128: two "
        "blocks per H100 SM instead of three, as many as B8·H16's 256 "
        "blocks fill; 92160 B at D = 64: two instead of three); the segment "
        "states as the default's",
    "linattn chunked bf16, bulk copies":
        "bulk-copies=true: whole chunks staged by sm_90 bulk copies (the "
        "TMA unit), one per row of the tiles with padded rows, completing "
        "on an mbarrier per slot, instead of 16-byte cp.async (at D = 128 "
        "every tile: 96 copies a chunk instead of 1280; at D = 64 in bf16 "
        "wgmma's swizzle takes every tile, so the default's kernels)",
    "linattn chunked bf16, states unbounded":
        "states-min-blocks-per-sm=0: the segment states' registers left to "
        "ptxas, as before the default bound (D = 64 on wgmma: 158 registers, "
        "3 blocks per SM instead of 123 and 4; D = 128 unnormalized: 159 "
        "instead of 168, 3 either way). Batch-parallel shapes run the "
        "default's kernels",
    "linattn chunked bf16, wgmma outputs":
        "wgmma-outputs=true: the chunk loops' outputs P·V + φ(Q)S by wgmma "
        "too, from the scores and the state in swizzled shared tiles: at "
        "D = 64 eight m64n64k16 a chunk where each warp issued 64 mma.sync "
        "and 64 ldmatrix, the scores in one block of 64 keys (120 registers "
        "instead of 112, three blocks per SM either way); at D = 128 (chunks "
        "of 64, two warpgroups) twelve m64n32k16 a warpgroup, bounded to two "
        "blocks per SM; the state update overlapping O's stores",
    "linattn chunked bf16, wgmma outputs, scores in registers":
        "wgmma-outputs=true scores-in-registers=true: at D = 64 all four "
        "products on wgmma, as FLA's fused chunk loop has them: P·V takes "
        "the masked scores as wgmma's A in registers (inline PTX), rounded "
        "from the scores' accumulators, with no scores tile and no stores "
        "of them; 57344 bytes of shared memory and 124 registers (the "
        "batch-parallel loop and the segments' outputs): four blocks per "
        "H100 SM (the wgmma outputs row: three)",
    "linattn chunked bf16, wgmma outputs, scores in registers, "
    "sequence-parallel-blocks=512":
        "the same with sequence-parallel-blocks=512: segments for one wave "
        "of four blocks per SM (B8·H16·D64: 4 instead of 3)",
    "linattn chunked bf16, unrolled staging":
        "unroll-staging=true: each thread's 16-byte groups of a chunk (the "
        "next chunk's copies issued, elu + 1 in place) one after the other "
        "instead of a loop over them: no counter, compare and branch per "
        "group, the groups' shared loads free to overlap; more registers "
        "(D = 64 chunk loop 127 instead of 112, D = 128 124 instead of 119; "
        "no spills, the same blocks per SM)",
    "linattn chunked bf16, sequence-parallel-blocks=384":
        "sequence-parallel-blocks=384: at B2·H16·D128 6 segments instead of "
        "5, the segments' outputs 384 blocks, 3 per SM on 120 of 132 SMs "
        "(5: 320 blocks, 3 on 56 SMs and 2 on 76), the segment states 320 "
        "instead of 256; at the other shapes of D = 128 the default's kernels",
    "linattn recurrent f32, fitted registers":
        "fit-registers=true: ptxas asked, kernel by kernel, for the most "
        "blocks per SM it fits without spilling where registers hold a kernel "
        "below its shared memory and threads (linattn-gpu-fit-registers): at "
        "D = 128 92 registers, 5 blocks per SM -> 80 and 6 (timed at D = 128 "
        "only: at D = 64 the default's code)",
    "linattn chunked bf16, 4 states copy stages":
        "states-copy-stages=4: the sequence-parallel scan's segment states "
        "(φ(K_c) and V_c only) in four slots, the next three chunks in "
        "flight instead of one (64 KiB at D = 64, 52 KiB at D = 128; three "
        "blocks per H100 SM either way, as the registers allow); the chunk "
        "loops as the default's. Batch-parallel shapes run the default's "
        "kernels",
    "linattn chunked bf16, states unsplit":
        "states-feature-split=false: at D = 128 the segment states' two "
        "blocks of a head and segment each of all 128 features and 64 "
        "value columns, both mapping and reading all of φ(K_c), as before "
        "the default shared the features out (64 each, all 128 columns); "
        "D = 64 and batch-parallel shapes run the default's kernels",
    "linattn chunked bf16, small grids unnarrowed":
        "small-grid-value-tile=0: the chunk loop keeps value tiles of 64 "
        "columns however few blocks that makes (B8·H8·T1K·D64, too short "
        "for segments: 64 blocks on 132 SMs), where the default takes tiles "
        "of 32 while their grid stays within one block per SM (128 blocks "
        "there); the other shapes run the default's kernels",
    "linattn chunked bf16, chunks of 32":
        "wgmma-chunks=false: at D = 128 the portable chunk loops, chunks of "
        "32 by mma.sync on four warps, 65 KiB: three blocks per SM (the "
        "default before an H200 ran the chunks of 64 1.14 times faster at "
        "B2·H16·T16K·D128)",
    "linattn chunked bf16, wgmma chunks, 1 warpgroup":
        "wgmma-chunks=true row-tile-warps=1: the same chunks on four warps, "
        "the scores by wgmma, the state update by mma.sync (111616 B, 223 "
        "registers, two blocks per SM)",
    "linattn recurrent f32":
        "strict fp32 (scan-kernel=recurrent): 4 value columns per thread, 16 "
        "lanes sharing their features (8 columns a warp), blocks of 128 "
        "threads (32 value columns), the next block of tokens copied by "
        "cp.async during the current one; sequence-parallel where batch × "
        "value tiles stay below 132 blocks (segments' states, a scan over "
        "them, the segments' outputs)",
    "linattn simt chunks f32":
        "strict fp32 chunk by chunk on CUDA cores (simt-chunks=true): chunks "
        "of 32 tokens, blocks of 256 threads per batch element and tile of "
        "64 value columns (D = 64: 72.9 KiB, the next chunks copied by "
        "cp.async; D = 128: 80.6 KiB, a chunk's copies at a time with the "
        "next chunk prefetched into L2), the scores, φ(Q_c) S + P V_c and "
        "S += φ(K_c)ᵀ V_c as register-blocked products (the scores' and "
        "the outputs' sums over k split between four groups of a warp's "
        "lanes), every shared-memory load of them paired (lanes n, n ^ 1 "
        "or n, n ^ 2 on one address); sequence-parallel "
        "with the recurrent kernel's segment states where batch × value "
        "tiles stay below 132 blocks (two per H100 SM: 264)",
    "linattn simt chunks f32, batch-parallel":
        "the same with sequence-parallel-blocks=0",
    "linattn recurrent f32, batch-parallel":
        "the same with sequence-parallel-blocks=0: one block per batch "
        "element and value tile walks the whole sequence (the default "
        "before the segments; the same kernel where the batch fills the GPU)",
    "linattn recurrent f32, sequence-parallel-blocks=528":
        "the same aiming at 528 blocks (4 per SM): batches below 264 blocks "
        "split too (B8·H16·D64: 256 blocks, 3 segments), trading 1.33 times "
        "the multiply-adds (the states of all segments but the last) for "
        "twice the warps per scheduler",
    "linattn recurrent f32, min-segment-tokens=256":
        "the same with segments down to 256 tokens (the floor of 1024 was "
        "measured for the chunked scan, whose tokens cost far less): "
        "B8·H8·T1K·D64 (128 blocks) splits in 3",
    "linattn recurrent f32, 1 column/thread":
        "the same with scan-thread-columns=1: 4 lanes per column, each "
        "φ(q), φ(k) element loaded for one column",
    "linattn recurrent f32, 2 columns/thread":
        "the same with scan-thread-columns=2: 8 lanes per pair of columns",
    "linattn recurrent f32, synchronous staging":
        "async-copies=false scan-thread-columns=1: one column per thread, "
        "each block of tokens loaded and stored to shared memory before its "
        "recurrence (the defaults before the copies and the column tiles, "
        "with today's lane order and two tokens an iteration)",
    "linattn recurrent f32, 1 lane/column":
        "scan-feature-lanes=1 scan-thread-columns=1: one thread per column "
        "(32 columns a warp)",
    "linattn recurrent f32, 32 columns/warp":
        "scan-feature-lanes=1: 32 columns a warp as one lane per column has, "
        "4 per thread, 4 lanes sharing their features",
    "linattn recurrent f32, scan-tile=256":
        "the same with blocks of 256 threads (64 value columns): each block "
        "stages and maps φ(Q), φ(K) for twice the columns, half as many "
        "blocks",
    "linattn recurrent f32, scan-tile=512":
        "the same with blocks of 512 threads (128 value columns): one block "
        "a head at D = 128 (each all an SM holds: segments aim at one block "
        "per SM; batch-parallel at B8·H16)",
    "linattn recurrent f32, 4 columns/warp":
        "scan-feature-lanes=8: 32 lanes share a group of 4 columns (4 "
        "features each at F = 128), twice the warps of the default",
    "linattn recurrent f32, scan-tile=32":
        "the same with blocks of 32 threads (8 value columns): φ(Q), φ(K) "
        "read by 8 blocks of a head instead of 2 at D = 64 "
        "(bench/results/gpu-traffic.md)",
}

# The normalized scan (each row divided by φ(q)ᵀz + eps, the paper's form),
# checked against a normalized reference: what normalization costs next to
# the rows above. No peer computes it on the same inputs (FLA and
# fast-transformers run unnormalized here).
NORMALIZED_VARIANTS = [
    ("linattn chunked bf16, normalized", "bf16", "", 2.5e-2),
    ("linattn chunked bf16, mma.sync, normalized", "bf16", "wgmma=false",
     2.5e-2),
    ("linattn chunked bf16, wgmma chunks, normalized", "bf16",
     "wgmma-chunks=true", 2.5e-2),
    ("linattn chunked bf16, wgmma outputs, normalized", "bf16",
     "wgmma-outputs=true", 2.5e-2),
]
# The scan on [B, T, H, D] tensors (FLA's layout; aot.scan_module with
# token_major): the kernels read and write that layout, the transposes
# around the scan are no copies.
TOKEN_MAJOR_VARIANTS = [
    ("linattn chunked bf16, token-major", "bf16", "", 2.5e-2),
]
TOKEN_MAJOR_NOTES = {
    "linattn chunked bf16, token-major":
        "q, k, v and O in [B, T, H, D], as FLA takes them: the chunked "
        "kernels step H·D elements from one token's row to the next instead "
        "of D",
}
NORMALIZED_NOTES = {
    "linattn chunked bf16, normalized":
        "normalize(eps = 1e-6): z, the key sums and the denominators in the "
        "chunk loop",
    "linattn chunked bf16, mma.sync, normalized":
        "the same with wgmma=false",
    "linattn chunked bf16, wgmma chunks, normalized":
        "the same with wgmma-chunks=true: at D = 128 chunks of 64 on two "
        "warpgroups (124 and 126 registers: two blocks of eight warps per "
        "SM, as for the unnormalized scan), which the default leaves the "
        "normalized loops until a GPU times them",
    "linattn chunked bf16, wgmma outputs, normalized":
        "the same with wgmma-outputs=true: at D = 64 the outputs by wgmma, "
        "divided by the denominators as before (at D = 128 the normalized "
        "loops keep chunks of 32 unless wgmma-chunks=true)",
}


# The same for the non-causal function (aot.linear_module).
LINEAR_VARIANTS = [
    ("linattn linear bf16", "bf16", "", 2.5e-2),
    ("linattn linear bf16, scalar kernels", "bf16", "linear-kernel=scalar", 2.5e-2),
    ("linattn linear tf32", "f32", "tf32=true", 4e-3),
    ("linattn linear tf32x3", "f32", "tf32x3=true", 1e-4),
]
LINEAR_NOTES = {
    "linattn linear bf16": "tensor cores: segment sums of φ(K)ᵀV, then φ(Q)S per chunk",
    "linattn linear bf16, scalar kernels":
        "linear-kernel=scalar: one thread per state element, one block per token",
    "linattn linear tf32": "f32 inputs, tf32 tensor cores (option tf32=true)",
    "linattn linear tf32x3":
        "f32 inputs, each tf32 product three (option tf32x3=true)",
}


def wants(args, impl):
    """Whether --impls selects the row `impl` (every row without it)."""
    return not args.impls or re.search(args.impls, impl) is not None


def torch_buffer(tensor):
    """aot.Buffer of a contiguous tensor on the GPU."""
    return aot.Buffer(tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()))


def linattn_commands(args, shape):
    """The linattn-compile commands of one prefill shape (for --dry-run)."""
    return [aot.compile_command(args.tools, f"<{module}_{element}.mlir>",
                                f"<lib{module}_{re.sub(r'[^A-Za-z0-9]+', '_', impl)}.so>", options)
            for module, variants, _ in prefill_modules(shape)
            for impl, element, options, _ in variants
            if wants(args, impl)]


# The backward pass (aot.grad_module: dQ, dK, dV of the causal function for
# a loss gradient dO, nothing kept from a forward pass): three scans with
# the operands' roles exchanged and the chain rule through elu + 1, on the
# chunked bf16 kernels, on tf32 and strict fp32; normalized, a fourth scan
# and the glue kernels between them. The peers' backward passes run through
# torch autograd from a forward kept with retain_graph, through elu + 1 and
# (PRECOMPUTED) from the features (`backward_calls`).
BACKWARD_VARIANTS = [
    ("linattn grad bf16", "bf16", "", 5e-2),
    ("linattn grad bf16, normalized", "bf16", "", 5e-2),
    ("linattn grad tf32", "f32", "tf32=true", 1e-2),
    ("linattn grad tf32x3", "f32", "tf32x3=true", 1e-4),
    ("linattn grad f32", "f32", "scan-kernel=recurrent", 1e-4),
]
BACKWARD_NOTES = {
    "linattn grad bf16":
        "linattn.attention_grad: the features, three chunked scans (dQ "
        "forward, dK and dV reversed), the chain rule; recomputes from q, k, "
        "v, dO",
    "linattn grad bf16, normalized":
        "normalize(eps = 1e-6): a fourth scan (N, D), g and h, [V, 1] and "
        "[g, h] by linattn-gpu-linalg-kernels; no peer computes it",
    "linattn grad tf32": "f32 inputs, tf32 tensor cores (option tf32=true)",
    "linattn grad tf32x3":
        "f32 inputs, each tf32 product three (option tf32x3=true)",
    "linattn grad f32": "strict fp32: the recurrent scans",
}


#===------------------------------------------------------------------------===#
# The decode latency program (decode_graph.cpp)
#===------------------------------------------------------------------------===#


def cxx_compiler():
    for c in (os.environ.get("CXX"), "/usr/lib/llvm-22/bin/clang++", "clang++", "c++"):
        if c and shutil.which(c):
            return c
    return "c++"


def cuda_include():
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "include", "cuda.h")):
            return os.path.join(root, "include")
    return "/usr/local/cuda/include"


def decode_bench_commands(tools, workdir):
    """linattn-compile the step for the GPU, then the C++ program."""
    obj = os.path.join(workdir, "decode_step.o")
    flags = os.path.join(workdir, "decode_step.flags")
    exe = os.path.join(workdir, "decode-bench")
    compile_step = [os.path.join(tools, "linattn-compile"),
                    os.path.join(HERE, "decode_step.mlir"), "--target=cuda",
                    "-o", obj, "--header=" + os.path.join(workdir, "decode_step.h"),
                    "--link-flags=" + flags]
    build = [cxx_compiler(), "-O2", "-std=c++17", "-I" + workdir, "-I" + cuda_include(),
             os.path.join(HERE, "decode_graph.cpp"), obj, "@" + flags, "-ldl", "-o", exe]
    return [compile_step, build], exe


def run_decode_bench(tools, workdir, batches, tokens):
    """{batch: RESULT dict} from decode_graph.cpp, or raises."""
    commands, exe = decode_bench_commands(tools, workdir)
    for cmd in commands:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-2000:]}")
    cmd = [exe, "--batch=" + ",".join(str(b) for b in batches), f"--tokens={tokens}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(proc.stdout, end="", flush=True)
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[len("RESULT "):])
            results[r["batch"]] = r
    if proc.returncode != 0 and not results:
        raise RuntimeError(f"decode-bench failed: {proc.stderr.strip()[-2000:]}")
    return results


#===------------------------------------------------------------------------===#
# Measurement (GPU)
#===------------------------------------------------------------------------===#

class Bench:
    def __init__(self, args):
        import torch
        self.torch = torch
        self.args = args
        self.dev = torch.device("cuda")
        self.results = []
        self.cuda_runtime = None
        self.linattn_stream = torch.cuda.Stream()
        self.causal_dot_product = None  # fast-transformers', once found or built
        self.device_name = torch.cuda.get_device_name(0)
        self.copy_bw = self.copy_bandwidth()
        self.launch_floor = self.launch_floor_ms()

    def time(self, fn, repeat=None):
        torch = self.torch
        repeat = repeat or self.args.repeat
        fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeat):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        times.sort()
        return times[len(times) // 2]

    def copy_bandwidth(self):
        """Bytes per ms of a large device-to-device copy (read + write)."""
        n = 1 << 30  # 1 GiB each way
        src = self.torch.empty(n, dtype=self.torch.uint8, device=self.dev)
        dst = self.torch.empty_like(src)
        ms = self.time(lambda: dst.copy_(src), 20)
        return 2 * n / ms

    def launch_floor_ms(self):
        """One tiny kernel, launched back to back."""
        x = self.torch.zeros(1, device=self.dev)
        return self.time(lambda: x.add_(1.0), 200)

    def check_linattn(self, call):
        """Runs `call` (if any), synchronizes, and raises the error the
        linattn CUDA runtime recorded, if one was."""
        if call:
            call()
        self.torch.cuda.synchronize()
        if self.cuda_runtime is None:
            self.cuda_runtime = ctypes.CDLL(os.path.join(
                self.args.tools, "..", "lib", "liblinattn_cuda_runtime.so"))
            self.cuda_runtime.linattnCudaGetLastError.restype = ctypes.c_char_p
        error = self.cuda_runtime.linattnCudaGetLastError()
        if error:
            self.cuda_runtime.linattnCudaClearLastError()
            raise RuntimeError(error.decode())

    def record(self, **kw):
        self.results.append(kw)
        print(json.dumps(kw), flush=True)

    def prefill_inputs(self, shape):
        """q, k, v of a prefill shape (B, H, T, D) or (B, H, T, F, Dv): bf16,
        uniform in [-1, 1), the same for every run."""
        torch = self.torch
        b, h, t, d, dv = dims(shape)
        gen = torch.Generator(device=self.dev).manual_seed(0)
        return tuple(torch.rand(size, generator=gen, device=self.dev,
                                dtype=torch.float32).mul_(2).sub_(1).to(torch.bfloat16)
                     for size in ((b, h, t, d), (b, h, t, d), (b, h, t, dv)))

    def time_linattn(self, library, inputs, refs):
        """(max rel. error, median ms) of the function `main` of a library
        aot.py compiled, called on `inputs` (tensors of its element type) on
        linattn's torch stream: the linattn CUDA runtime's errors raise.
        `refs`: a reference per result, each result shaped like the input
        at its position (O like q; dq, dk, dv like q, k, v)."""
        torch = self.torch
        stream = self.linattn_stream
        torch.cuda.synchronize()
        with torch.cuda.stream(stream):
            outs = [torch.empty_like(x) for x in inputs[:len(refs)]]
            call = aot.Function(library).bind(
                [torch_buffer(x) for x in inputs], [torch_buffer(o) for o in outs],
                stream.cuda_stream)
            self.check_linattn(call)
            err = max(self.error(o, r) for o, r in zip(outs, refs))
            ms = self.time(call)  # events on `stream`
            self.check_linattn(None)
        return err, ms

    # The reference: O = tril(φ(Q)φ(K)ᵀ)V in float64, chunks of 64 on the
    # GPU; or non-causal, φ(Q)(φ(K)ᵀV). float64, so that the error of the
    # strict-fp32 rows (about 1e-6) is theirs and not the reference's.
    def reference(self, q, k, v, normalized=False, causal=True):
        torch = self.torch
        fq = torch.nn.functional.elu(q.double()) + 1
        fk = torch.nn.functional.elu(k.double()) + 1
        v = v.double()
        if not causal:
            assert not normalized
            return fq @ (fk.transpose(-1, -2) @ v)
        b, h, t, d = fq.shape
        c = 64
        f64 = dict(device=self.dev, dtype=torch.float64)
        out = torch.empty(b, h, t, v.shape[-1], **f64)
        s = torch.zeros(b, h, d, v.shape[-1], **f64)
        z = torch.zeros(b, h, d, **f64)
        mask = torch.tril(torch.ones(c, c, **f64))
        for i in range(0, t, c):
            qc, kc, vc = fq[:, :, i:i + c], fk[:, :, i:i + c], v[:, :, i:i + c]
            m = mask[:qc.shape[2], :qc.shape[2]]
            a = (qc @ kc.transpose(-1, -2)) * m
            o = a @ vc + qc @ s
            if normalized:
                den = a.sum(-1) + (qc @ z.unsqueeze(-1))[..., 0] + 1e-6
                o = o / den.unsqueeze(-1)
            out[:, :, i:i + c] = o
            s = s + kc.transpose(-1, -2) @ vc
            z = z + kc.sum(2)
        return out

    def reference_grads(self, q, k, v, do, normalized=False):
        """dq, dk, dv of Σ dO ⊙ O for the reference O, by torch autograd
        through it (float64)."""
        torch = self.torch
        leaves = [x.double().requires_grad_() for x in (q, k, v)]
        out = self.reference(*leaves, normalized=normalized)
        return torch.autograd.grad(out, leaves, do.double())

    def error(self, out, ref):
        out = out.double()
        return float((out - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


def build_fast_transformers(sdist, build_dir):
    """fast-transformers' CUDA causal product built by torch from `sdist`
    into `build_dir` (only causal_product_cuda.cu, unchanged; the package's
    setup.py builds a dozen other extensions): the extension module. Touches
    no GPU, so that a lease builds it while other steps measure; a second
    process that asks for it while the first builds waits for that build
    (torch's lock in the build folder), and one that finds it built loads
    it."""
    import tarfile
    from torch.utils.cpp_extension import load
    src_dir = os.path.join(build_dir, "fast-transformers-src")
    os.makedirs(src_dir, exist_ok=True)
    source = os.path.join(src_dir, "causal_product_cuda.cu")
    with tarfile.open(sdist) as tar:
        member = next(m for m in tar.getmembers()
                      if m.name.endswith("fast_transformers/causal_product/causal_product_cuda.cu"))
        with tar.extractfile(member) as f:
            text = f.read()
    # Rewritten only when it changed: a newer source makes torch's ninja
    # build it again (a minute), once per run and shape list otherwise.
    if not os.path.exists(source) or open(source, "rb").read() != text:
        with open(source, "wb") as out:
            out.write(text)
    start = time.time()
    ext = load(name="causal_product_cuda", sources=[source],
               extra_cuda_cflags=["-O3"],
               build_directory=src_dir, verbose=False)
    print(f"fast-transformers' causal_product_cuda from "
          f"{os.path.basename(sdist)}: built or loaded in "
          f"{time.time() - start:.0f} s", flush=True)
    return ext


def fast_transformers_product(args):
    """fast-transformers' causal product as (function, installed): the
    installed package's causal_dot_product(q, k, v), or else the extension
    built from --fast-transformers-sdist (`build_fast_transformers`), whose
    causal_dot_product(q, k, v, product) fills `product`. ImportError where
    there is neither."""
    try:
        module = importlib.import_module("fast_transformers.causal_product")
        return module.causal_dot_product, True
    except ImportError:
        if not args.fast_transformers_sdist:
            raise
    ext = build_fast_transformers(args.fast_transformers_sdist, args.build_dir)
    return ext.causal_dot_product, False


def fast_transformers_causal_product(bench):
    """fast-transformers' causal_dot_product(q, k, v), from
    `fast_transformers_product`, called as the package's forward does."""
    if bench.causal_dot_product:
        return bench.causal_dot_product
    torch = bench.torch
    product_of, installed = fast_transformers_product(bench.args)
    if installed:
        bench.causal_dot_product = product_of
        return product_of

    def causal_dot_product(q, k, v):
        n, h, length, _ = q.shape
        product = torch.zeros((n, h, length, v.shape[-1]), device=q.device)
        product_of(q, k, v, product)
        return product
    bench.causal_dot_product = causal_dot_product
    return causal_dot_product


def compiled(args, name, impl, element, module_text, options):
    """The library linattn-compile makes of `module_text` (a case's module,
    `name`, in `element`) with `options`, for `impl`: kept in
    --build-dir/linattn-libs under a name that hashes the module, the options
    and the linattn-compile binary, compiled when missing. Written under a
    temporary name and renamed, so that a run and `--build-peers` (which
    compiles a run's libraries ahead) may compile the same one at once."""
    tool = os.path.join(args.tools, "linattn-compile")
    stat = os.stat(tool)
    key = hashlib.sha256("\0".join(
        (module_text, options, os.path.realpath(tool), str(stat.st_size),
         str(stat.st_mtime_ns))).encode()).hexdigest()[:16]
    cache = os.path.join(args.build_dir, "linattn-libs")
    stem = f"lib{name}_{element}_{re.sub(r'[^A-Za-z0-9]+', '_', impl)}"
    library = os.path.join(cache, f"{stem}-{key}.so")
    if os.path.exists(library):
        return library
    os.makedirs(cache, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        module = os.path.join(tmp, f"{name}_{element}.mlir")
        with open(module, "w") as f:
            f.write(module_text)
        built = aot.compile_library(args.tools, module,
                                    os.path.join(tmp, stem + ".so"), options)
        os.replace(built, library)
    return library


def run_linattn_variants(bench, qkv, ref, name, variants, module_text,
                         notes, report, base, floors):
    """Compiles and times each (impl, element type, options, tolerance) of
    `variants` on the module `module_text(element)` returns, on the bf16
    tensors `qkv` (widened for f32 variants), checking its results against
    `ref` (a tensor, or a tuple for several results). The stream is one of torch's
    own, not the legacy default stream: there the runtime would allocate
    workspaces with cuMemAlloc and cuMemFree, which synchronize; on a stream
    they come from the stream-ordered pool. `floors`: the bf16 and f32 HBM
    floors."""
    torch = bench.torch
    inputs = {"bf16": qkv}
    torch.cuda.synchronize()
    for impl, element, options, tol in variants:
        if not wants(bench.args, impl):
            continue
        try:
            library = compiled(bench.args, name, impl, element,
                               module_text(element), options)
            if element not in inputs:
                inputs[element] = tuple(x.float() for x in qkv)
            err, ms = bench.time_linattn(library, inputs[element],
                                         ref if isinstance(ref, tuple) else (ref,))
            report(impl, ms, err, floors[0] if element == "bf16" else floors[1], tol,
                   notes.get(impl, ""))
        except Exception as e:  # noqa: BLE001
            bench.record(**base, impl=impl, skipped=f"{type(e).__name__}: {e}")
    torch.cuda.synchronize()


def reporter(bench, kind, shape):
    """For a (B, H, T, D) case of `kind`: its record's base fields, the bf16
    and f32 HBM floors (q, k, v read, o written; backward: q, k, v, dO read,
    dq, dk, dv written), and
    report(impl, ms, err, floor, tol, note) recording one row (correct when
    err is within tol)."""
    b, h, t, d, dv = dims(shape)
    base = dict(kind=kind, shape=case_name(shape, kind))
    if kind == "backward":
        floor_bf16, floor_f32 = (backward_bytes(b, h, t, d, elem) / bench.copy_bw
                                 for elem in (2, 4))
    else:
        floor_bf16, floor_f32 = (prefill_bytes(b, h, t, d, elem, dv) / bench.copy_bw
                                 for elem in (2, 4))

    def report(impl, ms, err, floor, tol, note=""):
        bench.record(**base, impl=impl, precision="bf16" if floor == floor_bf16 else "f32",
                     ms=ms, floor_ms=floor,
                     floor_fraction=floor / ms if ms else None, error=err,
                     correct=None if err is None else err <= tol, note=note)
    return base, floor_bf16, floor_f32, report


def time_sdpa(bench, base, report, qkv, causal, floor):
    """Softmax attention (FlashAttention through SDPA), causal or not: a
    different function, timed for the crossover and not checked against the
    linear reference."""
    impl = f"torch SDPA{' causal' if causal else ''} (softmax)"
    if not wants(bench.args, impl):
        return
    try:
        sdpa = bench.torch.nn.functional.scaled_dot_product_attention
        ms = bench.time(lambda: sdpa(*qkv, is_causal=causal))
        report(impl, ms, None, floor, 0,
               "softmax attention: not the same function, no error")
    except Exception as e:  # noqa: BLE001
        bench.record(**base, impl="sdpa", skipped=f"{type(e).__name__}: {e}")


def run_noncausal(bench, shape, tmp):
    """Non-causal attention O = φ(Q)(φ(K)ᵀV): linattn's linear form against
    the same products in torch and against non-causal SDPA."""
    torch = bench.torch
    b, h, t, d = shape
    q, k, v = bench.prefill_inputs(shape)
    ref = bench.reference(q, k, v, causal=False)
    name = case_name(shape, "noncausal")
    base, floor_bf16, floor_f32, report = reporter(bench, "noncausal", shape)

    if not bench.args.skip_linattn:
        run_linattn_variants(bench, (q, k, v), ref, name, LINEAR_VARIANTS,
                             lambda element: aot.linear_module(b, h, t, d, element),
                             LINEAR_NOTES, report, base, (floor_bf16, floor_f32))

    fq = lambda x: torch.nn.functional.elu(x) + 1  # noqa: E731
    # What a user writes in torch: the two products, bf16 (cuBLAS).
    if wants(bench.args, "torch matmuls bf16"):
        try:
            def call():
                return fq(q) @ (fq(k).transpose(-1, -2) @ v)
            out = call()
            ms = bench.time(call)
            report("torch matmuls bf16", ms, bench.error(out, ref), floor_bf16, 2.5e-2,
                   "elu + 1, φ(K)ᵀV, φ(Q)S as three torch calls")
        except Exception as e:  # noqa: BLE001
            bench.record(**base, impl="torch matmuls", skipped=f"{type(e).__name__}: {e}")
    time_sdpa(bench, base, report, (q, k, v), False, floor_bf16)


def peer_calls(impl, fq, q, k, run):
    """The two timed calls of a peer `impl` that takes features, `run(φq,
    φk)`: with the feature map `fq` applied in the call, and (impl +
    PRECOMPUTED) on features computed once, here."""
    mapped = (fq(q), fq(k))
    return {impl: lambda: run(fq(q), fq(k)),
            impl + PRECOMPUTED: lambda: run(*mapped)}


def fla_function(name):
    """flash-linear-attention's `name` (fla.ops.linear_attn) and the keywords
    that make it the benchmark's function on [B, H, T, D] inputs where it
    takes them (scale 1, unnormalized, head_first): (function, keywords,
    head_first). Without head_first, recent versions take [B, T, H, D]."""
    fn = getattr(importlib.import_module("fla.ops.linear_attn"), name)
    params = inspect.signature(fn).parameters
    kw = {}
    if "scale" in params:
        kw["scale"] = 1.0
    if "normalize" in params:
        kw["normalize"] = False
    head_first = "head_first" in params
    if head_first:
        kw["head_first"] = True
    return fn, kw, head_first


# FLA's Triton kernels behind each of its functions, whose configurations
# its autotuners pick on the GPU: the rows name them, so that the static
# comparison (peer_sass.py, which lists every configuration) can be read
# at the one that ran.
FLA_KERNELS = {
    "chunk_linear_attn": [("fla.ops.common.chunk_h", "chunk_fwd_kernel_h"),
                          ("fla.ops.common.chunk_o", "chunk_fwd_kernel_o")],
    "fused_chunk_linear_attn": [("fla.ops.common.fused_chunk",
                                 "fused_chunk_fwd_kernel")],
}


def fla_configs(fn_name):
    """What FLA's autotuners picked for `fn_name`'s kernels in the last call
    ("kernel: BV=64, 4 warps, 2 stages; ..."): the `best_config` of the
    autotuner among each kernel's wrappers (heuristics, autotune); "" where
    none is found."""
    parts = []
    for module, name in FLA_KERNELS.get(fn_name, []):
        try:
            kernel = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        while kernel is not None and getattr(kernel, "best_config", None) is None:
            kernel = getattr(kernel, "fn", None)
        config = getattr(kernel, "best_config", None)
        if config is None:
            continue
        tiles = "".join(f"{k}={v}, " for k, v in sorted(config.kwargs.items()))
        parts.append(f"{name}: {tiles}{config.num_warps} warps, "
                     f"{config.num_stages} stages")
    return "; ".join(parts)


def prefill_variants(variants, shape):
    """`variants` for a prefill shape: all of them where F = Dv (those of
    ONLY_FEATURES at their feature sizes), those of WIDE_FEATURE_IMPLS where
    the features are wider; those of ONLY_SHAPES where it accepts the
    shape."""
    b, h, t, d, dv = dims(shape)
    return [x for x in variants
            if ((d == dv and d in ONLY_FEATURES.get(x[0], (d,)))
                or x[0] in WIDE_FEATURE_IMPLS)
            and ONLY_SHAPES.get(x[0], lambda *_: True)(b, h, t, d, dv)]


def prefill_modules(shape):
    """A prefill shape's two modules, plain and normalized: (case name,
    variants, module text of an element type) each."""
    b, h, t, d, dv = dims(shape)
    name = case_name(shape)
    return [(name, prefill_variants(LINATTN_VARIANTS, shape),
             lambda element: aot.scan_module(b, h, t, d, element, dv=dv)),
            (name + "_normalized", prefill_variants(NORMALIZED_VARIANTS, shape),
             lambda element: aot.scan_module(b, h, t, d, element,
                                             normalized=True, dv=dv)),
            (name + "_token_major", prefill_variants(TOKEN_MAJOR_VARIANTS, shape),
             lambda element: aot.scan_module(b, h, t, d, element, dv=dv,
                                             token_major=True))]


def run_prefill(bench, shape, tmp):
    torch = bench.torch
    args = bench.args
    b, h, t, d, dv = dims(shape)
    q, k, v = bench.prefill_inputs(shape)
    ref = bench.reference(q, k, v)
    name = case_name(shape)
    base, floor_bf16, floor_f32, report = reporter(bench, "prefill", shape)

    # linattn: the scan compiled ahead of time (device buffers, the caller's
    # stream), called on the same tensors as the peers.
    if not args.skip_linattn:
        ((plain, variants, module_text),
         (normalized, normalized_variants, normalized_text),
         (token_major, token_major_variants,
          token_major_text)) = prefill_modules(shape)
        run_linattn_variants(bench, (q, k, v), ref, plain, variants,
                             module_text, LINATTN_NOTES, report, base,
                             (floor_bf16, floor_f32))
        run_linattn_variants(
            bench, (q, k, v), bench.reference(q, k, v, normalized=True),
            normalized, normalized_variants, normalized_text,
            NORMALIZED_NOTES, report, base, (floor_bf16, floor_f32))
        if any(wants(args, impl) for impl, *_ in token_major_variants):
            run_linattn_variants(
                bench, tuple(x.transpose(1, 2).contiguous() for x in (q, k, v)),
                ref.transpose(1, 2), token_major, token_major_variants,
                token_major_text, TOKEN_MAJOR_NOTES, report, base,
                (floor_bf16, floor_f32))

    fq = lambda x: torch.nn.functional.elu(x) + 1  # noqa: E731

    # flash-linear-attention: [B, T, H, D] (head_first=False) in recent
    # versions. Each peer twice: with elu + 1 applied by torch inside the
    # timed call (what a user of the peer pays: four elementwise kernels,
    # each reading and writing a whole tensor), and on features computed
    # before it (the peer's own kernels alone), as linattn's kernels apply
    # the feature map while they load.
    fla_names = [n for n in ("chunk_linear_attn", "fused_chunk_linear_attn")
                 if wants(args, f"fla.{n}") or wants(args, f"fla.{n}{PRECOMPUTED}")]
    try:
        for fn_name in fla_names:
            fn, kw, head_first = fla_function(fn_name)
            qq, kk, vv = (x if head_first else x.transpose(1, 2).contiguous()
                          for x in (q, k, v))
            calls = peer_calls(f"fla.{fn_name}", fq, qq, kk,
                               lambda a, b: fn(a, b, vv, **kw))
            for impl, call in calls.items():
                if not wants(args, impl):
                    continue
                out = call()
                out = out[0] if isinstance(out, tuple) else out
                if not head_first:
                    out = out.transpose(1, 2)
                ms = bench.time(call)
                configs = fla_configs(fn_name)
                report(impl, ms, bench.error(out, ref), floor_bf16, 2.5e-2,
                       PEER_NOTES[PRECOMPUTED in impl]
                       + (f"; autotuned {configs}" if configs else ""))
            del calls
    except Exception as e:  # noqa: BLE001
        bench.record(**base, impl="fla", skipped=f"{type(e).__name__}: {e}")

    # fast-transformers, fp32.
    ft_impls = [impl for impl in (FAST_TRANSFORMERS, FAST_TRANSFORMERS + PRECOMPUTED)
                if wants(args, impl)]
    if ft_impls:
        try:
            causal_dot_product = fast_transformers_causal_product(bench)
            qf, kf, vf = (x.float() for x in (q, k, v))
            calls = peer_calls(FAST_TRANSFORMERS, fq, qf, kf,
                               lambda a, b: causal_dot_product(a, b, vf))
            for impl in ft_impls:
                out = calls[impl]()
                ms = bench.time(calls[impl])
                report(impl, ms, bench.error(out, ref), floor_f32, 1e-3,
                       PEER_NOTES[PRECOMPUTED in impl])
            del calls, qf, kf, vf
        except Exception as e:  # noqa: BLE001
            bench.record(**base, impl="fast_transformers",
                         skipped=f"{type(e).__name__}: {e}")

    # Softmax attention's crossover is timed at the shapes (F = Dv).
    if d == dv:
        time_sdpa(bench, base, report, (q, k, v), True, floor_bf16)


def time_autograd(bench, fn, inputs, do):
    """(gradients, median ms) of the backward pass alone of fn(*inputs):
    torch.autograd.grad of a forward kept with retain_graph, for `do`."""
    torch = bench.torch
    leaves = [x.detach().requires_grad_() for x in inputs]
    out = fn(*leaves)
    grads = torch.autograd.grad(out, leaves, do, retain_graph=True)
    ms = bench.time(lambda: torch.autograd.grad(out, leaves, do,
                                                retain_graph=True))
    return grads, ms


def backward_calls(bench, run, inputs, do, fq):
    """The backward passes of a peer that takes features, `run(φq, φk, v)`
    on `inputs` (q, k, v): [(row suffix, gradients of q, k, v, ms)], through
    elu + 1 in the graph (what its user's autograd runs: suffix ""), and
    (PRECOMPUTED) on features as the leaves, its kernels alone, elu + 1's
    chain rule applied to their gradients after the timing."""
    torch = bench.torch
    q, k, v = inputs
    grads, ms = time_autograd(bench, lambda a, b, c: run(fq(a), fq(b), c),
                              inputs, do)
    rows = [("", grads, ms)]
    grads, ms = time_autograd(bench, run, [fq(q), fq(k), v], do)
    # d/dx (elu(x) + 1): 1 for x > 0, exp(x) otherwise.
    slope = lambda x: torch.where(x > 0, torch.ones_like(x), torch.exp(x))  # noqa: E731
    rows.append((PRECOMPUTED, (grads[0] * slope(q), grads[1] * slope(k), grads[2]),
                 ms))
    return rows


def run_backward(bench, shape, tmp):
    """The backward pass of causal attention (elu + 1 features) for a loss
    gradient dO: linattn's attention_grad against the backward passes of
    FLA's chunk kernels, fast-transformers' causal product (f32) and
    softmax attention (SDPA, FlashAttention's backward), each through
    autograd."""
    torch = bench.torch
    args = bench.args
    b, h, t, d = shape
    q, k, v = bench.prefill_inputs(shape)
    gen = torch.Generator(device=bench.dev).manual_seed(1)
    do = torch.rand(shape, generator=gen, device=bench.dev,
                    dtype=torch.float32).mul_(2).sub_(1).to(torch.bfloat16)
    ref = bench.reference_grads(q, k, v, do)
    name = case_name(shape, "backward")
    base, floor_bf16, floor_f32, report = reporter(bench, "backward", shape)

    if not args.skip_linattn:
        plain = [x for x in BACKWARD_VARIANTS if "normalized" not in x[0]]
        normalized = [x for x in BACKWARD_VARIANTS if "normalized" in x[0]]
        run_linattn_variants(bench, (q, k, v, do), ref, name, plain,
                             lambda element: aot.grad_module(b, h, t, d, element),
                             BACKWARD_NOTES, report, base, (floor_bf16, floor_f32))
        if any(wants(args, x[0]) for x in normalized):
            run_linattn_variants(
                bench, (q, k, v, do),
                bench.reference_grads(q, k, v, do, normalized=True),
                name + "_normalized", normalized,
                lambda element: aot.grad_module(b, h, t, d, element, normalized=True),
                BACKWARD_NOTES, report, base, (floor_bf16, floor_f32))

    fq = lambda x: torch.nn.functional.elu(x) + 1  # noqa: E731

    # flash-linear-attention in its own layout ([B, T, H, D] in recent
    # versions): the inputs and dO transposed once, outside the timing.
    def wanted(impl):
        return wants(args, impl) or wants(args, impl + PRECOMPUTED)

    def report_rows(impl, rows, floor, tol, notes):
        for suffix, grads, ms in rows:
            if wants(args, impl + suffix):
                report(impl + suffix, ms,
                       max(bench.error(g, r) for g, r in zip(grads, ref)), floor,
                       tol, notes[bool(suffix)])

    fla_names = [n for n in ("chunk_linear_attn", "fused_chunk_linear_attn")
                 if wanted(f"fla.{n} backward")]
    try:
        for fn_name in fla_names:
            fn, kw, head_first = fla_function(fn_name)

            def layout(x):
                return x if head_first else x.transpose(1, 2).contiguous()

            def call(fqq, fkk, vv):
                out = fn(fqq, fkk, vv, **kw)
                return out[0] if isinstance(out, tuple) else out
            rows = backward_calls(bench, call, [layout(x) for x in (q, k, v)],
                                  layout(do), fq)
            rows = [(suffix, [g if head_first else g.transpose(1, 2) for g in grads],
                     ms) for suffix, grads, ms in rows]
            report_rows(f"fla.{fn_name} backward", rows, floor_bf16, 5e-2,
                        ("torch autograd: elu + 1's backward, then FLA's",
                         "FLA's backward alone (features as the leaves; elu + 1's "
                         "chain rule after the timing)"))
    except Exception as e:  # noqa: BLE001
        bench.record(**base, impl="fla backward", skipped=f"{type(e).__name__}: {e}")

    impl = "fast_transformers.causal_dot_product backward (f32)"
    if wanted(impl):
        try:
            causal_dot_product = fast_transformers_causal_product(bench)
            rows = backward_calls(bench, causal_dot_product,
                                  [x.float() for x in (q, k, v)], do.float(), fq)
            report_rows(impl, rows, floor_f32, 1e-3,
                        ("torch autograd: elu + 1's backward, then the causal "
                         "product's CUDA backward",
                         "the causal product's CUDA backward alone (features as "
                         "the leaves; elu + 1's chain rule after the timing)"))
        except Exception as e:  # noqa: BLE001
            bench.record(**base, impl="fast_transformers backward",
                         skipped=f"{type(e).__name__}: {e}")

    impl = "torch SDPA causal backward (softmax)"
    if wants(args, impl):
        try:
            sdpa = torch.nn.functional.scaled_dot_product_attention
            _, ms = time_autograd(bench, lambda qq, kk, vv: sdpa(qq, kk, vv, is_causal=True),
                                  [q, k, v], do)
            report(impl, ms, None, floor_bf16, 0,
                   "softmax attention: not the same function, no error")
        except Exception as e:  # noqa: BLE001
            bench.record(**base, impl="sdpa backward", skipped=f"{type(e).__name__}: {e}")


def run_decode(bench, shape, tmp):
    torch = bench.torch
    args = bench.args
    b, h, d = shape
    name = case_name(shape)
    base = dict(kind="decode", shape=name)
    floor = decode_bytes(b, h, d) / bench.copy_bw
    gen = torch.Generator(device=bench.dev).manual_seed(1)
    q, k, v = (torch.rand(b, h, d, generator=gen, device=bench.dev).mul_(2).sub_(1)
               .to(torch.bfloat16) for _ in range(3))
    s = torch.rand(b, h, d, d, generator=gen, device=bench.dev)
    fk = torch.nn.functional.elu(k.double()) + 1
    fq = torch.nn.functional.elu(q.double()) + 1
    s_ref = s.double() + fk.unsqueeze(-1) * v.double().unsqueeze(-2)
    o_ref = torch.einsum("bhf,bhfd->bhd", fq, s_ref)  # float64

    def torch_step():
        fk_ = torch.nn.functional.elu(k.float()) + 1
        s1 = s + fk_.unsqueeze(-1) * v.float().unsqueeze(-2)
        fq_ = torch.nn.functional.elu(q.float()) + 1
        return torch.einsum("bhf,bhfd->bhd", fq_, s1), s1
    ms = bench.time(torch_step)
    bench.record(**base, impl="torch eager step", ms=ms, floor_ms=floor,
                 floor_fraction=floor / ms, launch_floor_ms=bench.launch_floor,
                 error=bench.error(torch_step()[0], o_ref))
    if args.skip_linattn:
        return
    # linattn: decode_graph.cpp, run once for every batch size (run_decodes).
    r = bench.decode_results.get(b) if (h, d) == (32, 128) else None
    if r is None:
        bench.record(**base, impl="linattn step",
                     skipped=bench.decode_error or "decode_graph.cpp has H32 D128 only")
        return
    floor_us = r["hbm_floor_us"]
    launch_floor_us = max(r["empty_graph_us"], r["empty_launch_us"])
    rows = [("linattn step (graph replay)", "graph_us", "graph_error",
             f"{r['graph_us'] / launch_floor_us:.2f}x the empty-kernel floor "
             f"({r['empty_graph_us']:.2f} us graph, {r['empty_launch_us']:.2f} us launch)")]
    # decode_graph.cpp before the in-place replays printed no such key.
    if "graph_in_place_us" in r:
        rows.append((IN_PLACE_STEP, "graph_in_place_us", "in_place_error",
                     "the state updated in place (one buffer: half the memory "
                     "and half the L2 footprint of the ping-pong pair), the "
                     f"normalizer ping-ponged; {r['graph_in_place_us'] / launch_floor_us:.2f}x "
                     "the empty-kernel floor"))
    rows.append(("linattn step (plain launches)", "plain_us", "plain_error",
                 "device buffers, one call per token"))
    for impl, key, error, note in rows:
        ms = r[key] * 1e-3
        bench.record(**base, impl=impl, ms=ms, floor_ms=floor_us * 1e-3,
                     floor_fraction=floor_us / r[key],
                     launch_floor_ms=launch_floor_us * 1e-3,
                     error=r[error], correct=r["correct"], note=note)


def run_decodes(bench, shapes, tmp):
    """The decode latency program for every batch size, then each shape."""
    bench.decode_results, bench.decode_error = {}, None
    if not bench.args.skip_linattn:
        batches = sorted({b for b, h, d in shapes if (h, d) == (32, 128)})
        if batches:
            try:
                bench.decode_results = run_decode_bench(
                    bench.args.tools, tmp, batches, bench.args.decode_tokens)
            except Exception as e:  # noqa: BLE001
                bench.decode_error = str(e)
    for shape in shapes:
        run_decode(bench, shape, tmp)


#===------------------------------------------------------------------------===#
# Reports
#===------------------------------------------------------------------------===#

# What each row is compared with ("vs linattn"): prefill rows of bf16
# inputs with the chunked bf16 scan, rows of f32 inputs with the strict-fp32
# recurrent scan; decode rows with the graph-replayed step.
OURS = {("prefill", "bf16"): "linattn chunked bf16",
        ("prefill", "f32"): "linattn recurrent f32",
        ("noncausal", "bf16"): "linattn linear bf16",
        ("noncausal", "f32"): "linattn linear tf32",
        ("backward", "bf16"): "linattn grad bf16",
        ("backward", "f32"): "linattn grad f32",
        ("decode", None): "linattn step (graph replay)"}


def ours_ms(results):
    ours = {}
    for r in results:
        for (kind, precision), impl in OURS.items():
            if r["kind"] == kind and r.get("impl") == impl and "ms" in r:
                ours[(kind, r["shape"], precision)] = r["ms"]
    return ours


def targets(results):
    """The targets of issue 7 (item 5), from the measured rows."""
    rows = {(r["kind"], r["shape"], r.get("impl")): r for r in results if "ms" in r}

    def ms(kind, shape, impl):
        r = rows.get((kind, shape, impl))
        return r["ms"] if r else None

    # A peer's target twice: against the peer with elu + 1 applied by torch
    # in the timed call, and against its kernels alone (PRECOMPUTED).
    lines = ["## Targets", "",
             "Against a peer: its time with elu + 1 applied by torch in the timed "
             "call (what its user pays), and its kernels' alone (features "
             "computed before the call; linattn's kernels apply elu + 1 as they "
             "load).", "",
             "| target | case | measured | met | peer's kernels alone | met |",
             "|---|---|---:|---|---:|---|"]

    def cells(value, ok, unit):
        if value is None:
            return "not measured | "
        return f"{value:.2f}{unit} | {'yes' if ok else 'no'}"

    def line(target, case, value, ok, unit="", alone=()):
        lines.append(f"| {target} | {case} | {cells(value, ok, unit)} | "
                     f"{cells(*alone, unit) if alone else ' | '} |")

    def speedup(target, case, peer, mine, at_least):
        ratios = [p / mine if p and mine else None
                  for p in (ms("prefill", case, peer),
                            ms("prefill", case, peer + PRECOMPUTED))]
        line(target, case, ratios[0], ratios[0] and ratios[0] >= at_least, "x",
             (ratios[1], ratios[1] and ratios[1] >= at_least))

    prefill = [r["shape"] for r in results if r["kind"] == "prefill"
               and re.fullmatch(r"\d+x\d+x\d+x\d+", r["shape"])]
    for shape in dict.fromkeys(prefill):
        t = int(shape.split("x")[2])
        ours = rows.get(("prefill", shape, "linattn chunked bf16"))
        if t >= 16384:
            frac = ours["floor_fraction"] if ours else None
            line(">= 60% of the HBM floor (T >= 16K)", shape,
                 None if frac is None else 100 * frac, frac is not None and frac >= 0.6, "%")
        mine = ours["ms"] if ours else None
        if shape == "2x16x16384x128":
            speedup(">= 1.3x FLA chunk_linear_attn", shape, "fla.chunk_linear_attn",
                    mine, 1.3)
        if t == 16384:
            sdpa = ms("prefill", shape, "torch SDPA causal (softmax)")
            ratio = sdpa / mine if sdpa and mine else None
            line(">= 5x SDPA (T = 16K)", shape, ratio, ratio and ratio >= 5, "x")
        for impl, how in (("linattn recurrent f32", "fp32 (strict)"),
                          ("linattn simt chunks f32",
                           "fp32 (strict) chunk by chunk (option)"),
                          ("linattn chunked tf32", "fp32 inputs via tf32 (option)"),
                          ("linattn chunked tf32x3",
                           "fp32 accuracy via tf32x3 (option)")):
            speedup(f">= 2x fast-transformers, {how}", shape, FAST_TRANSFORMERS,
                    ms("prefill", shape, impl), 2)
    for r in results:
        how = {"linattn step (graph replay)": "",
               IN_PLACE_STEP: ", state in place"}.get(r.get("impl"))
        if r["kind"] == "decode" and how is not None and "ms" in r:
            ratio = r["ms"] / r["launch_floor_ms"] if r.get("launch_floor_ms") else None
            line(f"decode within 2x of the launch floor{how}", r["shape"], ratio,
                 ratio is not None and ratio <= 2, "x")
            # Where the state's bytes take longer than a launch (large
            # batches), the HBM floor is the one a step can approach.
            floor = max(r.get("launch_floor_ms") or 0, r.get("floor_ms") or 0)
            ratio = r["ms"] / floor if floor else None
            line(f"decode within 2x of the larger of the launch and HBM floors{how}",
                 r["shape"], ratio, ratio is not None and ratio <= 2, "x")
    return lines


def markdown(results, device, copy_bw, launch_floor):
    lines = [f"# linattn GPU benchmark on {device}", "",
             f"Copy bandwidth (device-to-device, read + write): "
             f"{copy_bw / 1e6:.1f} GB/s; one torch op from Python between CUDA events: "
             f"{launch_floor * 1e3:.1f} us (the decode rows' launch floor is "
             f"decode_graph.cpp's empty kernel instead).", "",
             "| kind | shape | implementation | ms | HBM floor ms | of floor | "
             "vs linattn | max rel. error | note |",
             "|---|---|---|---:|---:|---:|---:|---:|---|"]
    ours = ours_ms(results)
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['kind']} | {r['shape']} | {r['impl']} | skipped | | | | | "
                         f"{r['skipped'][:80]} |")
            continue
        precision = r.get("precision") if r["kind"] != "decode" else None
        mine = ours.get((r["kind"], r["shape"], precision))
        ratio = f"{r['ms'] / mine:.2f}x" if mine else ""
        frac = r.get("floor_fraction")
        err = r.get("error")
        lines.append(
            f"| {r['kind']} | {r['shape']} | {r['impl']} | {r['ms']:.4f} | "
            f"{r['floor_ms']:.4f} | {'' if frac is None else f'{100 * frac:.0f}%'} | "
            f"{ratio} | {'not checked' if err is None else f'{err:.1e}'}"
            f"{' FAIL' if err is not None and r.get('correct') is False else ''} | "
            f"{r.get('note', '')} |")
    lines += ["", "vs linattn: the row's time over linattn's on the same inputs (> 1: "
              "linattn is faster): the chunked bf16 scan for bf16 inputs, the "
              "strict-fp32 recurrent scan for f32 inputs, the graph-replayed step "
              "for decode; for noncausal rows the linear form's bf16 kernels "
              "(tf32 for f32 inputs); for backward rows linattn's bf16 gradient "
              "(strict fp32 for f32 inputs). Every linattn prefill is a call of the function "
              "compiled ahead of time (device buffers, a torch stream), timed with "
              "CUDA events like the peers.", ""]
    lines += targets(results) + [""]
    return "\n".join(lines)


def build_ahead(args, prefill):
    """--build-peers: what a run of these arguments builds before it times,
    built without touching the GPU (while another step measures): the
    linattn libraries of its prefill shapes (`compiled`, on half the cores)
    and, where it times fast-transformers and the package is not installed,
    its causal product (`build_fast_transformers`). 1 if a build failed."""
    builds = [(name, impl, element, module_text(element), options)
              for shape in ([] if args.skip_linattn else prefill)
              for name, variants, module_text in prefill_modules(shape)
              for impl, element, options, _ in variants
              if wants(args, impl)]
    start = time.time()
    failed = []
    workers = max(1, (os.cpu_count() or 2) // 2)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        libraries = [pool.submit(compiled, args, *build) for build in builds]
        if prefill and any(wants(args, impl) for impl in (
                FAST_TRANSFORMERS, FAST_TRANSFORMERS + PRECOMPUTED)):
            try:
                if fast_transformers_product(args)[1]:
                    print("fast-transformers' causal product: installed",
                          flush=True)
            except Exception as e:  # noqa: BLE001
                if isinstance(e, ImportError) and \
                        not args.fast_transformers_sdist:
                    print("fast-transformers' causal product: not installed "
                          "and no --fast-transformers-sdist (a run skips it)",
                          flush=True)
                else:
                    failed.append(e)
        failed += [e for e in (f.exception() for f in libraries) if e]
    print(f"linattn libraries: {len(builds)} in "
          f"{os.path.join(args.build_dir, 'linattn-libs')} after "
          f"{time.time() - start:.0f} s", flush=True)
    for e in failed:
        print(f"failed: {type(e).__name__}: {e}", flush=True)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan; needs no GPU, no torch")
    parser.add_argument("--quick", action="store_true", help="one small shape each")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--tools", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    parser.add_argument("--skip-linattn", action="store_true")
    parser.add_argument("--impls", default="",
                        help="run only the prefill and non-causal rows whose "
                             "implementation name this regular expression finds "
                             "(re.search), e.g. 'recurrent f32|fast_transformers'; "
                             "decode cases run whole")
    parser.add_argument("--only", choices=("prefill", "noncausal", "backward", "decode"))
    parser.add_argument("--lease", action="store_true",
                        help="a short lease's run: the prefill shapes only, the "
                             "targets' first, the rows of LEASE_IMPLS unless "
                             "--impls names others, --budget-s "
                             f"{LEASE_BUDGET_S} unless given")
    parser.add_argument("--decode-tokens", type=int, default=2000,
                        help="tokens per decode timing (graph replays, calls)")
    parser.add_argument("--shapes", default="",
                        help="comma-separated case names to run (prefill BxHxTxD, "
                             "noncausal full-BxHxTxD, backward grad-BxHxTxD, "
                             "decode BxHxD), e.g. "
                             "8x16x16384x64,full-8x16x16384x64,1x32x128")
    parser.add_argument("--budget-s", type=float, default=0,
                        help="start no case after this many seconds (the rest "
                             "are reported as skipped); 0: no limit")
    parser.add_argument("--name", default="",
                        help="results file name (default: <device>-<date>)")
    parser.add_argument("--build-peers", action="store_true",
                        help="only build, touching no GPU, what a run of the "
                             "same arguments would build into --build-dir "
                             "(the linattn libraries of its prefill shapes; "
                             "fast-transformers' causal product from "
                             "--fast-transformers-sdist), and exit: a lease "
                             "builds them while the phase clocks measure")
    parser.add_argument("--fast-transformers-sdist", default="",
                        help="pytorch-fast-transformers sdist to build the causal "
                             "product from when the package is not installed")
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build", "gpu-bench"),
                        help="where extensions built from peers' sources "
                             "and the linattn libraries (linattn-libs) go")
    parser.add_argument("--merge", nargs="+", metavar="JSON",
                        help="combine the results of earlier runs on one device "
                             "into one report (--name, --out); measures nothing")
    args = parser.parse_args()

    if args.merge:
        return merge(args)
    if args.lease:
        if args.only not in (None, "prefill"):
            parser.error("--lease times prefill shapes only")
        args.only = "prefill"
        args.impls = args.impls or LEASE_IMPLS
        args.budget_s = args.budget_s or LEASE_BUDGET_S
    try:
        re.compile(args.impls)
    except re.error as e:
        parser.error(f"--impls: {e}")

    prefill = QUICK_PREFILL if args.quick else PREFILL
    noncausal = QUICK_NONCAUSAL if args.quick else NONCAUSAL
    backward = QUICK_BACKWARD if args.quick else BACKWARD
    decode = QUICK_DECODE if args.quick else DECODE
    if args.only:
        prefill, noncausal, backward, decode = (
            x if args.only == kind else [] for kind, x in (
                ("prefill", prefill), ("noncausal", noncausal),
                ("backward", backward), ("decode", decode)))
    if args.shapes:
        wanted = set(args.shapes.split(","))
        unknown = wanted - {case_name(x) for x in prefill + decode} - {
            case_name(x, "noncausal") for x in noncausal} - {
            case_name(x, "backward") for x in backward}
        if unknown:
            parser.error(f"--shapes: no such case: {', '.join(sorted(unknown))}")
        prefill = [x for x in prefill if case_name(x) in wanted]
        noncausal = [x for x in noncausal if case_name(x, "noncausal") in wanted]
        backward = [x for x in backward if case_name(x, "backward") in wanted]
        decode = [x for x in decode if case_name(x) in wanted]
    if args.budget_s:
        prefill = budget_order(prefill)
    if args.build_peers:
        return build_ahead(args, prefill)

    if args.dry_run:
        print("plan (dry run: nothing is measured)")
        for i, shape in enumerate(prefill):
            b, h, t, d, dv = dims(shape)
            print(f"prefill B{b} H{h} T{t} D{d}" + (f" Dv{dv}" if dv != d else "") +
                  f": compulsory bytes bf16 "
                  f"{prefill_bytes(b, h, t, d, 2, dv) / 2**20:.0f} MiB, f32 "
                  f"{prefill_bytes(b, h, t, d, 4, dv) / 2**20:.0f} MiB")
            variants = [impl for impl, _, _, _ in prefill_variants(
                LINATTN_VARIANTS + NORMALIZED_VARIANTS + TOKEN_MAJOR_VARIANTS,
                shape) if wants(args, impl)]
            if i == 0:  # the same for the shapes of the same variants
                for cmd in linattn_commands(args, shape):
                    print("  " + " ".join(cmd))
                first = variants
            elif variants != first:
                print("  linattn variants: " + (", ".join(variants) or "none"))
        for shape in noncausal:
            b, h, t, d = shape
            print(f"noncausal B{b} H{h} T{t} D{d}: compulsory bytes bf16 "
                  f"{prefill_bytes(b, h, t, d, 2) / 2**20:.0f} MiB; linattn variants: "
                  + (", ".join(f"{impl} ({options or 'defaults'})"
                               for impl, _, options, _ in LINEAR_VARIANTS
                               if wants(args, impl)) or "none"))
        for shape in backward:
            b, h, t, d = shape
            print(f"backward B{b} H{h} T{t} D{d}: compulsory bytes bf16 "
                  f"{backward_bytes(b, h, t, d, 2) / 2**20:.0f} MiB; linattn variants: "
                  + (", ".join(f"{impl} ({options or 'defaults'})"
                               for impl, _, options, _ in BACKWARD_VARIANTS
                               if wants(args, impl)) or "none"))
        for shape in decode:
            b, h, d = shape
            print(f"decode B{b} H{h} D{d}: compulsory bytes {decode_bytes(b, h, d) / 2**20:.1f} MiB")
        if decode:
            commands, exe = decode_bench_commands(args.tools, "<tmp>")
            for cmd in commands:
                print("  " + " ".join(cmd))
            batches = ",".join(str(b) for b, _, _ in decode)
            print(f"  {exe} --batch={batches} --tokens={args.decode_tokens}")
        fake = [dict(kind="prefill", shape=case_name(prefill[0]) if prefill else "-",
                     impl="linattn chunked bf16", precision="bf16", ms=1.0, floor_ms=0.5,
                     floor_fraction=0.5, error=1e-3, correct=True, note="dry run"),
                dict(kind="prefill", shape=case_name(prefill[0]) if prefill else "-",
                     impl="fla.chunk_linear_attn", precision="bf16", ms=1.5, floor_ms=0.5,
                     floor_fraction=1 / 3, error=2e-3, correct=True),
                dict(kind="prefill", shape="-", impl="fast_transformers",
                     skipped="ModuleNotFoundError: dry run")]
        print(markdown(fake, "dry-run device", 3e9, 0.005))
        for mod in ("torch", "fla", "fast_transformers", "numpy"):
            try:
                found = importlib.util.find_spec(mod) is not None
            except (ImportError, ValueError):
                found = False
            print(f"python module {mod}: {'found' if found else 'missing'}")
        print(f"linattn-compile: {'found' if os.path.exists(os.path.join(args.tools, 'linattn-compile')) else 'missing'}")
        return 0

    bench = Bench(args)
    print(f"device: {bench.device_name}; copy bandwidth {bench.copy_bw / 1e6:.1f} GB/s; "
          f"launch floor {bench.launch_floor * 1e3:.1f} us", flush=True)
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, args.name or results_stem(bench.device_name)
                        + ("-quick" if args.quick else ""))
    meta = dict(device=bench.device_name, copy_bandwidth_bytes_per_ms=bench.copy_bw,
                launch_floor_ms=bench.launch_floor, host=platform.node(),
                torch=bench.torch.__version__, results=bench.results)
    start = time.time()

    def over_budget(kind, shape):
        if args.budget_s and time.time() - start > args.budget_s:
            bench.record(kind=kind, shape=case_name(shape, kind), impl="all",
                         skipped=f"not started: the run's --budget-s={args.budget_s:g} was spent")
            return True
        return False

    tmp = tempfile.mkdtemp(prefix="linattn-bench-")
    try:
        for shape in prefill:
            if not over_budget("prefill", shape):
                run_prefill(bench, shape, tmp)
                bench.torch.cuda.empty_cache()
            write_results(base, meta)
        for shape in noncausal:
            if not over_budget("noncausal", shape):
                run_noncausal(bench, shape, tmp)
                bench.torch.cuda.empty_cache()
            write_results(base, meta)
        for shape in backward:
            if not over_budget("backward", shape):
                run_backward(bench, shape, tmp)
                bench.torch.cuda.empty_cache()
            write_results(base, meta)
        if decode and not over_budget("decode", decode[0]):
            run_decodes(bench, decode, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        write_results(base, meta)
    print(f"wrote {base}.json and {base}.md"
          + (f" and {base}.png" if os.path.exists(base + ".png") else
             " (no figure: matplotlib is missing)"))
    return 0


def write_results(base, meta):
    """The JSON, the Markdown report and, with matplotlib, the figure so far
    (a run cut short keeps them)."""
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(markdown(meta["results"], meta["device"],
                         meta["copy_bandwidth_bytes_per_ms"], meta["launch_floor_ms"]))
    plot.plot(meta, base + ".png")


def merge(args):
    """One report from the JSON files of several runs on one device: each
    row (case and implementation) from the last run that measured it, a
    skipped row only where no run measured that implementation (so a run
    with --skip-linattn adds the peers to an earlier run's linattn rows);
    the copy bandwidth and launch floor of the first run (every run's floors
    use its own)."""
    runs = [json.load(open(p)) for p in args.merge]
    devices = {r["device"] for r in runs}
    if len(devices) != 1:
        sys.exit(f"--merge: runs from different devices: {', '.join(sorted(devices))}")
    cases = {}  # (kind, shape) -> {impl: row}, in the order rows first came
    for run in runs:
        for r in run["results"]:
            rows = cases.setdefault((r["kind"], r["shape"]), {})
            if "skipped" not in r or "skipped" in rows.get(r.get("impl"), r):
                rows[r.get("impl")] = r
    # A skipped row stands for a family of rows ("fla" for fla.chunk_linear_attn,
    # ..., "all" for the case): dropped where a run measured one of them.
    for rows in cases.values():
        measured = [impl.lower() for impl, r in rows.items() if "skipped" not in r]
        for impl in [impl for impl, r in rows.items() if "skipped" in r]:
            if measured and (impl == "all" or any(impl.lower() in m for m in measured)):
                del rows[impl]
    kinds = ("prefill", "noncausal", "backward", "decode")
    order = ([case_name(x) for x in PREFILL + DECODE] +
             [case_name(x, "noncausal") for x in NONCAUSAL] +
             [case_name(x, "backward") for x in BACKWARD])
    results = [r for key in sorted(cases, key=lambda k: (
        kinds.index(k[0]) if k[0] in kinds else len(kinds),
        order.index(k[1]) if k[1] in order else len(order)))
        for r in cases[key].values()]
    first = runs[0]
    meta = dict(first, results=results, merged_from=[os.path.basename(p) for p in args.merge])
    os.makedirs(args.out, exist_ok=True)
    device = re.sub(r"[^A-Za-z0-9]+", "-", first["device"]).strip("-")
    base = os.path.join(args.out, args.name or f"{device}-merged")
    write_results(base, meta)
    print(f"wrote {base}.json and {base}.md"
          + (f" and {base}.png" if os.path.exists(base + ".png") else
             " (no figure: matplotlib is missing)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
