#!/usr/bin/env python3
"""Where the scans' time goes, phase by phase, from their own clocks.

bench.py says how long a call takes; ncu_profile.py what the kernels move;
this says which part of a chunk costs the time. Each variant is compiled
twice ahead of time (aot.py): as bench.py compiles it, and with
`phase-clocks=true`, whose chunk loops, segment states and strict-fp32
recurrent scans read the SM's cycle counter at the end of each phase
(prologue, issue, wait, map, stage, scores, outputs, update, normalizer,
tokens, epilogue: lib/Conversion/LinAttnToGPU/PhaseClocks.h says what each
holds) and write their totals to a buffer, which a printer
kernel launched after each prints a line per block of. A child
process calls each on bench.py's inputs: the plain function once to warm
up and five times timed, the instrumented one once to warm up and once
measured. Per kernel the report gives the cycles per chunk of each phase
(summed over the blocks, over their chunks; the recurrent scan's "chunks"
are its staged blocks of tokens), their share, the clock rate
the blocks saw (cycles over the global timer's ns) and so ns per chunk; per
call the plain and the instrumented times (what the clocks cost).

The phases are thread 0's view: a phase that ends at a barrier also holds
the wait for the slowest warp.

Results: <out>/<name>-phases.{md,json}, with matplotlib a figure
<name>-phases.png (a bar per kernel, its cycles per chunk split by phase),
and the blocks' lines in <name>-phases.txt, which `--parse` turns into the
tables and figure again anywhere.

  bench/gpu/phase_clocks.py --tools=build/bin                    # default plan
  bench/gpu/phase_clocks.py --tools=build/bin --shapes=8x16x16384x64 \\
      --variants="linattn chunked bf16;linattn chunked bf16, wgmma outputs"
  bench/gpu/phase_clocks.py --dry-run                             # the commands
  bench/gpu/phase_clocks.py --parse=R-phases.txt --name=R         # tables again
  bench/gpu/phase_clocks.py --emulate=build/lib/liblinattn_gpu_emulator.so \\
      --shapes=2x3x300x64                                         # no GPU

On the emulator (--emulate) the kernels run on the CPU and a "cycle" is an
op the block executed: the same report, of emulated ops instead of cycles.
With --emulator-clock=shared-wavefronts it is a shared-memory wavefront
(LINATTN_GPU_EMULATOR_CLOCK): the report then says what each phase asks of
an SM's shared memory, which returns one wavefront a cycle, so that a GPU
run's cycles per phase can be set against it (a phase near its wavefronts
times the blocks sharing an SM is bound by shared memory).

  bench/gpu/phase_clocks.py --emulate=build/lib/liblinattn_gpu_emulator.so \\
      --emulator-clock=shared-wavefronts --shapes=2x2x512x128 \\
      --variants="linattn simt chunks f32, batch-parallel"
"""

import argparse
import collections
import ctypes
import datetime
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import aot  # noqa: E402
import bench  # noqa: E402
import ncu_profile  # noqa: E402

# FLA's comparison shape (the furthest from the HBM floor) first, as a
# budget (--budget-s) may stop the plan before its end, then the issue's
# T = 16K shapes at D = 64 and 128.
SHAPES = [(2, 16, 16384, 128), (8, 16, 16384, 64), (8, 16, 16384, 128)]
# The default, the batch-parallel chunk loop (what the segments' outputs
# run, one block a head and value tile), the outputs by wgmma, the groups
# staged unrolled, at D = 128 the chunks of 32 the default replaced, the
# strict-fp32 recurrent scan (synchronous staging, slower on every shape
# the H100 timed, on request) and the strict-fp32 scan chunk by chunk on
# CUDA cores.
VARIANTS = ["linattn chunked bf16",
            "linattn chunked bf16, batch-parallel",
            "linattn chunked bf16, wgmma outputs",
            "linattn chunked bf16, unrolled staging",
            "linattn chunked bf16, chunks of 32",
            "linattn recurrent f32",
            "linattn simt chunks f32"]
