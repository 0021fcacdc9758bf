"""Random numerical tests of the CPU backend.

Draws cases of every form the CPU pipeline lowers -- the fused scan and
non-causal kernels, generic scans, steps and chains of steps, attention
(causal and not, every feature map), the quadratic form, importer IR in
plain linalg, feature maps alone, the gradients of scans -- with random sizes (empty ones rarely,
1, off the vector width and the token block, sequences split over threads),
dynamic dimensions, 16-bit, f32 and f64 data, initial states and
directions, and random options of linattn-lower-to-cpu (tokens-per-block,
column-vectors, vector-width, num-threads, kernels, fuse-elementwise,
chunk-size, an AVX2 target, rewrite-forms) or random chains of the rewrite
passes before the lowering. Each case runs through linattn-run with fresh
data and is checked against its float64 reference within the tolerances of
cpu_cases.py. Ill-conditioned draws are left out: identity features with a
normalizer (denominators near zero); cpu_cases.py has fixed cases of them.
The quadratic form's negative scales can bring a denominator near zero too:
its errors are measured against what the division magnifies
(reference.apply_scores_magnitude).

Every case is reproducible from the seed and its index, which the output
names. Without --seed a fresh one is drawn and printed.

Usage: cpu_fuzz.py --count=N --tools=DIR --workdir=DIR [--seed=S [--index=I]]
                   [--kinds=kernel,linear,...]
"""

import argparse
import os
import random
import shutil
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cpu_cases as cc  # noqa: E402

EPS = cc.EPS
KINDS = ("kernel", "linear", "scan", "step", "chain", "attention", "quadratic",
         "linalg", "feature_map", "scan_grad", "attention_grad")


# The chance of an empty dimension where a draw allows one.
ZERO_SIZE = 0.03


class Draw:
    """The random choices of one case."""

    def __init__(self, rnd):
        self.rnd = rnd

    def pick(self, *choices):
        return self.rnd.choice(choices)

    def chance(self, p):
        return self.rnd.random() < p

    def size(self, *choices):
        """One of `choices`, 0 (an empty dimension) only with the chance
        ZERO_SIZE: an empty input tests a few code paths, and drawn as often
        as the others it left about a third of the cases with nothing to
        compute."""
        if 0 in choices and self.chance(ZERO_SIZE):
            return 0
        return self.pick(*(c for c in choices if c != 0))

    def batch(self):
        if self.chance(ZERO_SIZE):
            return (0,)
        return self.pick((), (1,), (2,), (3,), (1, 2), (2, 1))

    def dims(self, rank):
        """Dynamic dimensions among the first `rank`."""
        return tuple(i for i in range(rank) if self.chance(0.35))

    def options(self, *groups):
        """One choice ("" for none) from each group of options."""
        return [o for o in (self.pick("", *group) for group in groups) if o]


# Options of linattn-lower-to-cpu that change the code but not the result.
# The register tile: tokens-per-block × column-vectors is at most 16.
KERNEL_OPTIONS = (
    tuple(f"tokens-per-block={t}" + (f" column-vectors={c}" if c else "")
          for t in (1, 2, 3, 5, 8) for c in (0, 1, 2, 3, 4) if t * c <= 16),
    ("column-vectors=1", "column-vectors=2", "column-vectors=3",
     "column-vectors=4"),
    ("vector-width=4", "vector-width=8", "vector-width=16"),
    ("num-threads=1", "num-threads=3", "num-threads=5"),
    ("target-cpu=x86-64-v3 target-features=+avx2,+fma,-avx512f",),
    ("fuse-elementwise=false",),
)
# Lowerings other than the kernels: the generic loops, or the chunkwise form
# (rare: its generic matrix products are slow on long sequences).
GENERIC_OPTIONS = (("kernels=false",), ("chunk-size=3", "chunk-size=8",
                                        "chunk-size=33"))


def cpu_options(d, *groups):
    """Kernel options and, sometimes, another lowering."""
    tile, columns, *rest = KERNEL_OPTIONS
    # The tile's two sizes together, or the columns alone.
    options = d.options(tile if d.chance(0.7) else columns, *rest, *groups)
    if d.chance(0.2):
        options += d.options(GENERIC_OPTIONS[0])
    if d.chance(0.1):
        options += d.options(GENERIC_OPTIONS[1])
    return options


