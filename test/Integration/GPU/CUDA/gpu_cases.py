"""Numerical tests of the NVIDIA GPU backend.

The cases are those of the CPU tests (test/Integration/CPU/cpu_cases.py,
whose builders and float64 references this reuses) at the shapes GPU kernels
have to get right: sequence lengths 1, 7, 1000 and 4097, feature sizes 16, 32,
64 and 128, value sizes different from the feature size and not multiples of
a warp, cross-attention (M != N), initial states, every feature map, f64.
Each case is run by `linattn-run --target=cuda` (linattn-lower-to-nvvm and
liblinattn_cuda_runtime.so) and compared with its reference: the error
max|out - ref| / max|ref| must stay within 2e-5 for f32 (1e-4 from 1000
tokens on, where float32 sums of thousands of terms lose more), 1e-11 for
f64.

With --mock the cases run against the mock runtime instead (no GPU: buffers
in host memory, kernels not run): that checks that every case lowers, that
the host code runs, launches kernels and frees every device buffer, and that
the results have the right shapes; not the numbers.

With --fake-driver=DIR the cases run on the real runtime library over the
fake CUDA driver built in DIR (test/FakeCuda: libcuda.so.1, no GPU, kernels
not run): as with --mock, not the numbers, but the runtime's own calls of
the driver: the kernel images load, every kernel is found in them, launches
are valid (block and grid sizes, shared memory beyond 48 KiB opted into),
copies stay inside their buffers and every buffer is freed.

With --emulate the kernels run on the CPU through the GPU emulator
(linattn-run --emulate-gpu: linattn-lower-to-nvvm{emulate=true} and
liblinattn_gpu_emulator.so), against the same references and tolerances as
on a GPU; the emulator aborts the case on out-of-bounds accesses, reads of
unwritten shared memory, shared-memory and global-memory races and
divergent barriers. Every group runs whole: the longest, chunked, takes
about 30 s on two cores.

Usage: gpu_cases.py --group=NAME --tools=DIR --workdir=DIR
                    [--mock | --fake-driver=DIR | --emulate] [--chip=sm_90]
"""

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "CPU"))

import cpu_cases as cc  # noqa: E402
from cpu_cases import EPS  # noqa: E402

np = cc.np

F32_TOL = 2e-5
F32_LONG_TOL = 1e-4
F64_TOL = 1e-11


# The chunked tensor-core kernel rounds the masked intra-chunk scores and the
# state it multiplies by to the 16-bit data type (as flash-linear-attention
# does); the products accumulate in f32.
CHUNKED_TOL = {"bf16": 2.5e-2, "f16": 4e-3}

# f32 data on tf32 tensor cores with each product taken as three of the
# operands' high and low parts (tf32x3=true): about f32's accuracy (the
# emulator, with its model of the tensor cores' rounding, measures 2.6e-7 to
# 2.6e-6 on these cases, up to 16384 tokens; the recurrent kernel 3e-7 to
# 1.1e-6), so f32's tolerance whatever the sequence length.
TF32X3_TOL = F32_TOL


def tolerance(case, long_sequence):
    if case.tol <= cc.F64_TOL:
        return F64_TOL
    if case.tol > cc.F32_TOL:  # 16-bit data, tf32 and tf32x3
        return case.tol
    return F32_LONG_TOL if long_sequence else F32_TOL


def scan_cases():
    cases = []
    for reverse in (False, True):
        for init in (False, True):
            for eps in (None, EPS):
                cases.append((cc.scan_case((2, 3), 7, 16, 8, reverse, init, eps), False))
                cases.append((cc.scan_case((2,), 1000, 64, 48, reverse, init, eps, dyn=(1,)), True))
    cases += [
        (cc.scan_case((2,), 1, 32, 5, False, True, EPS), False),
        (cc.scan_case((1, 2), 7, 128, 100, False, False, EPS, dyn=(0, 1, 2)), False),
        (cc.scan_case((), 7, 32, 64, True, True, None, dyn=(0,)), False),
        (cc.scan_case((3,), 1000, 128, 32, False, True, EPS), True),
        # F = 6 and 7: two lanes and one lane per column (F = 16 and up: four).
        (cc.scan_case((2,), 9, 6, 37, False, True, EPS), False),
        (cc.scan_case((2,), 9, 7, 33, True, False, EPS), False),
        # No features (F = 0): the outputs are zeros, the states empty.
        (cc.scan_case((2,), 7, 0, 5, False, True, EPS), False),
        (cc.scan_case((2,), 7, 0, 5, True, False, None), False),
    ]
    # Sequence-parallel (segment states, a scan over them, the segments'
    # outputs), which the cases above, batch-parallel, are too short for:
    # segments of several staged blocks, the last one shorter; reverse scans,
    # initial states, the final normalizer of an unnormalized scan, dynamic N
    # (the variant decided at run time), Dv beyond a block's columns, f64,
    # fused feature maps, synchronous staging, Dv = 0, odd F, and the
    # default floor (N = 4097 at B2: 3 segments, none below 1024 tokens).
    cases += [
        (few_blocks(cc.scan_case((2,), 1000, 64, 48, False, True, EPS), 16), True),
        (few_blocks(cc.scan_case((2,), 1000, 64, 48, True, False, None, dyn=(1,)),
                    16), True),
        (few_blocks(cc.scan_case((3,), 1000, 128, 32, True, True, EPS), 16), True),
        (few_blocks(cc.scan_case((1, 2), 777, 32, 100, False, False, EPS), 64, 100),
         True),
        (few_blocks(cc.kernel_case("elu", (2,), 500, 64, 40, EPS, init=True,
                                   dtype="f64", state="f64"), 16), True),
        (synchronous(few_blocks(cc.kernel_case("relu", (2,), 700, 16, 8, EPS,
                                               reverse=True), 16)), True),
        # No value columns: z alone through the segments; F = 100, whose
        # lanes keep one feature at a time.
        (few_blocks(cc.scan_case((2,), 1000, 64, 0, False, True, EPS), 16), True),
        (few_blocks(cc.kernel_case("relu", (2,), 1000, 100, 33, EPS, init=True),
                    16), True),
        (few_blocks(cc.scan_case((2,), 4097, 64, 64, False, True, EPS), 264, None),
         True),
    ]
    # The gradients of scans (linattn.scan_grad): three scans each (four
    # normalized), two of them with queries and keys of both signs and F and
    # Dv exchanged; batch- and sequence-parallel, f64, and f32 on the
    # chunked kernels' tf32 tensor cores (operands rounded: f16's tolerance).
    tf32 = with_tf32(cc.scan_grad_case((2,), 129, 64, 64, False, EPS))
    tf32.tol = CHUNKED_TOL["f16"]
    tf32x3 = with_tf32x3(cc.scan_grad_case((2,), 129, 64, 64, False, EPS))
    cases += [
        (cc.shared_buffer_case(), False),
        (cc.scan_grad_case((2, 3), 7, 16, 8, False), False),
        (cc.scan_grad_case((2, 3), 7, 16, 8, True, EPS), False),
        (cc.scan_grad_case((2,), 1000, 64, 48, True, dyn=(1,)), True),
        (few_blocks(cc.scan_grad_case((2,), 1000, 64, 48, False, EPS), 16), True),
        (cc.scan_grad_case((3,), 33, 6, 4, False, EPS, dyn=(0, 1, 2),
                           dtype="f64"), False),
        (tf32, True),
        (tf32x3, True),
        # From an initial state, with the final state's gradients: the scans
        # start from [S₀, z₀]ᵀ, [dS, dz]ᵀ and dS.
        (cc.scan_grad_states_case((2, 3), 7, 16, 8, False, EPS), False),
        (cc.scan_grad_states_case((2,), 1000, 64, 48, True, dyn=(0, 1)), True),
        (few_blocks(cc.scan_grad_states_case((2,), 1000, 64, 48, False, EPS,
                                             final=False), 16), True),
    ]
    return cases


