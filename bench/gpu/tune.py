#!/usr/bin/env python3
"""Tunes the chunked and recurrent scans' options on one GPU.

Times the benchmark's function (bench.py: O of the causal scan of elu+1
features, bf16, compiled ahead of time by aot.py; with --form=noncausal
its non-causal function, O = φ(Q)(φ(K)ᵀV) on the linear form's tensor-core
kernels, on bench.py's non-causal shapes) for every combination of the
options that shape the chunked kernels:

  chunk-size                 the largest chunk (16, 32 or 64 tokens)
  async-copies               the next chunk copied by cp.async during this one
  sequence-parallel-blocks   the grid the sequence-parallel variant aims for
                             (0: batch-parallel always)
  value-tile                 the widest value tile (32, 64 or 128 columns
                             per block: more blocks, each computing its
                             chunks' scores, or fewer; 128 for D = 128 only)
  min-blocks-per-sm          registers for this many blocks per SM in the
                             chunk loops (.minnctapersm; 0: ptxas's choice)
  prefetch-chunks            staging prefetches the rows of the chunk this
                             many ahead into L2 (0: none; synchronous
                             staging only, so not combined with async-copies)
  wgmma                      the scores and (bf16) the state update by
                             sm_90a's wgmma (sm_90 only: elsewhere the same
                             kernels as without; left to the pipeline's
                             default, true, unless --wgmma names values)
  scores-in-registers        the masked scores kept in registers as P·V's A
                             fragments where one warp per row tile takes
                             all keys (left to the pipeline's default,
                             false, unless --scores-in-registers names
                             values)
  wgmma-outputs              the outputs P·V + φ(Q)S by wgmma too where the
                             scores and state update are (left to the
                             pipeline's default, false, unless
                             --wgmma-outputs names values)
  unroll-staging             a thread's groups of a chunk copied and mapped
                             without a loop over them (left to the
                             pipeline's default, false, unless
                             --unroll-staging names values)
  narrow-offset-limit        the chunk loops' 32-bit offsets below this
                             (0: 64-bit offsets always; left to the
                             pipeline's default, 0, unless
                             --narrow-offset-limits names values)
  row-tile-warps             warps per 16-row tile of a chunk (1 or 2, each
                             with its share of the keys and value columns;
                             left to the pipeline's default, the fewest
                             that fit, unless --row-tile-warps names values)
  wgmma-chunks               on sm_90, chunks of 64 with wgmma where the
                             portable shared memory leaves them smaller
                             (16-bit data at F = 128; left to the
                             pipeline's default, auto: the unnormalized
                             bf16 loops, unless --wgmma-chunks names
                             values, 0 false and 1 true)
  copy-stages                slots per staged tile with async copies (1 to
                             4: that many chunks minus one in flight, 1 a
                             chunk at a time with the next prefetched into
                             L2; as many as fit 96 KiB; left to the
                             pipeline's default, 2, unless --copy-stages
                             names values)
  states-copy-stages         the same for the segment states (left to the
                             pipeline's default, 2, unless
                             --states-copy-stages names values)
  bulk-copies                on sm_90, whole chunks by bulk copies on
                             mbarriers instead of cp.async (left to the
                             pipeline's default, false, unless
                             --bulk-copies names values)
  small-grid-value-tile      the value tile of a chunk loop whose grid of
                             such tiles stays within one block per SM
                             (0: value-tile's; left to the pipeline's
                             default, 32, unless --small-grid-value-tiles
                             names values)

on shapes where the choice differs: many and few blocks, F = 64 and 128.
With --form=recurrent it times the strict-fp32 recurrent scan
(scan-kernel=recurrent, f32 inputs, errors within 1e-4) over its own
options instead:

  scan-tile                  threads per block (128, 256 or 512)
  scan-feature-lanes         lanes per value column (1, 2 or 4), each with
                             its share of the features
  scan-thread-columns        adjacent value columns per thread (2 or 4):
                             a block covers scan-tile / scan-feature-lanes
                             columns, so at D = 128 the default's four
                             blocks a head, each staging and mapping φ(Q)
                             and φ(K), become one at 512 threads or one
                             lane per column
  sequence-parallel-blocks   as above (0 or 264), in blocks of 128 threads
                             (blocks of 512 aim at one per SM)
  min-segment-tokens         the shortest segment (left to the pipeline's
                             default, 1024, unless --min-segment-tokens
                             names values)
  async-copies               the next block of tokens copied by cp.async
                             (left to the pipeline's default, true, unless
                             --async-copies names values)

Combinations that compile to the same object file (chunk-size 64 at
F = 128 is chunk-size 32, a split rule a grid already passes changes
nothing) are timed once, and the pipeline's defaults (no options) are
compiled too, so the report names the default by what it compiles to, not
by what this script believes the defaults are. Every output is checked
against the same float32 reference as bench.py's.

Reported: per shape every distinct kernel with its ms (the lowest over
--rounds rounds of the median of --repeat calls), the fraction of the HBM
floor, the ratio to the shape's best and the error; per combination the
geometric mean over the shapes of its ms over each shape's best, and the
combination that minimizes it: the tuned default. Results go to
bench/results/<device>-<date>-tune.{json,md} (-tune-noncausal with
--form=noncausal, -tune-recurrent with --form=recurrent). An argument of
another form's options is an error.

  bench/gpu/tune.py                    on the GPU (torch, the CUDA runtime)
  bench/gpu/tune.py --dry-run          the plan; no GPU, no torch
  bench/gpu/tune.py --emulate --runtime=build/lib/liblinattn_gpu_emulator.so
                                       the same machinery on the GPU emulator
                                       (f16, f32 for the recurrent form,
                                       small shapes; times are the
                                       emulator's and mean nothing)
"""