def kernel_case(d):
    """A fused feature map and a scan: the scan kernels."""
    dtype = d.pick("f32", "f32", "bf16", "f16", "f64")
    state = "f64" if dtype == "f64" or d.chance(0.1) else "f32"
    kind = d.pick("elu", "relu", "identity")
    eps = None if kind == "identity" or d.chance(0.4) else EPS
    batch = d.batch()
    n = d.size(0, 1, 2, 7, 16, 17, 33, 100, 300, 1000, 4097)
    dyn = d.dims(len(batch) + 1)
    case = cc.kernel_case(
        kind, batch, n, d.pick(1, 3, 4, 8, 16, 17, 20, 32, 64, 100, 128),
        d.size(0, 1, 5, 8, 15, 16, 17, 33, 64, 100), eps, reverse=d.chance(0.5),
        init=d.chance(0.5), dyn=dyn, dtype=dtype, state=state,
        dyn_dv=d.chance(0.25),
        # Inputs down to -100: elu's exp where it underflows (not for 16-bit
        # outputs, which would underflow with it).
        lo=d.pick(-1.0, -1.0, -8.0, -8.0 if dtype in ("bf16", "f16") else -100.0)
        if kind == "elu" else -1.0)
    return case, cpu_options(d)


def linear_case(d):
    """A fused feature map, kv_summary and query_readout: the non-causal
    kernels."""
    dtype = d.pick("f32", "f32", "bf16", "f16", "f64")
    kind = d.pick("elu", "relu", "identity")
    eps = None if kind == "identity" or d.chance(0.4) else EPS
    batch = d.batch()
    case = cc.linear_kernel_case(
        kind, batch, d.size(0, 1, 7, 33, 100, 1000), d.size(0, 1, 9, 37, 300, 1200),
        d.pick(1, 4, 16, 20, 64, 128), d.size(0, 1, 8, 17, 33, 64),
        eps, dyn=d.dims(len(batch) + 1), dtype=dtype, dyn_dv=d.chance(0.25))
    return case, cpu_options(d)


def scan_case(d):
    """A scan of given features (a chunk_size attribute sometimes)."""
    batch = d.batch()
    n = d.size(0, 1, 2, 7, 33, 100, 300)
    case = cc.scan_case(batch, n, d.pick(1, 4, 7, 16, 32, 64, 100),
                        d.size(0, 1, 5, 8, 33, 64), d.chance(0.5), d.chance(0.5),
                        EPS if d.chance(0.6) else None, dyn=d.dims(len(batch) + 1),
                        chunk=d.pick(None, None, None, 1, 4, 16))
    return case, cpu_options(d)


def scan_grad_case(d):
    """The gradients of a scan: three scans (four, normalized) with the
    operands' roles exchanged, and elementwise ops between them; from an
    initial state (and with the final state's gradients) in some."""
    batch = d.batch()
    args = (batch, d.size(0, 1, 2, 7, 33, 100, 300),
            d.pick(1, 4, 7, 16, 32, 64), d.size(0, 1, 5, 8, 33, 64),
            d.chance(0.5), EPS if d.chance(0.6) else None)
    kwargs = dict(dyn=d.dims(len(batch) + 1),
                  dtype=d.pick("f32", "f32", "f64"))
    if d.chance(0.4):
        case = cc.scan_grad_states_case(*args, final=d.chance(0.5), **kwargs)
    else:
        case = cc.scan_grad_case(*args, **kwargs)
    return case, cpu_options(d)


def attention_grad_case(d):
    """The gradients of linattn.attention: the feature maps, a scan_grad
    (causal) or the linear form's summaries and readouts, the chain rule
    through the map."""
    kind = d.pick("elu", "elu", "relu", "identity", "poly2", "favor")
    batch = d.batch()
    causal = d.chance(0.5)
    n = d.size(0, 1, 2, 7, 31, 65, 130)
    head = d.pick(1, 3, 4) if kind == "poly2" else d.pick(1, 4, 16, 32, 64)
    case = cc.attention_grad_case(
        kind, batch, n, n if causal else d.size(0, 1, 3, 7, 64, 77), head,
        d.size(0, 1, 5, 8, 33), causal,
        # Signed identity features can bring a denominator near zero.
        EPS if kind != "identity" and d.chance(0.6) else None,
        dyn=d.dims(len(batch) + 2), fmax=d.pick(1, 8, 24) if kind == "favor" else None,
        dtype=d.pick("f32", "f32", "f64"))
    return case, cpu_options(d)