def linear_cases():
    return [
        (cc.sliced_state_case(), False),
        (cc.linear_case((2, 3), 7, 11, 16, 8, eps=EPS), False),
        (cc.linear_case((2,), 7, 1, 32, 5, eps=None), False),
        (cc.linear_case((2,), 1000, 4097, 64, 48, eps=EPS, dyn=(1,)), True),
        (cc.linear_case((1,), 1, 7, 128, 100, eps=EPS), False),
        (cc.linear_case((2,), 7, 11, 16, 8, eps=EPS, state="f64"), False),
        # Sizes of 0 (no values, no features, no batch) beside dynamic ones,
        # static in some operands only: the kernels get empty buffers of
        # their own (collapsing the buffers failed once the canonicalizer
        # made a 0 static beside a dynamic size).
        (cc.linear_case((2,), 7, 11, 16, 0, eps=EPS, dyn=(0, 1, 2)), False),
        (cc.linear_case((2,), 7, 11, 0, 8, eps=EPS,
                        dyns=dict(q=(0, 1), k=(1, 2), v=(0, 1, 2), o=(0, 1, 2),
                                  s=(0, 1, 2), z=(0, 1))), False),
        (cc.linear_case((2,), 7, 11, 5, 0, eps=None,
                        dyns=dict(q=(0, 1, 2), k=(0, 1, 2), v=(1,), o=(0, 1),
                                  s=(0, 1, 2), z=(0,))), False),
        (cc.linear_case((0,), 7, 11, 16, 8, eps=EPS,
                        dyns=dict(q=(1, 2), k=(0, 1), v=(2,), o=(0, 1, 2),
                                  s=(1, 2), z=(1,))), False),
        # Blocks of fewer threads than the summary's 16 features (each
        # thread sums several of the keys' features) and the readout's 16
        # tokens.
        (block_size(cc.linear_case((2,), 37, 50, 40, 20, eps=EPS), 5), False),
        (block_size(cc.linear_case((2,), 37, 50, 40, 20, eps=EPS), 1), False),
        # More features than one panel of the readout's staged φ(q) (512 in
        # f32, 256 with an f64 state), the last panel partial: poly2 and
        # favor give such counts (1 + D + D² is 4161 at D = 64, which one
        # staged tile of every feature could not fit).
        (cc.linear_case((2,), 37, 50, 1100, 20, eps=EPS), False),
        (cc.linear_case((2,), 20, 9, 1300, 3, eps=None, dyn=(1,)), False),
        (cc.linear_case((2,), 7, 11, 600, 8, eps=EPS, state="f64"), False),
        (block_size(cc.linear_case((1,), 17, 5, 700, 6, eps=EPS), 5), False),
    ]


def block_size(case, threads):
    """`case` with at most `threads` threads per block of the kernels other
    than the scans (block-size)."""
    case.name += f"__block{threads}"
    case.gpu_options = getattr(case, "gpu_options", []) + [f"block-size={threads}"]
    return case


def linear_chunked_cases():
    """The linear form's chunked tensor-core kernels (f16 and bf16 data, an
    f32 state; f32 data with tf32): the key-value summary summed over
    segments of the keys and written directly (one segment), the readout
    over segments of the queries; every chunk shape (F = 16 … 160), value
    sizes that are not multiples of the value tile, sequences of no, one and
    several chunks, and f16 states past f16's range (the readout scales the
    state by a power of two)."""
    cases = []
    for dtype in ("bf16", "f16"):
        cases += [
            cc.linear_kernel_case("elu", (2, 3), 7, 11, 16, 8, EPS, dtype=dtype),
            cc.linear_kernel_case("elu", (2,), 1000, 4097, 64, 48, EPS, dyn=(1,),
                                  dtype=dtype),
            cc.linear_kernel_case("relu", (1,), 65, 63, 128, 100, None, dtype=dtype),
            cc.linear_kernel_case("elu", (2,), 129, 200, 112, 72, EPS, dtype=dtype),
            cc.linear_kernel_case("relu", (2,), 33, 129, 160, 40, EPS, dtype=dtype),
            cc.linear_kernel_case("identity", (2, 3), 64, 64, 32, 64, None,
                                  dtype=dtype),
            batch_parallel(cc.linear_kernel_case("elu", (2,), 300, 1000, 64, 37,
                                                 EPS, dtype=dtype)),
            few_blocks(cc.linear_kernel_case("elu", (1, 2), 1000, 1000, 64, 64,
                                             None, dyn=(2,), dtype=dtype), 1000),
            scalar_loads(cc.linear_kernel_case("relu", (2,), 100, 129, 64, 37, EPS,
                                               dtype=dtype)),
            value_tile(cc.linear_kernel_case("elu", (2,), 100, 129, 64, 100, EPS,
                                             dtype=dtype), 32),
            value_tile(cc.linear_kernel_case("elu", (2,), 100, 129, 128, 128, EPS,
                                             dtype=dtype), 128),
            # Dv dynamic: the value tiles counted at run time.
            cc.linear_kernel_case("elu", (2,), 300, 200, 128, 130, EPS, dyn=(1,),
                                  dtype=dtype, dyn_dv=True),
            # No keys (S and z are zeros), no queries.
            cc.linear_kernel_case("elu", (2,), 7, 0, 64, 8, EPS, dtype=dtype),
            cc.linear_kernel_case("elu", (2,), 0, 7, 64, 8, EPS, dtype=dtype),
        ]
    # States whose elements exceed f16's 65504 (4097 keys, values in [0, 64)
    # and [0, 128): S up to 1.5e5 and 7.2e4), normalized and not (small
    # queries, so that the outputs fit f16).
    cases += [
        cc.linear_kernel_case("elu", (2,), 100, 4097, 64, 64, EPS, dtype="f16",
                              values=-64.0),
        cc.linear_kernel_case("relu", (2,), 100, 4097, 64, 48, None, dtype="f16",
                              values=-128.0, queries=0.01),
    ]
    for case in cases:
        case.tol = CHUNKED_TOL["bf16" if "_bf16_" in case.name else "f16"]
    tf32 = [
        with_tf32(cc.linear_kernel_case("elu", (2, 3), 65, 130, 64, 64, EPS)),
        with_tf32(cc.linear_kernel_case("relu", (2,), 1000, 129, 128, 100, None)),
        few_blocks(with_tf32(cc.linear_kernel_case("elu", (2,), 1000, 1000, 32, 40,
                                                   EPS)), 1000),
    ]
    for case in tf32:
        case.tol = CHUNKED_TOL["f16"]
    tf32 += [
        with_tf32x3(cc.linear_kernel_case("elu", (2, 3), 65, 130, 64, 64, EPS)),
        with_tf32x3(cc.linear_kernel_case("relu", (2,), 1000, 129, 128, 100,
                                          None)),
    ]
    # The scalar kernels on the same data (linear-kernel=scalar).
    scalar = [cc.linear_kernel_case("elu", (2,), 100, 129, 64, 37, EPS, dtype="bf16")]
    for case in scalar:
        case.name += "__scalar"
        case.gpu_options = ["linear-kernel=scalar"]
    # And on chips before sm_80, which have no tensor-core kernels.
    older = [
        older_chip(cc.linear_kernel_case("elu", (2,), 100, 129, 64, 37, EPS,
                                         dtype="bf16")),
        older_chip(with_tf32(cc.linear_kernel_case("relu", (2,), 65, 130, 64, 64,
                                                   None))),
    ]
    for case in older:
        case.tol = CHUNKED_TOL["f16"]
    return [(case, True) for case in cases + tf32 + scalar + older]