# Not bench.py's: the chunk loop alone where the default takes segments.
EXTRA_VARIANTS = {"linattn chunked bf16, batch-parallel":
                  ("bf16", "sequence-parallel-blocks=0")}
# A block's line: its grid and these counts, then its phases, in the order
# the kernel printed them (PhaseClocks.h's `Phase`).
BLOCK_COUNTS = ("chunks", "cycles", "ns")
LINE = re.compile(r"linattn-phase-clocks (\S+) block=(\d+),(\d+),(\d+) (.*)")
MEASURED_MARK = "### measured"
TIMES_MARK = "### times "


def parse_lines(text):
    """[{kernel, block, chunks, cycles, ns, <phase>...}] of the lines the
    kernels printed after MEASURED_MARK (the warm-up call's are before it),
    and the times line's {plain_ms, clocked_ms}."""
    _, _, measured = text.partition(MEASURED_MARK)
    blocks, times = [], {}
    for line in measured.splitlines():
        if line.startswith(TIMES_MARK):
            times = json.loads(line[len(TIMES_MARK):])
            continue
        m = LINE.match(line.strip())
        if not m:
            continue
        fields = dict(kv.split("=", 1) for kv in m.group(5).split())
        row = {"kernel": m.group(1),
               "block": [int(m.group(i)) for i in (2, 3, 4)],
               "grid": [int(n) for n in fields.pop("grid").split(",")]}
        row.update({k: int(fields.pop(k)) for k in BLOCK_COUNTS})
        row["phases"] = {k: int(v) for k, v in fields.items()}
        blocks.append(row)
    return blocks, times


def summarize_kernels(blocks):
    """Per kernel, in the order they first printed: blocks (and those of
    its grid that printed nothing: the printf buffer dropped them), chunks,
    the cycles per chunk of each phase and in all, the clock rate (cycles
    per ns), ns per chunk, and the slowest block's cycles over the mean."""
    by_kernel = collections.OrderedDict()
    for row in blocks:
        by_kernel.setdefault(row["kernel"], []).append(row)
    kernels = []
    for name, rows in by_kernel.items():
        chunks = sum(r["chunks"] for r in rows)
        cycles = sum(r["cycles"] for r in rows)
        ns = sum(r["ns"] for r in rows)
        per_chunk = {p: sum(r["phases"].get(p, 0) for r in rows) / chunks
                     if chunks else None for p in rows[0]["phases"]}
        grid = rows[0]["grid"]
        kernels.append({
            "kernel": name, "blocks": len(rows),
            "missing_blocks": grid[0] * grid[1] * grid[2] - len(rows),
            "chunks": chunks,
            "cycles_per_chunk": cycles / chunks if chunks else None,
            "phase_cycles_per_chunk": per_chunk,
            "cycles_per_ns": cycles / ns if ns else None,
            "ns_per_chunk": ns / chunks if chunks else None,
            "slowest_over_mean": (max(r["cycles"] for r in rows) * len(rows) / cycles
                                  if cycles else None)})
    return kernels


def parse_report(text):
    """(meta, [(job, (blocks, times))]) of a phases.txt (`parse_lines` of
    each job's output)."""
    return ncu_profile.parse_jobs(text, parse_lines)


def summarize(jobs):
    return [dict(job, kernels=summarize_kernels(blocks), **times)
            for job, (blocks, times) in jobs]


def fmt(x, digits=0):
    return "-" if x is None else f"{x:,.{digits}f}"


def kernels_of(rows):
    return [k for r in rows for k in r.get("kernels", [])]


def all_phases(rows):
    """The phases the kernels of `rows` printed, in their order (every
    kernel prints them all)."""
    phases = []
    for k in kernels_of(rows):
        phases += [p for p in k["phase_cycles_per_chunk"] if p not in phases]
    return phases


