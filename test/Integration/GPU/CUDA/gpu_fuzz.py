"""Random numerical tests of the NVIDIA GPU backend.

Draws cases of every GPU kernel, of the gradients of scans and of token-major
operands read in place, with random
sizes (empty ones rarely, 1, tile edges, odd value sizes), dynamic
dimensions, feature maps, directions,
initial states, large values for normalized 16-bit data (states past f16's
range) and options of linattn-lower-to-nvvm (chunk-size, value-tile,
sequence-parallel-blocks, async-copies, vector-loads, narrow-offset-limit,
min-blocks-per-sm, wgmma, prefetch-chunks, scores-in-registers, wgmma-outputs,
tf32, tf32x3, row-tile-warps, copy-stages, states-copy-stages, states-min-blocks-per-sm,
states-feature-split, small-grid-value-tile,
bulk-copies, simt-chunks, fit-registers (which only a GPU run compiles: emulated, the
kernels are interpreted and never reach ptxas),
scan-kernel, linear-kernel, scan-feature-lanes, scan-thread-columns,
scan-tile, block-size, rewrite-forms), with fresh data, and checks each against its
float64 reference within the tolerances of gpu_cases.py. Ill-conditioned
draws are left out: identity features with a normalizer (denominators near
zero) and 16-bit states (rounded at every token); gpu_cases.py has fixed
cases of both.

Every case is reproducible from the seed and its index, which the output
names. Without --seed a fresh one is drawn and printed.

Usage: gpu_fuzz.py --count=N --tools=DIR --workdir=DIR [--seed=S [--index=I]]
                   [--kinds=chunked,recurrent,...]
                   [--mock | --fake-driver=DIR | --emulate]
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gpu_cases as g  # noqa: E402
# gpu_cases puts ../../CPU on the path.
from cpu_fuzz import add_fuzz_arguments, draw_feature_map, fuzz  # noqa: E402

cc = g.cc
EPS = g.EPS
KINDS = ("chunked", "tf32", "recurrent", "scan", "step", "attention",
         "quadratic", "linear", "linear-chunked", "feature-map", "scan-grad",
         "attention-grad", "token-major")


def large_values(d, eps, dtype):
    """Sometimes values in [0, 256) for normalized 16-bit cases (the `values`
    argument of the case builders): states that outgrow f16's range on long
    sequences, outputs that stay within it."""
    return -256.0 if eps and dtype in ("f16", "bf16") and d.chance(0.2) else 1.0


# The sequence-parallel scans' options: the sequences drawn are shorter than
# the default's 1024-token segments, so segments of a staged block or more,
# and targets that split the few blocks of small batches.
SEGMENT_OPTIONS = (
    ("sequence-parallel-blocks=0", "sequence-parallel-blocks=4",
     "sequence-parallel-blocks=16"),
    ("min-segment-tokens=0", "min-segment-tokens=100"))


def tensor_core_f32(d):
    """The option that puts f32 data on the chunked kernels' tensor cores:
    tf32=true or tf32x3=true (each product three)."""
    return d.pick("tf32=true", "tf32x3=true")


def tensor_core_f32_tolerance(option):
    """The tolerance of f32 data under `option` (`tensor_core_f32`)."""
    return g.TF32X3_TOL if option == "tf32x3=true" else g.CHUNKED_TOL["f16"]


def chunked_options(d, tf32, *groups):
    """Options of the chunked kernels (`tf32`, the option of f32 data, or
    None), one choice or none from each group of theirs and of `groups`."""
    return ([tf32] if tf32 else []) + d.options(
        ("chunk-size=16", "chunk-size=32"),
        ("value-tile=8", "value-tile=16", "value-tile=32", "value-tile=128"),
        ("small-grid-value-tile=0", "small-grid-value-tile=8",
         "small-grid-value-tile=16", "small-grid-value-tile=64"),
        ("row-tile-warps=1", "row-tile-warps=2"),
        *SEGMENT_OPTIONS,
        ("async-copies=false",), ("vector-loads=false",),
        ("copy-stages=1", "copy-stages=3", "copy-stages=4"),
        ("states-copy-stages=1", "states-copy-stages=3",
         "states-copy-stages=4"),
        ("states-min-blocks-per-sm=0", "states-min-blocks-per-sm=4"),
        ("states-feature-split=false",),
        ("bulk-copies=true",), ("fit-registers=true",), *groups)


def chunked_case(d, f32):
    tf32 = tensor_core_f32(d) if f32 else None
    dtype = "f32" if tf32 else d.pick("bf16", "f16")
    kind = d.pick("elu", "relu", "identity")
    eps = None if kind == "identity" or d.chance(0.4) else EPS
    batch = d.batch()
    case = cc.kernel_case(
        kind, batch, d.size(0, 1, 2, 15, 16, 17, 63, 64, 65, 129, 300),
        d.pick(16, 32, 48, 64, 80, 96, 128, 144, 208, 256),
        d.size(0, 1, 7, 8, 37, 64, 65, 100, 130),
        eps, reverse=d.chance(0.5), init=d.chance(0.5),
        dyn=(len(batch),) if d.chance(0.5) else (), dtype=dtype,
        dyn_dv=d.chance(0.25), values=large_values(d, eps, dtype))
    case.gpu_options = chunked_options(
        d, tf32, ("narrow-offset-limit=2147483648", "narrow-offset-limit=32768"),
        ("min-blocks-per-sm=4",), ("wgmma=false",),
        ("prefetch-chunks=1", "prefetch-chunks=2"), ("scores-in-registers=true",),
        ("wgmma-outputs=true",))
    case.tol = tensor_core_f32_tolerance(tf32) if tf32 else g.CHUNKED_TOL[dtype]
    return case, True


def recurrent_case(d):
    kind = d.pick("elu", "relu", "identity")
    eps = None if kind == "identity" or d.chance(0.4) else EPS
    batch = d.batch()
    n = d.size(0, 1, 2, 7, 33, 100, 300)
    case = cc.kernel_case(
        kind, batch, n, d.pick(1, 3, 4, 6, 7, 8, 16, 17, 32, 64, 100, 128),
        d.size(0, 1, 5, 8, 31, 33, 64, 100), eps, reverse=d.chance(0.5),
        init=d.chance(0.5), dyn=(len(batch),) if d.chance(0.5) else (),
        dyn_dv=d.chance(0.25))
    case.gpu_options = ["scan-kernel=recurrent"] + d.options(
        ("scan-feature-lanes=1", "scan-feature-lanes=2", "scan-feature-lanes=8"),
        ("scan-tile=64", "scan-tile=128", "scan-tile=256", "scan-tile=512"),
        ("scan-thread-columns=1", "scan-thread-columns=2",
         "scan-thread-columns=4", "scan-thread-columns=8"),
        ("async-copies=false",), ("fit-registers=true",), ("simt-chunks=true",),
        *SEGMENT_OPTIONS)
    return case, n >= 300


def scan_case(d):
    batch = d.batch()
    n = d.size(0, 1, 2, 7, 33, 100, 300)
    case = cc.scan_case(batch, n, d.pick(1, 4, 7, 16, 32, 64, 100),
                        d.size(0, 1, 5, 8, 33, 64), d.chance(0.5),
                        d.chance(0.5), EPS if d.chance(0.6) else None,
                        dyn=d.dims(len(batch) + 1))
    case.gpu_options = d.options(("scan-feature-lanes=1", "scan-feature-lanes=2"),
                                 ("scan-tile=64",),
                                 ("scan-thread-columns=2", "scan-thread-columns=4"),
                                 ("async-copies=false",), ("fit-registers=true",),
                                 ("simt-chunks=true",), *SEGMENT_OPTIONS)
    return case, n >= 300


def scan_grad_case(d):
    """The gradients of a scan: three scans (four, normalized), two of them
    with queries and keys of both signs, F and Dv exchanged, on the recurrent
    kernel (f32, f64) or the chunked tf32 one (tf32 or tf32x3)."""
    batch = d.batch()
    n = d.size(0, 1, 2, 7, 33, 100, 300)
    tf32 = tensor_core_f32(d) if d.chance(0.2) else None
    args = (batch, n, d.pick(1, 4, 7, 16, 32, 64), d.size(0, 1, 5, 8, 33, 64),
            d.chance(0.5), EPS if d.chance(0.6) else None)
    kwargs = dict(dyn=d.dims(len(batch) + 1),
                  dtype="f32" if tf32 else d.pick("f32", "f32", "f64"))
    if d.chance(0.4):  # from an initial state, some with final_grad
        case = cc.scan_grad_states_case(*args, final=d.chance(0.5), **kwargs)
    else:
        case = cc.scan_grad_case(*args, **kwargs)
    case.gpu_options = ([tf32] if tf32 else []) + d.options(
        ("scan-feature-lanes=1", "scan-feature-lanes=2"), ("async-copies=false",),
        ("simt-chunks=true",), *SEGMENT_OPTIONS)
    if tf32:
        case.tol = tensor_core_f32_tolerance(tf32)
    return case, n >= 300


def attention_grad_case(d):
    """The gradients of linattn.attention: causal on the scan kernels
    (bf16 and f16 on the chunked tensor-core ones), non-causal on the linear
    form's, the chain rule through every feature map."""
    kind = d.pick("elu", "elu", "relu", "identity", "poly2", "favor")
    batch = d.batch()
    causal = d.chance(0.5)
    n = d.size(0, 1, 2, 7, 33, 100, 300)
    head = d.pick(1, 3, 4) if kind == "poly2" else d.pick(1, 4, 16, 32, 64, 128)
    dtype = d.pick("f32", "f32", "f64", "bf16", "f16")
    if dtype in ("bf16", "f16") and kind != "elu":
        # poly2, favor, identity: features whose 16-bit rounding the
        # tolerance leaves out; relu: rows of zero features, whose dO / D
        # overflows f16 when normalized (the op's description).
        dtype = "f32"
    case = cc.attention_grad_case(
        kind, batch, n, n if causal else d.size(0, 1, 3, 7, 64, 77, 300), head,
        d.size(0, 1, 5, 8, 33, 64), causal,
        EPS if kind != "identity" and d.chance(0.6) else None,
        dyn=d.dims(len(batch) + 2), fmax=d.pick(1, 8, 24, 256) if kind == "favor" else None,
        dtype=dtype)
    if dtype in ("bf16", "f16"):
        case.tol = g.CHUNKED_TOL[dtype]
    case.gpu_options = d.options(
        ("scan-feature-lanes=1", "scan-feature-lanes=2"), ("async-copies=false",),
        *SEGMENT_OPTIONS)
    return case, n >= 300