def step_cases():
    return [
        (cc.step_case((2, 3), 16, 8, None), False),
        (cc.step_case((2, 3), 32, 5, EPS), False),
        (cc.step_case((2,), 64, 100, EPS, dyn=(0,)), False),
        (cc.step_case((), 128, 64, EPS), False),
        (cc.step_chain_case((2,), 3, 16, 8, EPS), False),
        # Blocks that are not whole warps take one lane per column (no
        # shuffles across missing lanes).
        (block_size(cc.step_case((2,), 64, 100, EPS), 8), False),
        (block_size(cc.step_case((2,), 64, 100, EPS), 40), False),
        # Features whose staged φ(q), φ(k) and z + φ(k) (3·F elements) would
        # not fit 99 KiB of shared memory: read from global memory instead.
        (cc.step_case((2,), 9000, 6, EPS), False),
        (cc.step_case((), 8449, 3, None), False),
    ]


def attention_cases():
    cases = []
    for kind in ("elu", "relu", "identity"):
        for d, dv in ((16, 8), (32, 48), (64, 64), (128, 100)):
            cases.append((cc.attention_case(kind, (2,), 7, 7, d, dv, causal=True, eps=EPS), False))
            # Cross-attention: M != N.
            cases.append((cc.attention_case(kind, (2, 3), 7, 13, d, dv, causal=False,
                                            eps=EPS if kind != "identity" else None), False))
    cases += [
        # poly2 and favor: kernels of their own compute the features, which
        # the scan or the linear form then reads.
        (cc.attention_case("poly2", (2,), 7, 13, 4, 5, causal=False, eps=EPS), False),
        (cc.attention_case("poly2", (1, 2), 7, 7, 3, 6, causal=True, eps=EPS, dyn=(0, 1, 2)), False),
        (cc.attention_case("favor", (2,), 7, 7, 8, 5, causal=True, eps=EPS, fmax=16), False),
        (cc.attention_case("favor", (2, 3), 7, 11, 8, 8, causal=False, eps=EPS, fmax=12), False),
        # Non-causal with more features than the readout stages at once:
        # poly2 at D = 40 (1641 features), favor with 2000.
        (cc.attention_case("poly2", (2,), 7, 13, 40, 5, causal=False, eps=EPS), False),
        (cc.attention_case("favor", (2,), 9, 7, 8, 3, causal=False, eps=EPS, fmax=2000), False),
        (cc.attention_case("elu", (1,), 1, 1, 16, 4, causal=True, eps=EPS), False),
        (cc.attention_case("elu", (), 7, 5, 32, 4, causal=False, eps=EPS, dyn=(0,)), False),
        (cc.attention_case("elu", (2,), 7, 7, 16, 5, causal=True, eps=EPS, dtype="f64"), False),
        (cc.attention_case("elu", (2,), 7, 11, 16, 5, causal=False, eps=EPS, dtype="f64"), False),
        # Heads of size 0: the output is zeros.
        (cc.attention_case("elu", (2,), 7, 7, 0, 5, causal=True, eps=EPS), False),
        # Attention as an importer writes it in plain linalg, raised by the
        # pipeline: the quadratic form (causal: the scan kernels; not: the
        # linear form's), and the linear form as written, normalized by
        # φ(Q)·Σφ(K) + eps or not.
        (cc.linalg_attention_case(2, 33, 33, 16, 8, causal=True), False),
        (cc.linalg_attention_case(2, 9, 40, 16, 8, causal=False), False),
        (cc.linalg_linear_form_case(2, 13, 40, 16, 5, normalized=True), False),
        (cc.linalg_linear_form_case(3, 6, 17, 32, 4, normalized=False), False),
        # The same on token-major [B, N, H, D] tensors: raised through the
        # transposes (N dynamic in the quadratic forms).
        (cc.token_major_attention_case(2, 33, 3, 16, 8, causal=True), False),
        (cc.token_major_attention_case(1, 9, 2, 16, 5, causal=False), False),
        (cc.token_major_linear_form_case(2, 13, 40, 3, 16, 5), False),
    ]
    # Feature maps alone (their features are the result, so no kernel
    # applies them as it loads): a thread per feature, rows past the grid
    # by a grid-stride loop, feature counts off the block size.
    cases += [(cc.feature_map_case(kind, shape, dyn, m, pdyn), False)
              for kind, shape, dyn, m, pdyn in (
                  ("favor", (2, 7, 8), (), 12, ()),
                  ("favor", (2, 3, 100, 8), (0, 2), 300, (1,)),
                  ("favor", (5,), (), 1, ()),
                  ("poly2", (2, 7, 3), (), None, ()),
                  ("poly2", (3, 5, 17), (0, 1, 2), None, ()),
                  ("poly2", (1, 1), (), None, ()),
                  ("elu", (2, 3, 100, 16), (0, 1, 2), None, ()),
                  ("relu", (2, 1, 5), (1, 2), None, ()),
                  ("identity", (3, 7, 8), (0,), None, ()))]
    # Gradients (linattn.attention_grad): causal through scan_grad's scans,
    # non-causal through the linear form's summaries and readouts (the
    # transposes between them on the host), the chain rule through each
    # feature map; batch- and sequence-parallel scans, bf16 on the chunked
    # tensor-core scans, f64, and feature_map_grad alone.
    cases += [
        (cc.attention_grad_case("elu", (2, 3), 7, 7, 16, 8, True, EPS), False),
        (cc.attention_grad_case("elu", (2,), 7, 13, 32, 48, False, EPS), False),
        (cc.attention_grad_case("relu", (2,), 9, 9, 16, 8, True, None, dyn=(1,)), False),
        (cc.attention_grad_case("identity", (2,), 7, 11, 16, 5, False, None), False),
        (cc.attention_grad_case("poly2", (2,), 7, 7, 3, 6, True, EPS), False),
        (cc.attention_grad_case("favor", (2,), 7, 11, 8, 5, False, EPS, fmax=16), False),
        (cc.attention_grad_case("elu", (2,), 1000, 1000, 64, 48, True, EPS, dyn=(1,)), True),
        (few_blocks(cc.attention_grad_case("elu", (2,), 1000, 1000, 64, 48, True, None),
                    16), True),
        (cc.attention_grad_case("elu", (2,), 300, 200, 64, 64, False, EPS), True),
        (cc.attention_grad_case("elu", (2,), 7, 7, 16, 5, True, EPS, dtype="f64"), False),
        (cc.attention_grad_case("elu", (2,), 129, 129, 64, 64, True, EPS, dtype="bf16"),
         True),
        (cc.feature_map_grad_case("favor", (2, 7, 8), m=12), False),
        (cc.feature_map_grad_case("poly2", (2, 7, 3), dyn=(0, 1, 2)), False),
        # The elementwise maps' chain rule kernel: rows past a block's
        # threads, rows of one element, f64.
        (cc.feature_map_grad_case("elu", (2, 3, 7, 100), dyn=(0, 2)), False),
        (cc.feature_map_grad_case("relu", (300, 1)), False),
        (cc.feature_map_grad_case("elu", (5, 33), dtype="f64"), False),
        (cc.feature_map_grad_case("identity", (4, 5), dyn=(0, 1)), False),
    ]
    return cases


