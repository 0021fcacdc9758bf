#!/usr/bin/env python3
"""Tunes the chunked scan's options on one GPU.

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
                             pipeline's default, false, unless
                             --wgmma-chunks names values)
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
--form=noncausal).

  bench/gpu/tune.py                    on the GPU (torch, the CUDA runtime)
  bench/gpu/tune.py --dry-run          the plan; no GPU, no torch
  bench/gpu/tune.py --emulate --runtime=build/lib/liblinattn_gpu_emulator.so
                                       the same machinery on the GPU emulator
                                       (f16, small shapes; times are the
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
CHUNK_SIZES = (16, 32, 64)
ASYNC_COPIES = (False, True)
SEQUENCE_PARALLEL_BLOCKS = (0, 132, 264, 528)
VALUE_TILES = (32, 64, 128)
MIN_BLOCKS_PER_SM = (0, 4)
# Staging's L2 prefetch is timed by bench.py's "L2 prefetch" row; the
# default grid leaves it out (--prefetch-chunks=0,1 adds it).
PREFETCH_CHUNKS = (0,)
# wgmma (sm_90): the pipeline's default (None: the option left out);
# --wgmma=0,1 times mma.sync against it.
WGMMA = (None,)
# The chunk loops' offsets: the pipeline's default, 64-bit (None: the option
# left out); --narrow-offset-limits=0,2147483648 times 32-bit ones against
# them.
NARROW_OFFSET_LIMITS = (None,)
# The scores in registers: the pipeline's default (None: the option left
# out); --scores-in-registers=0,1 times them against the shared tile.
SCORES_IN_REGISTERS = (None,)
# Warps per row tile: the pipeline's default (None: the option left out);
# --row-tile-warps=0,2 times two warps a row tile against the fewest.
ROW_TILE_WARPS = (None,)
# Chunks of 64 for wgmma at F = 128: the pipeline's default (None: the
# option left out); --wgmma-chunks=0,1 times them against chunks of 32.
WGMMA_CHUNKS = (None,)
# Slots per staged tile with async copies: the pipeline's default (None: the
# option left out); --copy-stages=2,3 times three against two.
COPY_STAGES = (None,)
# The same for the segment states: --states-copy-stages=2,4.
STATES_COPY_STAGES = (None,)
# Bulk copies (sm_90): the pipeline's default (None: the option left out);
# --bulk-copies=0,1 times them against cp.async.
BULK_COPIES = (None,)
# Small grids' value tiles: the pipeline's default (None: the option left
# out); --small-grid-value-tiles=0,32 times tiles of value-tile against 32.
SMALL_GRID_VALUE_TILES = (None,)

Config = namedtuple("Config",
                    "chunk_size async_copies sequence_parallel_blocks value_tile "
                    "min_blocks_per_sm prefetch_chunks wgmma narrow_offset_limit "
                    "scores_in_registers row_tile_warps wgmma_chunks "
                    "copy_stages states_copy_stages bulk_copies "
                    "small_grid_value_tile",
                    defaults=(64, 0, 0, None, None, None, None, None, None,
                              None, None, None))


def options(config):
    """The linattn-lower-to-nvvm options of a combination ('' for None, the
    pipeline's defaults)."""
    if config is None:
        return ""
    return (f"chunk-size={config.chunk_size} "
            f"async-copies={'true' if config.async_copies else 'false'} "
            f"sequence-parallel-blocks={config.sequence_parallel_blocks} "
            f"value-tile={config.value_tile} "
            f"min-blocks-per-sm={config.min_blocks_per_sm} "
            f"prefetch-chunks={config.prefetch_chunks}" +
            ("" if config.wgmma is None else
             f" wgmma={'true' if config.wgmma else 'false'}") +
            (f" narrow-offset-limit={config.narrow_offset_limit}"
             if config.narrow_offset_limit is not None else "") +
            ("" if config.scores_in_registers is None else
             " scores-in-registers=" +
             ("true" if config.scores_in_registers else "false")) +
            ("" if config.row_tile_warps is None else
             f" row-tile-warps={config.row_tile_warps}") +
            ("" if config.wgmma_chunks is None else
             " wgmma-chunks=" + ("true" if config.wgmma_chunks else "false")) +
            ("" if config.copy_stages is None else
             f" copy-stages={config.copy_stages}") +
            ("" if config.states_copy_stages is None else
             f" states-copy-stages={config.states_copy_stages}") +
            ("" if config.bulk_copies is None else
             " bulk-copies=" + ("true" if config.bulk_copies else "false")) +
            ("" if config.small_grid_value_tile is None else
             f" small-grid-value-tile={config.small_grid_value_tile}"))


def label(config):
    if config is None:
        return "defaults"
    return (f"C{config.chunk_size} {'async' if config.async_copies else 'sync'} "
            f"spb{config.sequence_parallel_blocks} DT{config.value_tile} "
            f"M{config.min_blocks_per_sm} P{config.prefetch_chunks}" +
            ("" if config.wgmma is None else
             " wgmma" if config.wgmma else " mma.sync") +
            (f" N{config.narrow_offset_limit}"
             if config.narrow_offset_limit is not None else "") +
            ("" if config.scores_in_registers is None else
             " PR" if config.scores_in_registers else " PS") +
            ("" if config.row_tile_warps is None else
             f" R{config.row_tile_warps}") +
            ("" if config.wgmma_chunks is None else
             " W64" if config.wgmma_chunks else " W") +
            ("" if config.copy_stages is None else
             f" S{config.copy_stages}") +
            ("" if config.states_copy_stages is None else
             f" K{config.states_copy_stages}") +
            ("" if config.bulk_copies is None else
             " bulk" if config.bulk_copies else " cp.async") +
            ("" if config.small_grid_value_tile is None else
             f" G{config.small_grid_value_tile}"))


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
    """Whether the tuned function is the causal scan (--form=causal)."""
    return args.form == "causal"


def compile_all(args, workdir, shapes, configs, element):
    """{(shape, config): Kernel or the error's text} for every shape and
    combination, and for None (the defaults); compiled in parallel."""
    jobs = {}
    for shape in shapes:
        module = os.path.join(workdir, f"{case_name(shape)}.mlir")
        with open(module, "w") as f:
            build = aot.scan_module if causal(args) else aot.linear_module
            f.write(build(*shape, element))
        for i, config in enumerate([None] + configs):
            extra = "emulate=true" if args.emulate else ""
            jobs[(shape, config)] = (
                module, os.path.join(workdir, f"lib{case_name(shape)}_{i}.so"),
                " ".join(filter(None, [options(config), extra])))

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
    element, tolerance = "bf16", 2.5e-2

    def __init__(self, args):
        from bench import Bench
        self.bench = Bench(args)
        self.causal = causal(args)
        self.name = self.bench.device_name
        self.copy_bw = self.bench.copy_bw
        self.extra = dict(launch_floor_ms=self.bench.launch_floor,
                          torch=self.bench.torch.__version__)

    def case(self, shape):
        q, k, v = self.bench.prefill_inputs(shape)
        return [(q, k, v), self.bench.reference(q, k, v, causal=self.causal)]

    def measure(self, library, case):
        inputs, ref = case
        return self.bench.time_linattn(library, inputs, ref)

    def release(self, case):
        case.clear()
        self.bench.torch.cuda.empty_cache()


class Emulator:
    """The GPU emulator's runtime, numpy f16 inputs, a float64 reference;
    the time is the wall clock of a call and means nothing."""
    element, tolerance = "f16", 1e-2
    name, copy_bw = "GPU emulator", None

    def __init__(self, args):
        import numpy as np
        self.np = np
        self.runtime = aot.EmulatorRuntime(args.runtime)
        self.repeat = args.repeat
        self.seed = args.seed
        self.causal = causal(args)
        self.extra = {}

    def case(self, shape):
        np = self.np
        rng = np.random.default_rng(self.seed)
        arrays = [np.ascontiguousarray(rng.uniform(-1, 1, shape).astype(np.float16))
                  for _ in range(3)]
        buffers = [self.runtime.to_device(x) for x in arrays]
        return buffers, aot.reference(*arrays, causal=self.causal)

    def measure(self, library, case):
        buffers, ref = case
        out = self.np.empty(buffers[0].shape, self.np.float16)
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
            rows.append(dict(shape=case_name(shape), configs=[config._asdict()],
                             skipped=f"compile failed: {kernel[-300:]}"))
            continue
        if kernel.digest in by_digest:
            by_digest[kernel.digest]["configs"].append(config._asdict())
            continue
        row = dict(shape=case_name(shape), configs=[config._asdict()],
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

    floor = (prefill_bytes(*shape, 2) / device.copy_bw) if device.copy_bw else None
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


def ranking(rows, configs):
    """[(geometric mean over the shapes of ms / the shape's best, worst such
    ratio, config)] of the combinations measured correct on every shape,
    best first."""
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    ratio = {}
    for r in rows:
        for c in r["configs"]:
            ratio[(r["shape"], Config(**c))] = r.get("vs_best")
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

def configs_text(row):
    names = [label(Config(**c)) for c in row["configs"]]
    return ", ".join(names) if names else "(no combination of the grid)"


def percent(fraction):
    return "" if fraction is None else f"{100 * fraction:.0f}%"


def markdown(meta):
    rows, device = meta["results"], meta["device"]
    configs = [Config(**c) for c in meta["grid"]]
    noncausal = meta.get("form") == "noncausal"
    title = "linear-form" if noncausal else "chunked-scan"
    function = ("O = φ(Q)(φ(K)ᵀV) on the linear form's kernels" if noncausal
                else "O of the causal scan")
    lines = [f"# linattn {title} tuning on {device}", "",
             f"The benchmark's function ({function}, elu+1 features, "
             f"{meta['element']}) for every combination of chunk-size (C), "
             f"async-copies (sync/async), sequence-parallel-blocks (spb), "
             f"value-tile (DT) and min-blocks-per-sm (M); "
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
                 configs_text(best) if best else "none correct",
                 f"{best['ms']:.4f}" if best else "",
                 f"{d['ms'] / best['ms']:.2f}x" if best and d.get("correct") else "",
                 percent(best.get("floor_fraction")) if best else ""]
        lines.append("| " + " | ".join(cells) + " |")

    # The combinations that compile to the defaults' code on every shape.
    as_defaults = None
    for d in defaults.values():
        mine = {Config(**c) for c in d["configs"]}
        as_defaults = mine if as_defaults is None else as_defaults & mine
    as_defaults = as_defaults or set()
    ranked = ranking(rows, configs)
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
                lines.append(f"| {configs_text(r)} | skipped: {r.get('skipped', '')[:80]} "
                             f"| | | | {default} |")
                continue
            vs = r.get("vs_best")
            lines.append(
                f"| {configs_text(r)} | {r['ms']:.4f} | {percent(r.get('floor_fraction'))} | "
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
    parser.add_argument("--form", choices=("causal", "noncausal"),
                        default="causal",
                        help="the causal scan, or the non-causal linear form")
    parser.add_argument("--shapes", type=shape_list, default=None,
                        help="comma-separated BxHxTxD (default: the form's)")
    parser.add_argument("--chunk-sizes", type=int_list, default=CHUNK_SIZES)
    parser.add_argument("--async-copies", type=bool_list, default=ASYNC_COPIES)
    parser.add_argument("--sequence-parallel-blocks", type=int_list,
                        default=SEQUENCE_PARALLEL_BLOCKS)
    parser.add_argument("--value-tiles", type=int_list, default=VALUE_TILES)
    parser.add_argument("--min-blocks-per-sm", type=int_list,
                        default=MIN_BLOCKS_PER_SM)
    parser.add_argument("--prefetch-chunks", type=int_list,
                        default=PREFETCH_CHUNKS)
    parser.add_argument("--wgmma", type=bool_list, default=WGMMA)
    parser.add_argument("--narrow-offset-limits", type=int_list,
                        default=NARROW_OFFSET_LIMITS,
                        help="narrow-offset-limit values to try (default: the "
                             "pipeline's, the option left out)")
    parser.add_argument("--scores-in-registers", type=bool_list,
                        default=SCORES_IN_REGISTERS,
                        help="scores-in-registers values to try (default: the "
                             "pipeline's, the option left out)")
    parser.add_argument("--row-tile-warps", type=int_list,
                        default=ROW_TILE_WARPS,
                        help="row-tile-warps values to try, 0, 1 or 2 "
                             "(default: the pipeline's, the option left out)")
    parser.add_argument("--wgmma-chunks", type=bool_list,
                        default=WGMMA_CHUNKS,
                        help="wgmma-chunks values to try (default: the "
                             "pipeline's, the option left out)")
    parser.add_argument("--copy-stages", type=int_list, default=COPY_STAGES,
                        help="copy-stages values to try, 1 to 4 (default: "
                             "the pipeline's, the option left out)")
    parser.add_argument("--states-copy-stages", type=int_list,
                        default=STATES_COPY_STAGES,
                        help="states-copy-stages values to try, 1 to 4 "
                             "(default: the pipeline's, the option left out)")
    parser.add_argument("--bulk-copies", type=bool_list, default=BULK_COPIES,
                        help="bulk-copies values to try (default: the "
                             "pipeline's, the option left out)")
    parser.add_argument("--small-grid-value-tiles", type=int_list,
                        default=SMALL_GRID_VALUE_TILES,
                        help="small-grid-value-tile values to try, 0, 8, 16, "
                             "32 or 64 (default: the pipeline's, the option "
                             "left out)")
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
    if args.shapes is None:
        args.shapes = SHAPES if causal(args) else NONCAUSAL
    if args.repeat < 1 or args.rounds < 1:
        parser.error("--repeat and --rounds must be positive")
    configs = [Config(*c) for c in itertools.product(
        args.chunk_sizes, args.async_copies, args.sequence_parallel_blocks,
        args.value_tiles, args.min_blocks_per_sm, args.prefetch_chunks,
        args.wgmma, args.narrow_offset_limits, args.scores_in_registers,
        args.row_tile_warps, args.wgmma_chunks, args.copy_stages,
        args.states_copy_stages, args.bulk_copies,
        args.small_grid_value_tiles)]
    # Async copies leave nothing to prefetch (the option is ignored).
    configs = [c for c in configs if not (c.async_copies and c.prefetch_chunks)]
    if not configs:
        parser.error("the grid is empty")

    if args.dry_run:
        print(f"tuning plan (dry run: nothing is measured), {args.form} form")
        print(f"{len(configs)} combinations, {len(args.shapes)} shapes, "
              f"{len(args.shapes) * (len(configs) + 1)} compilations "
              f"(the defaults included)")
        for shape in args.shapes:
            b, h, t, d = shape
            print(f"shape {case_name(shape)}: compulsory bytes "
                  f"{prefill_bytes(b, h, t, d, 2) / 2**20:.0f} MiB")
        for config in [None] + configs:
            print("  " + " ".join(aot.compile_command(
                args.tools, "<shape>.mlir", "<lib>.so", options(config))))
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
                    rounds=args.rounds, grid=[c._asdict() for c in configs],
                    results=[], **device.extra)
        os.makedirs(args.out, exist_ok=True)
        base = os.path.join(args.out, args.name or "{}-tune{}".format(
            results_stem(device.name), "" if causal(args) else "-noncausal"))
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