def step_case(d):
    batch = d.batch()
    case = cc.step_case(batch, d.pick(1, 2, 3, 6, 7, 16, 36, 64, 100, 128, 200),
                        d.pick(1, 5, 8, 31, 33, 100, 128, 130),
                        EPS if d.chance(0.6) else None, dyn=d.dims(len(batch)))
    case.gpu_options = d.options(
        ("block-size=8", "block-size=32", "block-size=40", "block-size=64",
         "block-size=1024"),
        ("scan-feature-lanes=1", "scan-feature-lanes=2", "scan-feature-lanes=8",
         "scan-feature-lanes=32"))
    return case, False


def attention_case(d, as_written):
    kind = d.pick("elu", "relu", "identity", "poly2", "favor")
    batch = d.batch()
    causal = d.chance(0.5)
    n = d.pick(1, 2, 7, 31, 65, 130)
    head = d.pick(1, 3, 4, 8) if kind == "poly2" else d.pick(1, 4, 16, 32, 64, 100, 128)
    case = cc.attention_case(
        kind, batch, n, n if causal else d.pick(1, 3, 7, 64, 77), head,
        d.pick(1, 5, 8, 33, 64, 100),
        causal, EPS if kind != "identity" and d.chance(0.7) else None,
        dyn=d.dims(len(batch) + 2), fmax=d.pick(1, 8, 24, 64, 256) if kind == "favor" else None)
    case.gpu_options = (["rewrite-forms=false"] if as_written else []) + d.options(
        ("block-size=8", "block-size=64", "block-size=512"))
    return case, False