def as_written(case):
    """`case` lowered without the pipeline's rewrites: the quadratic form
    runs as the scores and apply_scores kernels."""
    case.name += "__as_written"
    case.gpu_options = ["rewrite-forms=false"]
    return case


def batch_parallel(case):
    """`case` with the chunked scan's batch-parallel kernel whatever the
    batch size."""
    case.name += "__batch_parallel"
    case.gpu_options = getattr(case, "gpu_options", []) + ["sequence-parallel-blocks=0"]
    return case


def few_blocks(case, blocks, min_segment_tokens=0):
    """`case` with the scan aiming at `blocks` blocks: segments of several
    chunks (or the recurrent kernel's staged blocks) each, the last one
    shorter, none below `min_segment_tokens` (None: the pipeline's floor,
    1024)."""
    case.name += f"__blocks{blocks}"
    case.gpu_options = getattr(case, "gpu_options", []) + [
        f"sequence-parallel-blocks={blocks}"]
    if min_segment_tokens is not None:
        case.name += f"_min{min_segment_tokens}"
        case.gpu_options.append(f"min-segment-tokens={min_segment_tokens}")
    return case


def scalar_loads(case):
    """`case` staged element by element (vector-loads=false): the path
    buffers that are not 16-byte aligned take."""
    case.name += "__scalar_loads"
    case.gpu_options = getattr(case, "gpu_options", []) + ["vector-loads=false"]
    return case


def synchronous(case):
    """`case` with the chunk loops staging each chunk before its products
    (async-copies=false); the other cases copy the next chunk by cp.async
    while they compute, the default."""
    case.name += "__sync"
    case.gpu_options = getattr(case, "gpu_options", []) + ["async-copies=false"]
    return case


def bulk_copies(case):
    """`case` with whole chunks of the padded tiles staged by sm_90's bulk
    copies, one per row (bulk-copies=true)."""
    case.name += "__bulk"
    case.gpu_options = getattr(case, "gpu_options", []) + ["bulk-copies=true"]
    return case


def offset_limit(case, limit):
    """`case` with the chunk loops' 32-bit offsets kept below `limit`
    (narrow-offset-limit; 0: 64-bit offsets): on small sizes, the segments
    and kernels that long sequences and wide values take."""
    case.name += f"__offsets{limit}"
    case.gpu_options = getattr(case, "gpu_options", []) + [
        f"narrow-offset-limit={limit}"]
    return case


def value_tile(case, columns):
    """`case` with value tiles of at most `columns` columns (value-tile):
    more blocks, each computing its chunks' scores."""
    case.name += f"__tile{columns}"
    case.gpu_options = getattr(case, "gpu_options", []) + [f"value-tile={columns}"]
    return case


def row_tile_warps(case, warps):
    """`case` with `warps` warps per 16-row tile of a chunk (row-tile-warps),
    each with its share of the keys and the value columns."""
    case.name += f"__rows{warps}"
    case.gpu_options = getattr(case, "gpu_options", []) + [f"row-tile-warps={warps}"]
    return case


def min_blocks(case, blocks):
    """`case` with the chunk loops asking ptxas for registers that fit
    `blocks` blocks per SM (min-blocks-per-sm)."""
    case.name += f"__min{blocks}"
    case.gpu_options = getattr(case, "gpu_options", []) + [
        f"min-blocks-per-sm={blocks}"]
    return case


def with_tf32(case):
    """An f32 `case` on the chunked kernel's tf32 tensor cores."""
    case.name += "__tf32"
    case.gpu_options = getattr(case, "gpu_options", []) + ["tf32=true"]
    return case


def with_tf32x3(case):
    """An f32 `case` on the chunked kernel's tf32 tensor cores, each product
    three (tf32x3=true), within TF32X3_TOL."""
    case.name += "__tf32x3"
    case.gpu_options = getattr(case, "gpu_options", []) + ["tf32x3=true"]
    case.tol = TF32X3_TOL
    return case


def older_chip(case):
    """`case` compiled for sm_75, which has none of the chunked kernels'
    tensor-core instructions: scans take the recurrent kernel, the linear
    form the scalar ones, whatever the options say. PTX, which newer GPUs
    compile when they load it."""
    case.name += "__sm75"
    case.gpu_options = getattr(case, "gpu_options", []) + ["chip=sm_75",
                                                            "format=isa"]
    return case


def quadratic_cases():
    cases = []
    for kind in ("elu", "relu", "identity"):
        cases += [
            as_written(cc.attention_case(kind, (2,), 7, 7, 16, 8, causal=True, eps=EPS)),
            as_written(cc.attention_case(kind, (2, 3), 7, 13, 32, 40, causal=False,
                                         eps=EPS if kind != "identity" else None)),
        ]
    cases += [
        as_written(cc.attention_case("elu", (1,), 1, 1, 16, 4, causal=True, eps=EPS)),
        as_written(cc.attention_case("elu", (2,), 1000, 1000, 64, 48, causal=True,
                                     eps=EPS, dyn=(1,))),
        as_written(cc.attention_case("elu", (2,), 7, 11, 16, 5, causal=False, eps=EPS,
                                     dtype="f64")),
    ]
    return [(case, "_1000x" in case.name) for case in cases]


def large_cases():
    return [
        (cc.attention_case("elu", (1, 2), 4097, 4097, 64, 48, causal=True, eps=EPS, dyn=(2,)), True),
        (cc.attention_case("elu", (1,), 4097, 4097, 128, 64, causal=True, eps=EPS), True),
        (cc.attention_case("relu", (2,), 1000, 4097, 64, 32, causal=False, eps=EPS, dyn=(1,)), True),
        (cc.scan_case((1,), 4097, 16, 16, False, False, EPS, dyn=(1,)), True),
        # Past CUDA's grid y and z limits (65535): more queries than the
        # quadratic kernels' grid holds (dynamic, clamped at run time), more
        # batch elements than the linear form's kernels' grid holds.
        (as_written(cc.attention_case("elu", (1,), 70000, 3, 16, 4, causal=False, eps=EPS,
                                      dyn=(1,))), False),
        (cc.linear_case((65600,), 1, 2, 4, 2, eps=EPS), False),
    ]