def used_phases(rows):
    """The phases some kernel of `rows` spent time in, in their order (the
    chunked kernels have no token steps, the recurrent scan no scores)."""
    kernels = kernels_of(rows)
    return [p for p in all_phases(rows)
            if any(k["phase_cycles_per_chunk"].get(p) for k in kernels)]


# What thread 0 reads at the phases' ends, by the report's unit.
CLOCKS = {"cycles": "the SM's cycle counter",
          "emulated ops": "the emulator's clock (the ops the block executed)",
          "shared-memory wavefronts": "the emulator's clock (the shared-memory "
                                      "wavefronts the block took, "
                                      "LINATTN_GPU_EMULATOR_CLOCK)"}


def markdown(rows, meta):
    unit = meta.get("unit", "cycles")
    phases_used = used_phases(rows)
    out = [f"# linattn scans by phase: {meta.get('device', '?')}", "",
           f"{meta.get('date', '?')}; `bench/gpu/phase_clocks.py`: each kernel's "
           f"{unit} per chunk by phase, thread 0 of every block reading "
           f"{CLOCKS.get(unit, unit)} at the phases' ends (`phase-clocks=true`), "
           "summed over the blocks and divided by their chunks. A phase "
           "that ends at a barrier holds the wait for the slowest warp. "
           "prologue and epilogue are per block, spread over its chunks. "
           "The strict-fp32 recurrent scan's chunks are its staged blocks of "
           "tokens; a phase no kernel spent time in has no column.",
           "", "## Per call", "",
           "| shape | variant | plain ms | with clocks ms |",
           "| --- | --- | --- | --- |"]
    for r in rows:
        if r.get("error"):
            continue
        out.append(f"| {r['shape']} | {r['variant']} | {fmt(r.get('plain_ms'), 4)} | "
                   f"{fmt(r.get('clocked_ms'), 4)} |")
    out += ["", f"## {unit.capitalize()} per chunk", "",
            "| shape | variant | kernel | blocks | chunks | "
            + " | ".join(phases_used)
            + f" | all | {unit}/ns | ns/chunk | slowest/mean |",
            "| --- " * (9 + len(phases_used)) + "|"]
    # On the emulator the ns are the host's: no clock rate.
    timed = unit == "cycles"
    for r in rows:
        for k in r.get("kernels", []):
            phases = k["phase_cycles_per_chunk"]
            total = k["cycles_per_chunk"] or 0
            cells = [f"{fmt(phases[p])} ({100 * phases[p] / total:.0f}%)"
                     if phases[p] and total else fmt(phases[p])
                     for p in phases_used]
            blocks = (f"{k['blocks']} ({k['missing_blocks']} lost)"
                      if k.get("missing_blocks") else str(k["blocks"]))
            out.append(f"| {r['shape']} | {r['variant']} | "
                       f"{ncu_profile.short_kernel(k['kernel'])} | {blocks} | "
                       f"{k['chunks']} | " + " | ".join(cells) +
                       f" | {fmt(k['cycles_per_chunk'])} | "
                       f"{fmt(k['cycles_per_ns'] if timed else None, 2)} | "
                       f"{fmt(k['ns_per_chunk'] if timed else None)} | "
                       f"{fmt(k['slowest_over_mean'], 2)} |")
    out += ncu_profile.failures(rows, "Not measured")
    return "\n".join(out) + "\n"


def write_reports(rows, meta, out_dir, name):
    return ncu_profile.write_reports(rows, meta, out_dir, name, "phases",
                                     markdown)


# The phases' colours in the figure, in the order the kernels print them.
COLOURS = ["#bdbdbd", "#6baed6", "#08519c", "#fd8d3c", "#fdd0a2", "#74c476",
           "#238b45", "#9e9ac8", "#fb6a4a", "#a50f15", "#636363"]