def linear_case(d):
    batch = d.batch()
    case = cc.linear_case(batch, d.pick(1, 7, 100), d.pick(1, 9, 130),
                          d.size(0, 1, 16, 64, 128), d.size(0, 1, 8, 100),
                          eps=EPS if d.chance(0.6) else None,
                          dyn=d.dims(len(batch) + 2))
    case.gpu_options = d.options(("block-size=1", "block-size=8", "block-size=64",
                                  "block-size=1024"))
    return case, False


def linear_chunked_case(d):
    """The linear form with 16-bit data (or f32 with tf32 or tf32x3): the
    chunked tensor-core kernels, or the scalar ones with
    linear-kernel=scalar."""
    tf32 = tensor_core_f32(d) if d.chance(0.2) else None
    dtype = "f32" if tf32 else d.pick("bf16", "f16")
    kind = d.pick("elu", "relu", "identity")
    eps = None if kind == "identity" or d.chance(0.4) else EPS
    batch = d.batch()
    case = cc.linear_kernel_case(
        kind, batch, d.size(0, 1, 7, 63, 64, 65, 300), d.size(0, 1, 9, 64, 65, 300),
        d.pick(16, 32, 48, 64, 80, 96, 128, 144, 208, 256),
        d.size(0, 1, 7, 8, 37, 64, 65, 100, 130),
        eps, dyn=d.dims(len(batch) + 1), dtype=dtype, dyn_dv=d.chance(0.25),
        values=large_values(d, eps, dtype))
    case.gpu_options = chunked_options(d, tf32, ("linear-kernel=scalar",),
                                       ("prefetch-chunks=1",))
    case.tol = tensor_core_f32_tolerance(tf32) if tf32 else g.CHUNKED_TOL[dtype]
    # The tensor-core readout rounds S to the data type (tf32 for f32): its
    # error is relative to |φ(q)|·|S|, which a readout that cancels (signed
    # identity features, few value columns) can leave far above |O|.
    fq, _ = cc.kernel_features(kind, *case.inputs[:2], dtype)
    s, z = case.expected[1:]
    case.scales[0] = cc.ref.query_readout(cc.np.abs(fq), cc.np.abs(s),
                                          z if eps else None, eps)
    return case, True