def chunked_cases():
    """The chunked tensor-core scan (f16 and bf16 data, f32 state): sequence
    lengths around the chunk size and long ones, every chunk shape the
    kernel picks (F = 16 … 256), value sizes that are not multiples of the
    value tile, reverse scans, initial states."""
    cases = []
    for dtype in ("bf16", "f16"):
        for n in (1, 7, 63, 64, 65, 1000):
            cases.append(cc.kernel_case("elu", (2, 3), n, 64, 64, EPS, dtype=dtype))
        # An odd Dv: the outputs are stored one element at a time.
        for d, dv in ((16, 8), (32, 40), (48, 100), (64, 37), (128, 64), (128, 100)):
            cases.append(cc.kernel_case("relu", (2,), 129, d, dv, EPS, dtype=dtype))
        cases += [
            cc.kernel_case("identity", (2,), 100, 64, 64, None, dtype=dtype),
            cc.kernel_case("elu", (2,), 100, 64, 48, EPS, reverse=True, init=True,
                           dtype=dtype),
            cc.kernel_case("elu", (1, 2), 4097, 64, 64, EPS, init=True, dyn=(2,),
                           dtype=dtype),
            cc.kernel_case("elu", (2,), 4097, 128, 128, EPS, dtype=dtype),
            # Two warps per row tile, each with half the keys of the scores
            # and half the value columns (F = 112: DT = 64; F = 160: DT = 32,
            # one state tile per warp), the row sums added up in shared
            # memory; and without a normalizer.
            cc.kernel_case("elu", (2,), 100, 112, 72, EPS, reverse=True, init=True,
                           dtype=dtype),
            cc.kernel_case("relu", (2,), 129, 160, 40, EPS, dtype=dtype),
            batch_parallel(cc.kernel_case("elu", (2,), 97, 128, 130, None,
                                          dtype=dtype)),
            # A dynamic batch (and Dv): value tiles of 32 or 64 chosen at
            # run time (small-grid-value-tile): 32 for 3 · 4 blocks, 64 for
            # 67 (67 · 2 blocks of 32 would pass 132).
            cc.kernel_case("elu", (3,), 700, 128, 100, EPS, init=True,
                           dyn=(0, 1), dyn_dv=True, dtype=dtype),
            cc.kernel_case("relu", (67,), 90, 64, 64, EPS, dyn=(0, 1),
                           dtype=dtype),
            # No features: the recurrent kernel writes the zeros.
            cc.kernel_case("relu", (2,), 9, 0, 5, EPS, dtype=dtype),
            # A 16-bit state: the recurrent kernel, its lanes adding their
            # readouts in f32.
            cc.kernel_case("elu", (2,), 7, 16, 8, EPS, dtype=dtype, state=dtype),
        ]
    # The small batches above run sequence-parallel (segment states, a scan
    # over them, the segments' outputs); these take the batch-parallel kernel.
    for dtype in ("bf16", "f16"):
        cases += [
            batch_parallel(cc.kernel_case("elu", (2, 3), n, 64, 64, EPS, dtype=dtype))
            for n in (1, 65, 1000)
        ] + [
            batch_parallel(cc.kernel_case("relu", (2,), 129, 128, 100, EPS, dtype=dtype)),
            batch_parallel(cc.kernel_case("elu", (2,), 100, 64, 48, EPS, reverse=True,
                                          init=True, dtype=dtype)),
            batch_parallel(cc.kernel_case("elu", (1, 2), 4097, 64, 64, EPS, init=True,
                                          dyn=(2,), dtype=dtype)),
        ]
    # Segments of several chunks (the defaults above give one chunk each).
    cases += [
        scalar_loads(cc.kernel_case("elu", (2, 3), 1000, 64, 64, EPS, init=True,
                                    dtype="bf16")),
        scalar_loads(few_blocks(cc.kernel_case("relu", (2,), 1000, 128, 64, EPS,
                                               dtype="f16"), 8)),
        few_blocks(cc.kernel_case("elu", (2, 3), 1000, 64, 64, EPS, dtype="bf16"), 16),
        # Unnormalized (the segments' outputs kernels keep no z).
        few_blocks(cc.kernel_case("elu", (2, 3), 1000, 64, 64, None, dtype="bf16"), 16),
        few_blocks(cc.kernel_case("relu", (2,), 1000, 128, 100, None, init=True,
                                  dtype="f16"), 8),
        few_blocks(cc.kernel_case("relu", (2,), 1000, 128, 100, EPS, dtype="bf16"), 8),
        few_blocks(cc.kernel_case("elu", (1, 2), 4097, 64, 64, EPS, reverse=True,
                                  init=True, dyn=(2,), dtype="f16"), 8),
        # 16 segments whose states kernels share out the features (F = 128:
        # two blocks of 64 features and all of Dv = 100, past the 64 columns
        # of the other kernels' tiles), reverse with an initial state, and
        # unnormalized.
        few_blocks(cc.kernel_case("relu", (2,), 1000, 128, 100, EPS, reverse=True,
                                  init=True, dtype="f16"), 64),
        few_blocks(cc.kernel_case("elu", (2,), 1000, 128, 100, None, dtype="bf16"),
                   64),
        # F = 256, Dv = 64 (value tiles of 32): two blocks of 128 features.
        few_blocks(cc.kernel_case("elu", (2,), 1000, 256, 64, EPS, dtype="bf16"),
                   64),
    ]
    # Synchronous staging (async-copies=false; the other cases copy by
    # cp.async, the default): one chunk, a partial last one, even and odd
    # chunk counts (the async loop takes two per trip), elu and relu applied
    # as staged and identity stored as is, Dv not a multiple of 8 (rows that
    # async copies also stage synchronously), F = 16 (groups that do not
    # divide among the threads), segments, reverse scans with initial
    # states.
    cases += [
        synchronous(batch_parallel(cc.kernel_case("elu", (2, 3), n, 64, 64, EPS,
                                                   dtype="bf16")))
        for n in (1, 63, 129, 1000)
    ] + [
        synchronous(cc.kernel_case("relu", (2,), 129, 128, 100, EPS, dtype="f16")),
        synchronous(cc.kernel_case("relu", (2,), 129, 64, 37, EPS, dtype="bf16")),
        synchronous(cc.kernel_case("relu", (2,), 129, 16, 8, EPS, dtype="f16")),
        synchronous(cc.kernel_case("identity", (2,), 100, 64, 64, None,
                                    dtype="bf16")),
        synchronous(few_blocks(cc.kernel_case("elu", (2, 3), 1000, 64, 64, None,
                                               dtype="bf16"), 16)),
        synchronous(few_blocks(cc.kernel_case("elu", (1, 2), 4097, 64, 64, EPS,
                                               reverse=True, init=True, dyn=(2,),
                                               dtype="f16"), 8)),
        # The default floor: 65 chunks of 64 in at most 4 segments of 1024
        # tokens or more (8 blocks would ask for 4 anyway; 16 for 8).
        few_blocks(cc.kernel_case("elu", (1, 2), 4097, 64, 64, EPS, init=True,
                                  dtype="bf16"), 16, None),
    ]
    # Offsets. 64-bit ones are the default (every other case); 32-bit ones
    # below 2^31, the largest limit, and under a limit of 32768, which lets
    # them span 32768 / 128 = 256 rows: N = 190
    # still in one block, N = 191 and longer in segments of at most two
    # chunks whatever sequence-parallel-blocks says (N dynamic: decided at
    # run time), forward and reverse, with initial states and synchronous staging;
    # a dynamic Dv, whose W = max(F, Dv, 128) picks at run time between
    # 32-bit offsets (W <= 32768 / 130) and 64-bit ones.
    cases += [
        offset_limit(cc.kernel_case("elu", (2, 3), 1000, 64, 64, EPS, init=True,
                                    dtype="bf16"), 2147483648),
        offset_limit(batch_parallel(cc.kernel_case("relu", (2,), 129, 128, 100,
                                                   EPS, dtype="f16")), 2147483648),
        offset_limit(scalar_loads(cc.kernel_case("relu", (2,), 129, 64, 37, EPS,
                                                 dtype="bf16")), 2147483648),
        offset_limit(few_blocks(cc.kernel_case("elu", (1, 2), 1000, 64, 64, EPS,
                                               reverse=True, init=True, dyn=(2,),
                                               dtype="bf16"), 8), 32768),
        offset_limit(batch_parallel(cc.kernel_case("elu", (1, 2), 190, 64, 48, EPS,
                                                   reverse=True, init=True,
                                                   dyn=(2,), dtype="f16")), 32768),
        offset_limit(batch_parallel(cc.kernel_case("elu", (1, 2), 191, 64, 48, EPS,
                                                   reverse=True, init=True,
                                                   dyn=(2,), dtype="f16")), 32768),
        offset_limit(batch_parallel(cc.kernel_case("relu", (2,), 1000, 128, 100,
                                                   EPS, dtype="bf16")), 32768),
        offset_limit(synchronous(batch_parallel(cc.kernel_case(
            "elu", (1, 3), 300, 64, 64, None, dyn=(2,), dtype="bf16"))), 32768),
        offset_limit(batch_parallel(cc.kernel_case(
            "elu", (2,), 200, 64, 64, EPS, init=True, dyn=(1,), dyn_dv=True,
            dtype="bf16")), 32768),
        offset_limit(batch_parallel(cc.kernel_case(
            "elu", (2,), 200, 64, 300, EPS, init=True, dyn=(1,), dyn_dv=True,
            dtype="bf16")), 32768),
    ]
    # Narrower value tiles: 32 columns at F = 64 (C = 64, four warps) and
    # F = 128 (C = 32, two warps), 16 at F = 64 (C = 32), 8 at F = 16
    # (C = 16, one warp); batch- and sequence-parallel, odd and dynamic Dv,
    # reverse scans with initial states, synchronous staging.
    cases += [
        value_tile(batch_parallel(cc.kernel_case("elu", (2, 3), n, 64, 64, EPS,
                                                 dtype="bf16")), 32)
        for n in (1, 65, 1000)
    ] + [
        value_tile(cc.kernel_case("relu", (2,), 129, 64, 37, EPS, dtype="f16"), 32),
        value_tile(few_blocks(cc.kernel_case("elu", (1, 2), 1000, 64, 100, EPS,
                                             reverse=True, init=True, dyn=(2,),
                                             dtype="bf16"), 8), 32),
        value_tile(batch_parallel(cc.kernel_case("relu", (2,), 129, 128, 100, EPS,
                                                 dtype="f16")), 32),
        value_tile(cc.kernel_case("elu", (2,), 100, 64, 48, EPS, reverse=True,
                                  init=True, dtype="f16"), 16),
        value_tile(cc.kernel_case("relu", (2,), 129, 16, 20, None, dtype="bf16"), 8),
        value_tile(synchronous(batch_parallel(cc.kernel_case(
            "elu", (2, 3), 129, 64, 64, None, dtype="bf16"))), 32),
        value_tile(batch_parallel(cc.kernel_case(
            "elu", (2,), 200, 64, 72, EPS, init=True, dyn=(1,), dyn_dv=True,
            dtype="bf16")), 32),
    ]
    # Two warps per row tile (row-tile-warps=2) in 16-bit data: F = 64
    # (C = 64, eight warps), normalized with wgmma scores, and one per row
    # tile at F = 128, whose default is two (tiles of 32 columns instead).
    cases += [
        row_tile_warps(batch_parallel(cc.kernel_case("elu", (2,), 129, 64, 64,
                                                     EPS, dtype="bf16")), 2),
        row_tile_warps(few_blocks(cc.kernel_case("relu", (2,), 1000, 64, 40,
                                                 None, dtype="f16"), 8), 2),
        row_tile_warps(batch_parallel(cc.kernel_case("elu", (2,), 129, 128, 128,
                                                     EPS, dtype="bf16")), 1),
    ]
    # Value tiles of 128 columns in dynamic shared memory: F = 128 (C = 64,
    # eight warps) and F = 64 (C = 64, eight warps), Dv = 128, a partial
    # tile (Dv = 100) and two tiles (Dv = 200); batch- and sequence-parallel,
    # f16 (the state's column scales for 128 columns), reverse with initial
    # states, async copies (the default, which leave tiles of 64 at F = 128:
    # 128 columns do not fit twice) and synchronous staging, dynamic Dv; tf32
    # below.
    cases += [
        value_tile(batch_parallel(cc.kernel_case("elu", (2,), n, 128, 128, EPS,
                                                 dtype="bf16")), 128)
        for n in (1, 65, 1000)
    ] + [
        value_tile(few_blocks(cc.kernel_case("elu", (1, 2), 1000, 128, 128, EPS,
                                             reverse=True, init=True, dyn=(2,),
                                             dtype="bf16"), 8), 128),
        value_tile(batch_parallel(cc.kernel_case("relu", (2,), 129, 64, 100, EPS,
                                                 dtype="f16", values=-64)), 128),
        value_tile(batch_parallel(cc.kernel_case("elu", (2,), 300, 64, 200, None,
                                                 dtype="bf16")), 128),
        value_tile(synchronous(batch_parallel(cc.kernel_case(
            "elu", (2,), 129, 128, 128, EPS, dtype="bf16"))), 128),
        value_tile(batch_parallel(cc.kernel_case(
            "elu", (2,), 200, 128, 130, EPS, init=True, dyn=(1,), dyn_dv=True,
            dtype="f16")), 128),
    ]
    # Value tiles of 32 columns in dynamic shared memory where 48 KiB would
    # leave narrower ones: F = 256 (FAVOR+'s usual size: C = 32, four warps,
    # two per row tile, instead of one-warp blocks of 8 columns) and F = 208
    # (C = 32, instead of tiles of 16); sequence- and batch-parallel, Dv = 64
    # and a partial tile (Dv = 100), reverse with initial states, f16's
    # column scales, synchronous staging; tf32 below.
    cases += [
        cc.kernel_case("elu", (1, 2), 1000, 256, 64, EPS, dtype="bf16"),
        batch_parallel(cc.kernel_case("relu", (2,), 129, 256, 100, EPS, reverse=True,
                                      init=True, dtype="f16")),
        synchronous(batch_parallel(cc.kernel_case("elu", (2,), 100, 256, 64, None,
                                                  dtype="bf16"))),
        batch_parallel(cc.kernel_case("elu", (2,), 129, 208, 72, EPS, dtype="bf16")),
    ]
    # Registers for 4 blocks per SM (min-blocks-per-sm, .minnctapersm): on a
    # GPU the chunk loops spill a few values, which must change nothing (the
    # emulator runs the kernels as they are before ptxas).
    cases += [
        min_blocks(cc.kernel_case("elu", (2, 3), 129, 64, 64, EPS, init=True,
                                  dtype="bf16"), 4),
        min_blocks(few_blocks(cc.kernel_case("relu", (2,), 300, 128, 100, EPS,
                                             dtype="f16"), 8), 4),
    ]
    # States past f16's range (values in [0, 64), 4097 tokens: S up to
    # 1.5e5): the f16 chunk loops scale each column of
    # the state by a power of two before rounding it (bf16 has f32's range).
    cases += [
        cc.kernel_case("elu", (2,), 4097, 64, 64, EPS, dtype="f16", values=-64.0),
        batch_parallel(cc.kernel_case("elu", (2,), 4097, 128, 100, EPS,
                                      dtype="f16", values=-64.0)),
        few_blocks(cc.kernel_case("elu", (1, 2), 4097, 64, 37, EPS, reverse=True,
                                  init=True, dtype="f16", values=-64.0), 8),
        synchronous(value_tile(cc.kernel_case("elu", (2,), 4097, 64, 64, EPS,
                                               dtype="f16", values=-64.0), 32)),
        cc.kernel_case("elu", (2,), 4097, 64, 64, EPS, dtype="bf16", values=-64.0),
    ]
    # Chips before sm_80: the recurrent kernel, the chunked kernels' options
    # ignored.
    cases += [
        older_chip(cc.kernel_case("elu", (2, 3), 129, 64, 64, EPS, init=True,
                                  dtype="bf16")),
        older_chip(cc.kernel_case("relu", (2,), 100, 128, 100, EPS, reverse=True,
                                  dtype="f16")),
        older_chip(synchronous(value_tile(cc.kernel_case(
            "elu", (1, 2), 300, 64, 48, None, dyn=(2,), dtype="bf16"), 32))),
    ]
    for case in cases:
        case.tol = CHUNKED_TOL["bf16" if "_bf16_" in case.name else "f16"]
    # f32 data on tf32 tensor cores: operands rounded to 10-bit mantissas,
    # like f16's, so f16's tolerance.
    tf32 = [
        with_tf32(cc.kernel_case("elu", (2, 3), 65, 64, 64, EPS)),
        with_tf32(cc.kernel_case("relu", (2,), 1000, 128, 100, EPS, init=True)),
        with_tf32(cc.kernel_case("elu", (2,), 100, 32, 40, EPS, reverse=True)),
        with_tf32(cc.kernel_case("relu", (2,), 129, 64, 37, EPS)),
        few_blocks(with_tf32(cc.kernel_case("relu", (2,), 1000, 128, 100, EPS,
                                            init=True)), 8),
        scalar_loads(with_tf32(cc.kernel_case("elu", (2,), 129, 64, 64, EPS))),
        few_blocks(with_tf32(cc.kernel_case("elu", (2, 3), 1000, 64, 64, None)), 16),
        batch_parallel(with_tf32(cc.kernel_case("elu", (1, 2), 4097, 64, 64, EPS,
                                                init=True, dyn=(2,)))),
        # Synchronous staging, which rounds as it stores (the others copy
        # asynchronously and round in place, but for Dv = 37's rows).
        synchronous(with_tf32(cc.kernel_case("elu", (2,), 129, 64, 64, EPS))),
        offset_limit(few_blocks(with_tf32(cc.kernel_case("relu", (2,), 1000, 128,
                                                         100, EPS, init=True)), 8), 0),
        value_tile(with_tf32(cc.kernel_case("elu", (2,), 129, 64, 64, EPS)), 32),
        value_tile(batch_parallel(with_tf32(cc.kernel_case("elu", (2,), 129, 64,
                                                           128, EPS))), 128),
        # F = 160: tiles of 32 columns in dynamic shared memory (C = 32, four
        # warps) instead of one-warp blocks of 8.
        batch_parallel(with_tf32(cc.kernel_case("elu", (2,), 129, 160, 72, EPS,
                                                init=True))),
        # Two warps per row tile at F = 64 (four a block instead of two):
        # normalized from an initial state, and in segments.
        row_tile_warps(with_tf32(cc.kernel_case("elu", (2,), 129, 64, 64, EPS,
                                                init=True)), 2),
        few_blocks(row_tile_warps(with_tf32(cc.kernel_case(
            "relu", (2,), 1000, 64, 40, EPS, reverse=True)), 2), 8),
        # 16 segments whose states kernels share out the features (two
        # blocks of 64 and all of Dv = 100).
        few_blocks(with_tf32(cc.kernel_case("relu", (2,), 1000, 128, 100, EPS,
                                            reverse=True)), 64),
        # tf32 needs sm_80: strict f32 on older chips.
        older_chip(with_tf32(cc.kernel_case("elu", (2,), 129, 64, 64, EPS))),
    ]
    for case in tf32:
        case.tol = CHUNKED_TOL["f16"]
    # The same kernels with each product three (tf32x3): batch- and
    # sequence-parallel, reverse, from an initial state, F = 160's tiles in
    # dynamic shared memory, sequences of 4097 and 16384 tokens (512 chunks
    # in one block, 128 in each segment's states: a state carried as the
    # accumulator of every chunk's MMAs drifted toward zero by 8e-5 there on
    # the emulator's model of the tensor cores); strict f32 on chips before
    # sm_80.
    tf32 += [
        with_tf32x3(cc.kernel_case("elu", (2, 3), 65, 64, 64, EPS)),
        with_tf32x3(cc.kernel_case("elu", (2,), 100, 32, 40, EPS, reverse=True)),
        few_blocks(with_tf32x3(cc.kernel_case("relu", (2,), 1000, 128, 100, EPS,
                                              init=True)), 8),
        few_blocks(with_tf32x3(cc.kernel_case("elu", (2,), 1000, 128, 100, None)),
                   64),
        batch_parallel(with_tf32x3(cc.kernel_case("elu", (1, 2), 4097, 64, 64,
                                                  None, dyn=(2,)))),
        batch_parallel(with_tf32x3(cc.kernel_case("elu", (1,), 16384, 64, 64,
                                                  None))),
        few_blocks(with_tf32x3(cc.kernel_case("elu", (1,), 16384, 128, 128,
                                              EPS)), 4),
        batch_parallel(with_tf32x3(cc.kernel_case("elu", (2,), 129, 160, 72, EPS,
                                                  init=True))),
        row_tile_warps(batch_parallel(with_tf32x3(cc.kernel_case(
            "elu", (1, 2), 1000, 64, 64, None, dyn=(2,)))), 2),
        older_chip(with_tf32x3(cc.kernel_case("elu", (2,), 129, 64, 64, EPS))),
    ]
    return [(case, True) for case in cases + tf32]