import argparse
import concurrent.futures
import hashlib
import itertools
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import aot  # noqa: E402
from bench import NONCAUSAL, prefill_bytes, case_name, results_stem  # noqa: E402

# (B, H, T, D). F = 64: 128 blocks (split into 3 segments by default), 512
# and 64; F = 128: 256 and 192 blocks (batch-parallel by default), 32.
SHAPES = [(8, 16, 16384, 64), (8, 16, 4096, 64), (8, 8, 1024, 64),
          (8, 16, 16384, 128), (2, 16, 16384, 128), (1, 96, 8192, 128)]


class Axis(namedtuple("Axis", "option arg values short help")):
    """One option of a form's grid: its linattn-lower-to-nvvm name, the
    argument that lists the values to try (its dest), the default values
    (None: the option left out, the pipeline's default), the label of a
    value (a format with {}, or a (false, true) pair for booleans) and the
    argument's help."""

    def boolean(self):
        return isinstance(self.short, tuple)

    def text(self, value):
        """The option's value as the pipeline reads it."""
        if self.boolean():
            return "true" if value else "false"
        return str(value)

    def label(self, value):
        if self.boolean():
            return self.short[1] if value else self.short[0]
        return self.short.format(value)


def _left_out(what):
    return (f"{what} (default: the pipeline's, the option left out)")


# The chunked kernels' options (--form=causal and noncausal). Staging's L2
# prefetch is timed by bench.py's "L2 prefetch" row; the default grid leaves
# it out (--prefetch-chunks=0,1 adds it). The options after it are left to
# the pipeline unless their argument names values: --wgmma=0,1 times
# mma.sync against wgmma, --narrow-offset-limits=0,2147483648 32-bit
# offsets against 64-bit ones, --copy-stages=2,3 three slots against two,
# --small-grid-value-tiles=0,32 small grids' tiles of value-tile against 32.
CHUNKED_AXES = (
    Axis("chunk-size", "chunk_sizes", (16, 32, 64), "C{}",
         "chunk-size values to try"),
    Axis("async-copies", "async_copies", (False, True), ("sync", "async"),
         "async-copies values to try"),
    Axis("sequence-parallel-blocks", "sequence_parallel_blocks",
         (0, 132, 264, 528), "spb{}",
         "sequence-parallel-blocks values to try"),
    Axis("value-tile", "value_tiles", (32, 64, 128), "DT{}",
         "value-tile values to try"),
    Axis("min-blocks-per-sm", "min_blocks_per_sm", (0, 4), "M{}",
         "min-blocks-per-sm values to try"),
    Axis("prefetch-chunks", "prefetch_chunks", (0,), "P{}",
         "prefetch-chunks values to try"),
    Axis("wgmma", "wgmma", (None,), ("mma.sync", "wgmma"),
         _left_out("wgmma values to try")),
    Axis("narrow-offset-limit", "narrow_offset_limits", (None,), "N{}",
         _left_out("narrow-offset-limit values to try")),
    Axis("scores-in-registers", "scores_in_registers", (None,), ("PS", "PR"),
         _left_out("scores-in-registers values to try")),
    Axis("wgmma-outputs", "wgmma_outputs", (None,), ("OM", "OW"),
         _left_out("wgmma-outputs values to try")),
    Axis("unroll-staging", "unroll_staging", (None,), ("GL", "GU"),
         _left_out("unroll-staging values to try")),
    Axis("row-tile-warps", "row_tile_warps", (None,), "R{}",
         _left_out("row-tile-warps values to try, 0, 1 or 2")),
    Axis("wgmma-chunks", "wgmma_chunks", (None,), ("W", "W64"),
         _left_out("wgmma-chunks values to try")),
    Axis("copy-stages", "copy_stages", (None,), "S{}",
         _left_out("copy-stages values to try, 1 to 4")),
    Axis("states-copy-stages", "states_copy_stages", (None,), "K{}",
         _left_out("states-copy-stages values to try, 1 to 4")),
    Axis("bulk-copies", "bulk_copies", (None,), ("cp.async", "bulk"),
         _left_out("bulk-copies values to try")),
    Axis("small-grid-value-tile", "small_grid_value_tiles", (None,), "G{}",
         _left_out("small-grid-value-tile values to try, 0, 8, 16, 32 "
                   "or 64")),
)