def plot(rows, meta, path):
    """<path>: one horizontal bar per kernel of each measured row, its
    cycles per chunk split by phase; nothing where matplotlib is missing.
    Returns whether it wrote the figure."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    bars = [(f"{r['shape']} {r['variant'].removeprefix('linattn ')}\n"
             f"{ncu_profile.short_kernel(k['kernel'])}", k["phase_cycles_per_chunk"])
            for r in rows if not r.get("error") for k in r.get("kernels", [])]
    if not bars:
        return False
    fig, ax = plt.subplots(figsize=(11, 0.55 * len(bars) + 1.5))
    phases_used = used_phases(rows)
    colours = {p: COLOURS[i % len(COLOURS)]
               for i, p in enumerate(all_phases(rows))}
    for y, (_, phases) in enumerate(bars):
        left = 0.0
        for phase in phases_used:
            colour = colours[phase]
            width = phases.get(phase) or 0.0
            ax.barh(y, width, left=left, color=colour,
                    label=phase if y == 0 else None)
            left += width
    ax.set_yticks(range(len(bars)), [label for label, _ in bars], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"{meta.get('unit', 'cycles')} per chunk")
    ax.set_title(f"linattn scans by phase: {meta.get('device', '?')}, "
                 f"{meta.get('date', '?')}", fontsize=9)
    ax.legend(ncol=len(phases_used), fontsize=7, loc="lower center",
              bbox_to_anchor=(0.5, 1.04), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def report(text, out_dir, name):
    """The tables of a phases.txt's text and (with matplotlib) its figure."""
    meta, jobs = parse_report(text)
    rows = summarize(jobs)
    base = write_reports(rows, meta, out_dir, name)
    print(f"wrote {base}.md and .json")
    if plot(rows, meta, base + ".png"):
        print(f"wrote {base}.png")


#===------------------------------------------------------------------------===#
# The runs
#===------------------------------------------------------------------------===#


def builds(job, directory=None):
    """The job's two libraries and their options: as bench.py compiles it,
    and with phase-clocks=true (in `directory`, or as names)."""
    plain = job["library"]
    if directory:
        plain = os.path.join(directory, plain)
    clocked = " ".join(filter(None, [job["options"], "phase-clocks=true"]))
    return [(plain, job["options"]), (plain.replace(".so", "_clocks.so"), clocked)]


def child_command(args, job, plain, clocked):
    cmd = [sys.executable, os.path.abspath(__file__), "--child",
           f"--library={plain}", f"--clocked={clocked}",
           f"--shape={job['shape']}", f"--element={job['element']}",
           f"--tools={os.path.abspath(args.tools)}"]
    if args.emulate:
        cmd.append(f"--emulate={os.path.abspath(args.emulate)}")
    return cmd


def flush_c_stdout():
    """The kernels' printf reaches the C library's stdout at a
    synchronization; flushed before Python writes a mark after it."""
    ctypes.CDLL(None).fflush(None)