def smoke_cases():
    """One case per kernel and one host fallback: what --mock and
    --fake-driver run in check."""
    return [
        (cc.scan_case((2, 3), 7, 16, 8, False, True, EPS), False),
        (cc.scan_case((2,), 7, 32, 5, True, False, None, dyn=(1,)), False),
        (cc.linear_case((2,), 7, 11, 16, 40, eps=EPS), False),
        (cc.step_case((2, 3), 16, 8, EPS), False),
        (cc.attention_case("elu", (2,), 7, 7, 16, 8, causal=True, eps=EPS), False),
        (cc.attention_case("relu", (2,), 7, 13, 16, 8, causal=False, eps=EPS), False),
        (cc.attention_case("poly2", (2,), 7, 13, 4, 5, causal=False, eps=EPS), False),
        (cc.kernel_case("elu", (2,), 100, 64, 40, EPS, init=True, dtype="bf16"), False),
        (batch_parallel(cc.kernel_case("elu", (2,), 100, 64, 40, EPS, init=True,
                                       dtype="bf16")), False),
        (synchronous(batch_parallel(cc.kernel_case("elu", (2,), 100, 64, 64, EPS,
                                                    dtype="bf16"))), False),
        (as_written(cc.attention_case("elu", (2,), 7, 7, 16, 8, causal=True, eps=EPS)), False),
    ]