def step_case(d):
    batch = d.batch()
    case = cc.step_case(batch, d.pick(1, 2, 3, 7, 16, 36, 64, 100, 128),
                        d.pick(1, 5, 8, 31, 33, 100, 128),
                        EPS if d.chance(0.6) else None, dyn=d.dims(len(batch)))
    return case, cpu_options(d)


def chain_case(d):
    # Several outputs per step: the error is relative to the largest, and a
    # single value may cancel to near zero.
    batch = d.pick((2,), (2, 3))
    case = cc.step_chain_case(batch, d.pick(1, 2, 3, 5), d.pick(1, 4, 8, 17),
                              d.pick(5, 9), EPS if d.chance(0.6) else None)
    return case, cpu_options(d)


def attention_case(d):
    """linattn.attention, through the pipeline's rewrites, as written, or
    through a random chain of the rewrite passes."""
    kind = d.pick("elu", "elu", "relu", "identity", "poly2", "favor")
    batch = d.batch()
    causal = d.chance(0.5)
    n = d.pick(1, 2, 7, 31, 65, 130)
    head = d.pick(1, 3, 4, 8) if kind == "poly2" else d.pick(1, 4, 16, 32, 64, 100)
    dtype = "f64" if d.chance(0.15) else "f32"
    case = cc.attention_case(
        kind, batch, n, n if causal else d.pick(1, 3, 7, 64, 77), head,
        d.pick(1, 5, 8, 33, 64), causal,
        EPS if kind != "identity" and d.chance(0.7) else None,
        dyn=d.dims(len(batch) + 2), fmax=d.pick(1, 8, 24) if kind == "favor" else None,
        dtype=dtype)
    if d.chance(0.3):
        return case, passes_before(d, causal)
    return case, cpu_options(d, ("rewrite-forms=false",))


def passes_before(d, causal):
    """A chain of rewrite passes (then the lowering as written): the forms
    each pass produces, lowered by the pipeline's other paths."""
    chain = ["linattn-decompose"]
    if causal:
        chain.append("linattn-masked-to-scan")
        then = d.pick("", "chunk", "steps")
        if then == "chunk":
            chain.append(f"linattn-chunk-scan{{chunk-size={d.pick(1, 3, 16)}}}")
        elif then == "steps":
            chain.append("linattn-scan-to-steps")
    elif d.chance(0.7):
        chain.append("linattn-reassociate{mode=always}")
    return ["pass:" + p for p in chain] + d.options(("kernels=false",))


def quadratic_case(d):
    """Non-causal scores and apply_scores on fused features, which the
    kernel pass may reassociate."""
    kind = d.pick("elu", "relu", "identity")
    case = cc.quadratic_kernel_case(
        kind, d.pick((), (2,), (2, 3)), d.pick(1, 5, 16, 33), d.pick(1, 4, 9, 40),
        d.pick(4, 16, 20, 64), d.pick(1, 8, 19, 64), d.pick(1.0, 0.125, -0.5, 2.0),
        d.pick(None, EPS, 0.5) if kind != "identity" else None,
        dtype=d.pick("f32", "f32", "bf16", "f64"))
    return case, cpu_options(d)


def linalg_case(d):
    """Attention in plain linalg, as an importer writes it (the quadratic
    form, causal or not, or the linear form), on heads-first tensors or on
    token-major [B, N, H, D] ones: raised by the pipeline, or lowered as
    written."""
    b, n, m = d.pick(1, 2, 3), d.pick(1, 2, 7, 33), d.pick(1, 5, 40)
    f, dv = d.pick(1, 4, 8, 16), d.pick(1, 3, 8)
    form = d.pick("quadratic", "causal", "linear", "token-major quadratic",
                  "token-major causal", "token-major linear")
    if form == "linear":
        case = cc.linalg_linear_form_case(b, n, m, f, dv, d.chance(0.7))
    elif form == "token-major linear":
        case = cc.token_major_linear_form_case(b, n, m, d.pick(1, 2, 3), f, dv)
    elif form.startswith("token-major"):
        case = cc.token_major_attention_case(b, n, d.pick(1, 2, 3), f, dv,
                                             form.endswith("causal"))
    else:
        causal = form == "causal"
        case = cc.linalg_attention_case(b, n, n if causal else m, f, dv, causal)
    return case, cpu_options(d, ("rewrite-forms=false",))