def child(args):
    """Times the plain function, then calls the instrumented one between
    MEASURED_MARK and the times line."""
    shape = tuple(int(x) for x in args.shape.split("x"))
    if args.emulate:
        import numpy as np
        device = aot.EmulatorRuntime(args.emulate)
        rng = np.random.default_rng(0)
        def array(x):
            x = x.astype(np.float32)
            # bf16: the high halves of the f32 bits (numpy has no bf16).
            return (x if args.element == "f32"
                    else (x.view(np.uint32) >> 16).astype(np.uint16))
        inputs = [device.to_device(np.ascontiguousarray(
            array(rng.uniform(-1, 1, shape)))) for _ in range(3)]
        out = device.to_device(array(np.zeros(shape)))
        stream, sync = device.stream, device.synchronize

        def timed(call):
            start = time.perf_counter()
            call()
            sync()
            return (time.perf_counter() - start) * 1e3
    else:
        import torch
        gen = torch.Generator(device="cuda").manual_seed(0)
        tensors = [torch.rand(shape, generator=gen, device="cuda").mul_(2).sub_(1)
                   .to(torch.bfloat16) for _ in range(3)]
        if args.element == "f32":
            tensors = [x.float() for x in tensors]
        # The printf buffer of the context (torch's, the primary one, which
        # linattn's runtime shares): 64 MiB instead of 1 MiB, about 250
        # thousand blocks' lines (CU_LIMIT_PRINTF_FIFO_SIZE, set before the
        # first kernel with printf). Lines past it are lost (the report
        # counts them).
        ctypes.CDLL("libcuda.so.1").cuCtxSetLimit(ctypes.c_int(1),
                                                   ctypes.c_size_t(64 << 20))
        torch_stream = torch.cuda.Stream()
        stream, sync = torch_stream.cuda_stream, torch.cuda.synchronize
        out_tensor = torch.empty_like(tensors[0])
        inputs = [bench.torch_buffer(x) for x in tensors]
        out = bench.torch_buffer(out_tensor)

        def timed(call):
            start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            with torch.cuda.stream(torch_stream):
                start.record()
                call()
                end.record()
            sync()
            return start.elapsed_time(end)
    plain = aot.Function(args.library).bind(inputs, [out], stream)
    clocked = aot.Function(args.clocked).bind(inputs, [out], stream)
    timed(plain)
    plain_ms = sorted(timed(plain) for _ in range(5))[2]
    timed(clocked)
    flush_c_stdout()
    print(MEASURED_MARK, flush=True)
    clocked_ms = timed(clocked)
    flush_c_stdout()
    print(TIMES_MARK + json.dumps({"plain_ms": plain_ms, "clocked_ms": clocked_ms}),
          flush=True)
    if not args.emulate:
        ncu_profile.exit_on_runtime_error(args.tools)


def run(args, jobs):
    """Compiles each job plain and clocked, and runs its child, within the
    budget; returns the text of phases.txt."""
    emulate = "emulate=true" if args.emulate else ""

    def measure(job, module, workdir):
        libraries = builds(job, workdir)
        for library, options in libraries:
            aot.compile_library(args.tools, module, library,
                                " ".join(filter(None, [options, emulate])),
                                args.emulate or None)
        return child_command(args, job, *(library for library, _ in libraries))
    return ncu_profile.run_jobs(args, jobs, measure, what="the child",
                                done="measured")


def main():
    parser = ncu_profile.job_arguments(__doc__, SHAPES, VARIANTS, "phases",
                                       "child process")
    parser.add_argument("--emulate", default="", metavar="LIB",
                        help="run on the GPU emulator (liblinattn_gpu_emulator.so)")
    parser.add_argument("--emulator-clock", default="ops",
                        choices=("ops", "shared-wavefronts"),
                        help="on the emulator, what a phase's clock counts: "
                             "the block's ops, or its shared-memory wavefronts")
    parser.add_argument("--clocked", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.emulator_clock != "ops" and not args.emulate:
        parser.error("--emulator-clock needs --emulate")
    if args.child:
        return child(args)
    if args.parse:
        with open(args.parse) as f:
            report(f.read(), args.out, args.name or "parsed")
        return 0
    jobs = ncu_profile.plan(args, VARIANTS, SHAPES, EXTRA_VARIANTS)
    if args.dry_run:
        for job in jobs:
            print(f"{job['shape']} {job['variant']}:")
            for library, options in builds(job):
                print("  " + " ".join(aot.compile_command(
                    args.tools, f"<{job['shape']}_{job['element']}.mlir>",
                    f"<{library}>", options)))
        return 0
    device = "GPU emulator" if args.emulate else ncu_profile.device_name()
    name = args.name or bench.results_stem(device)
    unit = "cycles"
    if args.emulate:
        # The children inherit it.
        os.environ["LINATTN_GPU_EMULATOR_CLOCK"] = args.emulator_clock
        unit = ("shared-memory wavefronts"
                if args.emulator_clock == "shared-wavefronts" else "emulated ops")
    meta = {"device": device, "date": datetime.date.today().isoformat(),
            "unit": unit}
    text = ncu_profile.META_MARK + json.dumps(meta) + "\n" + run(args, jobs)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{name}-phases.txt"), "w") as f:
        f.write(text)
    report(text, args.out, name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