def layout_cases():
    """The chunked kernels on token-major [..., N, H, D] tensors, transposed into
    [..., H, N, D] and O back (as raised attention and `layout="bnhd"` have
    it): the kernels read and write the untransposed tensors, H·W elements
    from one token's row to the next. Batch- and sequence-parallel, forward
    and reverse with initial and final states, two outer dimensions, a
    dynamic N; bf16 and f16 (wgmma and mma.sync), tf32, 32-bit offsets,
    bulk copies, synchronous staging and element-wise loads (Dv = 37); the
    linear form's chunked kernels, and the recurrent scan and the linear
    form's scalar kernels (f32) on such tensors."""
    tm = cc.token_major_kernel_case
    cases = [
        tm("elu", (2,), 129, 3, 64, 64, EPS, dtype="bf16"),
        batch_parallel(tm("elu", (2,), 129, 3, 64, 64, EPS, dtype="bf16")),
        tm("relu", (1, 2), 300, 2, 128, 100, EPS, reverse=True, init=True,
           dyn=(2,), dtype="f16", final=True),
        few_blocks(tm("elu", (2,), 1000, 3, 64, 48, EPS, init=True, final=True,
                      dyn=(1,), dtype="bf16"), 64),
        few_blocks(tm("elu", (2,), 1000, 2, 128, 64, None, reverse=True,
                      dtype="f16"), 64),
        # 32-bit offsets: below 2^31, and below 65536, which leaves rows of
        # H·W = 3·128 elements room for segments of one chunk.
        offset_limit(tm("relu", (2,), 129, 3, 64, 64, EPS, dtype="bf16"),
                     2147483648),
        offset_limit(tm("elu", (1, 2), 1000, 3, 64, 64, EPS, reverse=True,
                        init=True, dyn=(2,), dtype="bf16"), 65536),
        bulk_copies(tm("relu", (2,), 129, 3, 128, 64, EPS, dtype="f16")),
        synchronous(tm("elu", (2,), 129, 3, 64, 37, EPS, dtype="bf16")),
        scalar_loads(tm("relu", (2,), 129, 3, 64, 64, EPS, dtype="f16")),
        # The linear form: the key-value summary reads K and V, the readout
        # Q and writes O, token-major; more keys than queries and fewer,
        # unnormalized with S and z results, segments of the keys.
        tm("elu", (2,), 129, 3, 64, 64, EPS, dtype="bf16", m=300),
        tm("relu", (1, 2), 100, 2, 128, 100, None, dyn=(2,), dtype="f16",
           final=True, m=77),
        few_blocks(tm("elu", (2,), 65, 3, 64, 48, EPS, dtype="bf16", m=1000), 64),
    ]
    for case in cases:
        case.tol = CHUNKED_TOL["bf16" if "_bf16" in case.name else "f16"]
    tf32 = [
        with_tf32(tm("elu", (2,), 129, 3, 64, 64, EPS, init=True, final=True)),
        few_blocks(with_tf32(tm("relu", (2,), 1000, 2, 128, 100, EPS,
                                reverse=True)), 64),
        with_tf32(tm("elu", (2,), 65, 3, 64, 64, EPS, m=129, final=True)),
    ]
    for case in tf32:
        case.tol = CHUNKED_TOL["f16"]
    # f32 without tf32: the recurrent kernel, the chunkwise CUDA-core one
    # (simt-chunks=true) and the linear form's scalar kernels, which read
    # and write the token-major rows too (the scans batch-parallel and in
    # segments, staged by cp.async and synchronously).
    def simt_chunks(case):
        case.name += "__simt"
        case.gpu_options = getattr(case, "gpu_options", []) + ["simt-chunks=true"]
        return case

    recurrent = [
        tm("elu", (2,), 129, 3, 64, 48, EPS, init=True, final=True),
        few_blocks(tm("relu", (1, 2), 1000, 2, 32, 20, EPS, reverse=True,
                      dyn=(2,)), 64),
        synchronous(tm("elu", (2,), 100, 3, 16, 8, None)),
        simt_chunks(tm("elu", (2,), 129, 3, 32, 24, EPS, final=True)),
        few_blocks(simt_chunks(tm("relu", (2,), 1000, 2, 64, 40, EPS,
                                  reverse=True, init=True)), 64),
        # The linear form's scalar kernels (f32 without tf32).
        tm("elu", (2,), 65, 3, 32, 24, EPS, m=100),
        tm("relu", (1, 2), 40, 2, 20, 7, None, dyn=(2,), final=True, m=33),
    ]
    # f32's longer-sequence tolerance only from 1000 tokens (q: [..., N, H, D]).
    return [(case, case.inputs[0].shape[-3] >= 1000)
            for case in cases + tf32 + recurrent]