def draw_feature_map(d):
    """A feature map alone, its features the result: favor and poly2, which
    have kernels of their own, and the elementwise maps."""
    kind = d.pick("favor", "favor", "poly2", "poly2", "elu", "relu", "identity")
    head = d.size(0, 1, 3, 8, 17) if kind == "poly2" else d.size(0, 1, 7, 16, 33, 64)
    shape = d.pick((), (1,), (5,), (2, 3), (2, 1, 9), (1, 2, 33)) + (head,)
    m = d.pick(1, 5, 16, 17, 40, 64) if kind == "favor" else None
    return cc.feature_map_case(kind, shape, dyn=d.dims(len(shape)), m=m,
                               pdyn=d.dims(2) if kind == "favor" else ())


def feature_map_case(d):
    return draw_feature_map(d), cpu_options(d)


DRAW = {"kernel": kernel_case, "linear": linear_case, "scan": scan_case,
        "step": step_case, "chain": chain_case, "attention": attention_case,
        "quadratic": quadratic_case, "linalg": linalg_case,
        "feature_map": feature_map_case, "scan_grad": scan_grad_case,
        "attention_grad": attention_grad_case}


def pipeline(options):
    """linattn-run's --pipeline for `options`: the passes named "pass:P" in
    order, then linattn-lower-to-cpu with the rest (as written after passes,
    which have done the rewrites)."""
    passes = [o[len("pass:"):] for o in options if o.startswith("pass:")]
    rest = [o for o in options if not o.startswith("pass:")]
    if passes:
        rest = ["rewrite-forms=false"] + [o for o in rest if o != "rewrite-forms=false"]
    if not passes and not rest:
        return None
    return ",".join(passes + [f"linattn-lower-to-cpu{{{' '.join(rest)}}}"])


def label(options):
    text = "_".join(o.replace("pass:", "").replace("linattn-", "").replace(" ", "_")
                    for o in options)
    return "".join(c if c.isalnum() or c in "-_" else "" for c in text)[:120]


def add_fuzz_arguments(parser, kinds):
    """The options every fuzzer takes: how many cases, the seed, the kinds
    of case drawn and one case to replay."""
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--seed", type=int, help="default: a fresh one")
    parser.add_argument("--kinds", default=",".join(kinds))
    parser.add_argument("--index", type=int,
                        help="run only case INDEX of the seed (to replay one)")


def fuzz(parser, opts, kinds, run):
    """Draws the cases `opts` asks for: `run(i, seed, draw, kind)` checks
    case i and returns whether it passed. Prints the seed first and the
    count last; returns the exit status."""
    chosen = opts.kinds.split(",")
    unknown = set(chosen) - set(kinds)
    if unknown:
        parser.error(f"--kinds: no such kind: {', '.join(sorted(unknown))}")
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)
    print(f"fuzz: seed {seed}", flush=True)
    indices = range(opts.count) if opts.index is None else [opts.index]
    failures = 0
    for i in indices:
        # The builders seed their data from the case's name: fresh data for
        # every seed and index.
        cc.rng_for = lambda name, key=f"{seed}/{i}/": cc.np.random.default_rng(
            zlib.crc32((key + name).encode()))
        d = Draw(random.Random(f"{seed}/{i}"))
        failures += not run(i, seed, d, d.pick(*chosen))
    print(f"fuzz: {len(indices) - failures} of {len(indices)} cases passed "
          f"(seed {seed})")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    add_fuzz_arguments(parser, KINDS)
    parser.add_argument("--tools", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--keep", action="store_true",
                        help="keep the files of passing cases too")
    opts = parser.parse_args()

    def run(i, seed, d, kind):
        case, options = DRAW[kind](d)
        case.pipeline = pipeline(options)
        case.name += "__" + label(options) + f"__seed{seed}_{i}"
        ok, message = cc.run_case(case, opts.tools, opts.workdir)
        print(f"{'PASS' if ok else 'FAIL'} {case.name}: {message}"
              + ("" if ok else f"\n  pipeline: {case.pipeline}"), flush=True)
        if ok and not opts.keep:
            shutil.rmtree(os.path.join(opts.workdir, case.name), ignore_errors=True)
        return ok

    return fuzz(parser, opts, KINDS, run)


if __name__ == "__main__":
    sys.exit(main())