def token_major_case(d):
    """A scan or the linear form between transposes from and to token-major
    [..., N, H, D] tensors (`cc.token_major_kernel_case`), which the kernels
    read and write in place: 16-bit data on the tensor cores, f32 on tf32
    or tf32x3, or on the recurrent, chunkwise CUDA-core and scalar kernels.
    elu and relu only: nonnegative features, whose outputs do not cancel."""
    linear = d.chance(0.3)
    f32 = d.chance(0.4)
    tf32 = tensor_core_f32(d) if f32 and d.chance(0.5) else None
    dtype = "f32" if f32 else d.pick("bf16", "f16")
    kind = d.pick("elu", "relu")
    eps = None if d.chance(0.3) else EPS
    outer = d.pick((1,), (2,), (1, 2))
    n = d.size(0, 1, 2, 15, 16, 17, 63, 64, 65, 129, 300)
    f = d.pick(16, 32, 48, 64, 80, 96, 128, 144, 208, 256) if not f32 or tf32 \
        else d.pick(4, 8, 16, 17, 32, 64, 100, 128)
    case = cc.token_major_kernel_case(
        kind, outer, n, d.pick(1, 2, 3, 5), f, d.size(0, 1, 7, 8, 37, 64, 65, 100),
        eps, reverse=not linear and d.chance(0.5),
        init=not linear and d.chance(0.5),
        dyn=(len(outer),) if d.chance(0.5) else (), dtype=dtype,
        final=d.chance(0.3),
        m=d.size(1, 9, 64, 65, 300) if linear else None)
    if f32 and not tf32:
        case.gpu_options = d.options(("simt-chunks=true",), ("async-copies=false",),
                                     *SEGMENT_OPTIONS)
    else:
        case.gpu_options = chunked_options(
            d, tf32, ("narrow-offset-limit=2147483648", "narrow-offset-limit=65536"),
            ("wgmma=false",), ("prefetch-chunks=1",))
        case.tol = (tensor_core_f32_tolerance(tf32) if tf32
                    else g.CHUNKED_TOL[dtype])
    # f32's longer-sequence tolerance from 300 tokens, as `recurrent_case`.
    return case, n >= 300


def feature_map_case(d):
    """A feature map alone: its own kernel, a thread per feature."""
    case = draw_feature_map(d)
    case.gpu_options = d.options(("block-size=1", "block-size=32", "block-size=40",
                                  "block-size=1024"))
    return case, False


def draw_case(kind, d):
    if kind in ("chunked", "tf32"):
        return chunked_case(d, kind == "tf32")
    if kind == "recurrent":
        return recurrent_case(d)
    if kind == "scan":
        return scan_case(d)
    if kind == "step":
        return step_case(d)
    if kind in ("attention", "quadratic"):
        return attention_case(d, kind == "quadratic")
    if kind == "linear-chunked":
        return linear_chunked_case(d)
    if kind == "feature-map":
        return feature_map_case(d)
    if kind == "scan-grad":
        return scan_grad_case(d)
    if kind == "attention-grad":
        return attention_grad_case(d)
    if kind == "token-major":
        return token_major_case(d)
    return linear_case(d)


def main():
    parser = argparse.ArgumentParser()
    add_fuzz_arguments(parser, KINDS)
    g.add_run_arguments(parser)
    opts = parser.parse_args()

    def run(i, seed, d, kind):
        case, long_sequence = draw_case(kind, d)
        case.name += "__" + "_".join(o.replace("=", "") for o in case.gpu_options) \
            + f"__seed{seed}_{i}"
        return g.check(case, long_sequence, opts)

    return fuzz(parser, opts, KINDS, run)


if __name__ == "__main__":
    sys.exit(main())