GROUPS = {
    "chunked": chunked_cases,
    "layouts": layout_cases,
    "scan": scan_cases,
    "linear": lambda: linear_cases() + linear_chunked_cases(),
    "step": step_cases,
    "attention": attention_cases,
    "quadratic": quadratic_cases,
    "large": large_cases,
    "smoke": smoke_cases,
}


def run_case(case, long_sequence, opts):
    d = cc.case_dir(opts.workdir, case.name)
    os.makedirs(d, exist_ok=True)
    kernel = os.path.join(d, "kernel.mlir")
    with open(kernel, "w") as f:
        f.write(case.mlir)
    pipeline_options = ([f"chip={opts.chip}"] + getattr(case, "gpu_options", []) +
                        opts.options.split())
    if opts.mock:
        pipeline_options.append("format=isa")
    cmd = [os.path.join(opts.tools, "linattn-run"), kernel, "--target=cuda",
           f"--pipeline=linattn-lower-to-nvvm{{{' '.join(pipeline_options)}}}",
           f"--output-dir={d}"]
    env = dict(os.environ)
    log = os.path.join(d, "mgpu.log")
    if os.path.exists(log):
        os.remove(log)
    if opts.mock or opts.emulate:
        cmd.append("--mock-gpu" if opts.mock else "--emulate-gpu")
        env["LINATTN_MOCK_GPU_LOG"] = log
    else:
        env["LINATTN_CUDA_ABORT_ON_ERROR"] = "1"
    if opts.fake_driver:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (opts.fake_driver, env.get("LD_LIBRARY_PATH")) if p)
        env["LINATTN_FAKE_CUDA_LOG"] = log
    for i, x in enumerate(case.inputs):
        path = os.path.join(d, f"input{i}.npy")
        np.save(path, x)
        cmd.append(f"--input={path}")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return False, f"linattn-run failed ({proc.returncode}):\n{proc.stderr}"
    if opts.mock or opts.fake_driver:
        calls = ""
        if os.path.exists(log):  # no log: no GPU call at all
            with open(log) as f:
                calls = f.read()
        if "leak" in calls:
            return False, "device buffers were not freed:\n" + calls
        if " -> CUDA_ERROR" in calls:
            return False, "a driver call failed:\n" + calls
        launches = calls.count("mgpu: launch " if opts.mock else "cuda: launch ")
        for i, expected in enumerate(case.expected):
            out = np.load(os.path.join(d, f"result{i}.npy"))
            if out.shape != expected.shape:
                return False, f"result {i} has shape {out.shape}, expected {expected.shape}"
        return True, f"{launches} kernel launches"
    if opts.emulate and os.path.exists(log):
        with open(log) as f:
            calls = f.read()
        if "leak" in calls:
            return False, "device buffers were not freed:\n" + calls
    return cc.compare_results(case, d, tolerance(case, long_sequence))


def add_run_arguments(parser):
    """The arguments `run_case` reads: --tools, --workdir, --mock,
    --fake-driver or --emulate, --chip, --options."""
    parser.add_argument("--tools", required=True)
    parser.add_argument("--workdir", required=True)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--mock", action="store_true")
    mode.add_argument("--fake-driver", metavar="DIR", default="",
                      help="the folder of the fake libcuda.so.1")
    mode.add_argument("--emulate", action="store_true")
    parser.add_argument("--chip", default="sm_90")
    parser.add_argument("--options", default="",
                        help="linattn-lower-to-nvvm options added to every "
                             "case's (space-separated, e.g. 'wgmma=true')")


def check(case, long_sequence, opts):
    """Runs `case` and prints PASS or FAIL with its name and message (and,
    on the emulator, its time); returns whether it passed."""
    start = time.monotonic()
    ok, message = run_case(case, long_sequence, opts)
    if opts.emulate:
        message += f" ({time.monotonic() - start:.1f} s)"
    print(f"{'PASS' if ok else 'FAIL'} {case.name}: {message}", flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", required=True, choices=sorted(GROUPS))
    parser.add_argument("--skip", default="",
                        help="leave out the cases whose names match this "
                             "regular expression (e.g. those --options does "
                             "not change)")
    add_run_arguments(parser)
    opts = parser.parse_args()
    cases = [(case, long_sequence) for case, long_sequence in GROUPS[opts.group]()
             if not (opts.skip and re.search(opts.skip, case.name))]
    failures = sum(not check(case, long_sequence, opts)
                   for case, long_sequence in cases)
    print(f"{opts.group}: {len(cases) - failures} of {len(cases)} cases passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