# The strict-fp32 recurrent scan's options (--form=recurrent): how many
# value columns a block covers (scan-tile threads, each scan-feature-lanes
# × scan-thread-columns lanes sharing a group of scan-thread-columns
# columns), and its segments. At D = 128 the default's blocks of 128
# threads cover 32 columns, so four blocks of a head each stage and map
# φ(Q), φ(K); blocks of 512 threads, or 32 columns a warp, make it one.
RECURRENT_AXES = (
    Axis("scan-tile", "scan_tiles", (128, 256, 512), "T{}",
         "scan-tile values to try"),
    Axis("scan-feature-lanes", "scan_feature_lanes", (1, 2, 4), "L{}",
         "scan-feature-lanes values to try"),
    Axis("scan-thread-columns", "scan_thread_columns", (2, 4), "TC{}",
         "scan-thread-columns values to try"),
    Axis("sequence-parallel-blocks", "sequence_parallel_blocks", (0, 264),
         "spb{}", "sequence-parallel-blocks values to try"),
    Axis("min-segment-tokens", "min_segment_tokens", (None,), "MS{}",
         _left_out("min-segment-tokens values to try")),
    Axis("async-copies", "async_copies", (None,), ("sync", "async"),
         _left_out("async-copies values to try")),
)

# What a form tunes: its axes, the options every combination takes, the
# element type of the inputs (on a GPU, emulated), the largest relative
# error against the reference that passes, and its report's title.
Form = namedtuple("Form", "axes fixed element emulated tolerance title "
                          "function suffix")
FORMS = {
    "causal": Form(CHUNKED_AXES, "", "bf16", "f16", (2.5e-2, 1e-2),
                   "chunked-scan", "O of the causal scan", ""),
    "noncausal": Form(CHUNKED_AXES, "", "bf16", "f16", (2.5e-2, 1e-2),
                      "linear-form",
                      "O = φ(Q)(φ(K)ᵀV) on the linear form's kernels",
                      "-noncausal"),
    "recurrent": Form(RECURRENT_AXES, "scan-kernel=recurrent", "f32", "f32",
                      (1e-4, 1e-4), "recurrent-scan",
                      "O of the causal scan, strict fp32", "-recurrent"),
}


class Config(tuple):
    """A combination: one value per axis of its form, in the axes' order."""

    def __new__(cls, form, values):
        self = super().__new__(cls, values)
        self.form = form
        return self

    @classmethod
    def load(cls, form, d):
        """The combination of a report's dict (asdict)."""
        return cls(form, [d.get(a.option) for a in form.axes])

    def asdict(self):
        return {a.option: v for a, v in zip(self.form.axes, self)}

    def get(self, option):
        return self.asdict().get(option)


def options(config):
    """The linattn-lower-to-nvvm options of a combination ('' for None, the
    pipeline's defaults)."""
    if config is None:
        return ""
    return " ".join(filter(None, [config.form.fixed] + [
        f"{a.option}={a.text(v)}" for a, v in zip(config.form.axes, config)
        if v is not None]))


def label(config):
    if config is None:
        return "defaults"
    return " ".join(a.label(v) for a, v in zip(config.form.axes, config)
                    if v is not None)


def int_list(text):
    return tuple(int(x) for x in text.split(",") if x)


def bool_list(text):
    values = {"0": False, "false": False, "1": True, "true": True}
    try:
        return tuple(values[x] for x in text.split(",") if x)
    except KeyError as e:
        raise argparse.ArgumentTypeError(f"not a boolean: {e.args[0]}") from None


def shape_list(text):
    shapes = []
    for name in text.split(","):
        parts = name.split("x")
        if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"not a shape BxHxTxD: {name}")
        shapes.append(tuple(int(p) for p in parts))
    return shapes


#===------------------------------------------------------------------------===#
# Compilation
#===------------------------------------------------------------------------===#

Kernel = namedtuple("Kernel", "library digest")


def causal(args):
    """Whether the tuned function is a causal scan (--form=causal or
    recurrent)."""
    return args.form != "noncausal"


def compile_all(args, workdir, shapes, configs, element):
    """{(shape, config): Kernel or the error's text} for every shape and
    combination, and for None (the form's fixed options, otherwise the
    defaults); compiled in parallel."""
    jobs = {}
    fixed = FORMS[args.form].fixed
    for shape in shapes:
        module = os.path.join(workdir, f"{case_name(shape)}.mlir")
        with open(module, "w") as f:
            build = aot.scan_module if causal(args) else aot.linear_module
            f.write(build(*shape, element))
        for i, config in enumerate([None] + configs):
            extra = "emulate=true" if args.emulate else ""
            jobs[(shape, config)] = (
                module, os.path.join(workdir, f"lib{case_name(shape)}_{i}.so"),
                " ".join(filter(None, [fixed if config is None else options(config),
                                       extra])))

    def build(job):
        module, library, opts = job
        try:
            aot.compile_library(args.tools, module, library, opts,
                                args.runtime if args.emulate else None)
        except RuntimeError as e:
            return str(e)
        with open(library + ".o", "rb") as f:
            return Kernel(library, hashlib.sha256(f.read()).hexdigest()[:12])

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        return dict(zip(jobs, pool.map(build, jobs.values())))


#===------------------------------------------------------------------------===#
# Where the kernels run
#===------------------------------------------------------------------------===#

class Gpu:
    """The GPU, through torch and bench.py's Bench (copy bandwidth, timing,
    the float32 reference, the call on a torch stream)."""

    def __init__(self, args):
        from bench import Bench
        self.bench = Bench(args)
        form = FORMS[args.form]
        self.element, self.tolerance = form.element, form.tolerance[0]
        self.causal = causal(args)
        self.name = self.bench.device_name
        self.copy_bw = self.bench.copy_bw
        self.extra = dict(launch_floor_ms=self.bench.launch_floor,
                          torch=self.bench.torch.__version__)

    def case(self, shape):
        q, k, v = self.bench.prefill_inputs(shape)
        ref = self.bench.reference(q, k, v, causal=self.causal)
        if self.element == "f32":
            q, k, v = (x.float() for x in (q, k, v))
        return [(q, k, v), ref]

    def measure(self, library, case):
        inputs, ref = case
        return self.bench.time_linattn(library, inputs, (ref,))

    def release(self, case):
        case.clear()
        self.bench.torch.cuda.empty_cache()


class Emulator:
    """The GPU emulator's runtime, numpy f16 inputs (f32 for the recurrent
    form), a float64 reference; the time is the wall clock of a call and
    means nothing."""
    name, copy_bw = "GPU emulator", None

    def __init__(self, args):
        import numpy as np
        self.np = np
        form = FORMS[args.form]
        self.element, self.tolerance = form.emulated, form.tolerance[1]
        self.dtype = np.float32 if self.element == "f32" else np.float16
        self.runtime = aot.EmulatorRuntime(args.runtime)
        self.repeat = args.repeat
        self.seed = args.seed
        self.causal = causal(args)
        self.extra = {}

    def case(self, shape):
        np = self.np
        rng = np.random.default_rng(self.seed)
        arrays = [np.ascontiguousarray(rng.uniform(-1, 1, shape).astype(self.dtype))
                  for _ in range(3)]
        buffers = [self.runtime.to_device(x) for x in arrays]
        return buffers, aot.reference(*arrays, causal=self.causal)

    def measure(self, library, case):
        buffers, ref = case
        out = self.np.empty(buffers[0].shape, self.dtype)
        result = self.runtime.to_device(out)
        call = aot.Function(library).bind(buffers, [result], self.runtime.stream)
        times = []
        for _ in range(self.repeat):
            start = time.perf_counter()
            call()
            self.runtime.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
        self.runtime.to_host(result, out)
        self.runtime.free(result)
        return aot.relative_error(out, ref), sorted(times)[len(times) // 2]

    def release(self, case):
        for buffer in case[0]:
            self.runtime.free(buffer)


#===------------------------------------------------------------------------===#
# Measurement
#===------------------------------------------------------------------------===#

def measure_shape(device, args, shape, configs, kernels):
    """The rows of one shape: one per distinct kernel (the combinations
    that compile to it in `configs`, or the error of those that failed)."""
    rows, by_digest = [], {}
    default = kernels[(shape, None)]
    for config in configs:
        kernel = kernels[(shape, config)]
        if isinstance(kernel, str):
            rows.append(dict(shape=case_name(shape), configs=[config.asdict()],
                             skipped=f"compile failed: {kernel[-300:]}"))
            continue
        if kernel.digest in by_digest:
            by_digest[kernel.digest]["configs"].append(config.asdict())
            continue
        row = dict(shape=case_name(shape), configs=[config.asdict()],
                   digest=kernel.digest, library=kernel.library,
                   default=not isinstance(default, str) and default.digest == kernel.digest)
        by_digest[kernel.digest] = row
        rows.append(row)
    if isinstance(default, str):
        rows.append(dict(shape=case_name(shape), configs=[], default=True,
                         skipped=f"the defaults failed to compile: {default[-300:]}"))
    elif not any(r.get("default") for r in rows):
        rows.append(dict(shape=case_name(shape), configs=[], default=True,
                         digest=default.digest, library=default.library))

    element = 4 if device.element == "f32" else 2
    floor = (prefill_bytes(*shape, element) / device.copy_bw
             if device.copy_bw else None)
    case = device.case(shape)
    try:
        for _ in range(args.rounds):
            for row in rows:
                if "skipped" in row:
                    continue
                try:
                    err, ms = device.measure(row["library"], case)
                except Exception as e:  # noqa: BLE001
                    row["skipped"] = f"{type(e).__name__}: {e}"[:300]
                    continue
                row["error"] = max(err, row.get("error", 0.0))
                row["ms"] = min(ms, row.get("ms", math.inf))
    finally:
        device.release(case)
    measured = [r for r in rows if "ms" in r and r["error"] <= device.tolerance]
    best = min((r["ms"] for r in measured), default=None)
    for row in rows:
        row.pop("library", None)
        if "ms" in row:
            row["correct"] = row["error"] <= device.tolerance
            row["floor_ms"] = floor
            row["floor_fraction"] = floor / row["ms"] if floor else None
            row["vs_best"] = row["ms"] / best if best and row["correct"] else None
    return rows


def ranking(form, rows, configs):
    """[(geometric mean over the shapes of ms / the shape's best, worst such
    ratio, config)] of the combinations measured correct on every shape,
    best first."""
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    ratio = {}
    for r in rows:
        for c in r["configs"]:
            ratio[(r["shape"], Config.load(form, c))] = r.get("vs_best")
    ranked = []
    for config in configs:
        ratios = [ratio.get((s, config)) for s in shapes]
        if shapes and all(ratios):
            mean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            ranked.append((mean, max(ratios), config))
    return sorted(ranked, key=lambda x: (x[0], x[1]))


#===------------------------------------------------------------------------===#
# Report
#===------------------------------------------------------------------------===#

def configs_text(form, row):
    names = [label(Config.load(form, c)) for c in row["configs"]]
    return ", ".join(names) if names else "(no combination of the grid)"


def percent(fraction):
    return "" if fraction is None else f"{100 * fraction:.0f}%"


def markdown(meta):
    rows, device = meta["results"], meta["device"]
    form = FORMS[meta.get("form", "causal")]
    configs = [Config.load(form, c) for c in meta["grid"]]
    # The axes the grid varies, by their labels.
    varied = [f"{a.option} ({'/'.join(a.short) if a.boolean() else a.short.format('')})"
              for i, a in enumerate(form.axes)
              if len({c[i] for c in configs}) > 1]
    lines = [f"# linattn {form.title} tuning on {device}", "",
             f"The benchmark's function ({form.function}, elu+1 features, "
             f"{meta['element']}) for every combination of "
             f"{', '.join(varied) or 'the options'}"
             f"{' (with ' + form.fixed + ')' if form.fixed else ''}; "
             f"combinations that compile to the same object file share a row. "
             f"Each time is the lowest over {meta['rounds']} rounds of the median "
             f"of {meta['repeat']} calls."]
    if meta.get("copy_bandwidth_bytes_per_ms"):
        lines[-1] += (f" Copy bandwidth (device-to-device, read + write): "
                      f"{meta['copy_bandwidth_bytes_per_ms'] / 1e6:.1f} GB/s.")
    else:
        lines[-1] += " Emulated: the times are the emulator's and say nothing of a GPU."
    lines.append("")

    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    defaults = {r["shape"]: r for r in rows if r.get("default")}
    lines += ["## Summary", "",
              "| shape | defaults ms | best | best ms | defaults / best | best of HBM floor |",
              "|---|---:|---|---:|---:|---:|"]
    for shape in shapes:
        d = defaults.get(shape, {})
        best = min((r for r in rows if r["shape"] == shape and r.get("vs_best")),
                   key=lambda r: r["ms"], default=None)
        cells = [shape,
                 (f"{d['ms']:.4f}{'' if d['correct'] else ' FAIL'}" if "ms" in d
                  else d.get("skipped", "not measured")[:60]),
                 configs_text(form, best) if best else "none correct",
                 f"{best['ms']:.4f}" if best else "",
                 f"{d['ms'] / best['ms']:.2f}x" if best and d.get("correct") else "",
                 percent(best.get("floor_fraction")) if best else ""]
        lines.append("| " + " | ".join(cells) + " |")

    # The combinations that compile to the defaults' code on every shape.
    as_defaults = None
    for d in defaults.values():
        mine = {Config.load(form, c) for c in d["configs"]}
        as_defaults = mine if as_defaults is None else as_defaults & mine
    as_defaults = as_defaults or set()
    ranked = ranking(form, rows, configs)
    lines += ["", "## Combinations over all shapes", "",
              "Geometric mean over the shapes of the combination's time over the "
              "shape's best, and the worst such ratio; only combinations measured "
              "correct on every shape.", "",
              "| combination | options | geometric mean | worst |", "|---|---|---:|---:|"]
    for mean, worst, config in ranked[:8] + [x for x in ranked[8:] if x[2] in as_defaults]:
        mark = " (the defaults' code)" if config in as_defaults else ""
        lines.append(f"| {label(config)}{mark} | `{options(config)}` | {mean:.3f} | "
                     f"{worst:.2f}x |")
    if ranked:
        lines += ["", f"Tuned default: `{options(ranked[0][2])}` (geometric mean "
                  f"{ranked[0][0]:.3f} of the best)."]
    else:
        lines += ["", "No combination was measured correct on every shape."]

    lines += ["", "## Per shape"]
    for shape in shapes:
        mine = sorted((r for r in rows if r["shape"] == shape),
                      key=lambda r: r.get("ms", math.inf))
        floor = next((r["floor_ms"] for r in mine if r.get("floor_ms")), None)
        lines += ["", f"### {shape}" + (f" (HBM floor {floor:.4f} ms)" if floor else ""), "",
                  "| combinations | ms | of floor | vs best | max rel. error | defaults |",
                  "|---|---:|---:|---:|---:|---|"]
        for r in mine:
            default = "yes" if r.get("default") else ""
            if "ms" not in r:
                lines.append(f"| {configs_text(form, r)} | skipped: {r.get('skipped', '')[:80]} "
                             f"| | | | {default} |")
                continue
            vs = r.get("vs_best")
            lines.append(
                f"| {configs_text(form, r)} | {r['ms']:.4f} | {percent(r.get('floor_fraction'))} | "
                f"{'' if vs is None else f'{vs:.2f}x'} | {r['error']:.1e}"
                f"{'' if r['correct'] else ' FAIL'} | {default} |")
    return "\n".join(lines) + "\n"


def write(base, meta):
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(markdown(meta))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan; needs no GPU, no torch")
    parser.add_argument("--emulate", action="store_true",
                        help="run on the GPU emulator (--runtime) instead of a GPU")
    parser.add_argument("--runtime", default=os.path.join(
        ROOT, "build", "lib", "liblinattn_gpu_emulator.so"),
        help="liblinattn_gpu_emulator.so, for --emulate")
    parser.add_argument("--tools", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    parser.add_argument("--name", default="", help="results file name "
                        "(default: <device>-<date>-tune)")
    parser.add_argument("--form", choices=sorted(FORMS), default="causal",
                        help="the causal scan's chunked kernels, the "
                             "non-causal linear form, or the strict-fp32 "
                             "recurrent scan")
    parser.add_argument("--shapes", type=shape_list, default=None,
                        help="comma-separated BxHxTxD (default: the form's)")
    # Each form's axes, an argument each (their defaults are the form's).
    seen = set()
    for axis in CHUNKED_AXES + RECURRENT_AXES:
        if axis.arg in seen:
            continue
        seen.add(axis.arg)
        parser.add_argument("--" + axis.arg.replace("_", "-"),
                            dest=axis.arg, default=None,
                            type=bool_list if axis.boolean() else int_list,
                            help=axis.help)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2,
                        help="times every kernel once per round, in turn")
    parser.add_argument("--seed", type=int, default=5, help="inputs (--emulate)")
    parser.add_argument("--budget-s", type=float, default=0,
                        help="start no shape after this many seconds; 0: no limit")
    parser.add_argument("--workdir", default="",
                        help="keep the modules and libraries here (default: a "
                             "temporary directory, removed)")
    args = parser.parse_args()
    form = FORMS[args.form]
    if args.shapes is None:
        args.shapes = SHAPES if causal(args) else NONCAUSAL
    if args.repeat < 1 or args.rounds < 1:
        parser.error("--repeat and --rounds must be positive")
    mine = {a.arg for a in form.axes}
    foreign = sorted("--" + a.arg.replace("_", "-")
                     for a in CHUNKED_AXES + RECURRENT_AXES
                     if a.arg not in mine and getattr(args, a.arg) is not None)
    if foreign:
        parser.error(f"the {args.form} form has no {', '.join(foreign)}")
    grid = [a.values if getattr(args, a.arg) is None else getattr(args, a.arg)
            for a in form.axes]
    configs = [Config(form, c) for c in itertools.product(*grid)]
    # Async copies leave nothing to prefetch (the option is ignored).
    configs = [c for c in configs
               if not (c.get("async-copies") and c.get("prefetch-chunks"))]
    if not configs:
        parser.error("the grid is empty")

    if args.dry_run:
        print(f"tuning plan (dry run: nothing is measured), {args.form} form")
        print(f"{len(configs)} combinations, {len(args.shapes)} shapes, "
              f"{len(args.shapes) * (len(configs) + 1)} compilations "
              f"(the defaults included)")
        for shape in args.shapes:
            b, h, t, d = shape
            element = 4 if form.element == "f32" else 2
            print(f"shape {case_name(shape)}: compulsory bytes "
                  f"{prefill_bytes(b, h, t, d, element) / 2**20:.0f} MiB")
        for config in [None] + configs:
            print("  " + " ".join(aot.compile_command(
                args.tools, "<shape>.mlir", "<lib>.so",
                form.fixed if config is None else options(config))))
        return 0

    device = (Emulator if args.emulate else Gpu)(args)
    workdir = args.workdir or tempfile.mkdtemp(prefix="linattn-tune-")
    os.makedirs(workdir, exist_ok=True)
    try:
        start = time.time()
        kernels = compile_all(args, workdir, args.shapes, configs, device.element)
        print(f"compiled {len(kernels)} libraries in {time.time() - start:.0f} s", flush=True)
        meta = dict(device=device.name, element=device.element, form=args.form,
                    copy_bandwidth_bytes_per_ms=device.copy_bw, repeat=args.repeat,
                    rounds=args.rounds, grid=[c.asdict() for c in configs],
                    results=[], **device.extra)
        os.makedirs(args.out, exist_ok=True)
        base = os.path.join(args.out, args.name or "{}-tune{}".format(
            results_stem(device.name), form.suffix))
        start = time.time()
        for shape in args.shapes:
            if args.budget_s and time.time() - start > args.budget_s:
                meta["results"].append(dict(
                    shape=case_name(shape), configs=[],
                    skipped=f"not started: --budget-s={args.budget_s:g} was spent"))
                continue
            rows = measure_shape(device, args, shape, configs, kernels)
            for row in rows:
                print(json.dumps(row), flush=True)
            meta["results"] += rows
            write(base, meta)
        write(base, meta)
        print(f"wrote {base}.json and {base}.md")
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
