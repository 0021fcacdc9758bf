#!/usr/bin/env python3
"""Hardware counters of linattn's GPU kernels, read by Nsight Compute (ncu).

bench.py says how fast the kernels are; this says why. For each prefill
shape and each variant of bench.py's (the chunked bf16 scan and its options,
tf32, the strict-fp32 recurrent scan) the benchmark's function is compiled
ahead of time as bench.py compiles it (aot.py) and called on bench.py's
inputs in a child process under ncu: one call to load and warm up, then one
call between cudaProfilerStart and cudaProfilerStop, whose kernels ncu
profiles (`--profile-from-start off`, clocks left alone). Per kernel:
duration, DRAM bytes read and written, DRAM and SM throughput as fractions
of the device's peaks, L2 hit rate, registers, dynamic shared memory,
theoretical and achieved occupancy, warp cycles per issued instruction. Per
call: the kernels' time, and their DRAM bytes over the compulsory bytes (q,
k, v read, o written once).

Results: <out>/<name>-profile.{json,md}, and ncu's CSV of every job in
<name>-profile.txt, which `--parse` turns into the tables again anywhere.

  bench/gpu/ncu_profile.py --tools=build/bin                     # default plan
  bench/gpu/ncu_profile.py --tools=build/bin --shapes=8x16x16384x64 \\
      --variants="linattn chunked bf16;linattn chunked bf16, mma.sync"
  bench/gpu/ncu_profile.py --dry-run                              # the commands
  bench/gpu/ncu_profile.py --parse=R-profile.txt --name=R         # tables again
"""

import argparse
import csv
import datetime
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import aot  # noqa: E402
import bench  # noqa: E402

# The T = 16K shape at D = 64 and FLA's comparison shape (D = 128).
SHAPES = [(8, 16, 16384, 64), (2, 16, 16384, 128)]
# bench.py's variants whose counters decide the defaults: how staging waits
# on memory (cp.async, the default; synchronous), the scores on wgmma (the
# default) or mma.sync, the outputs on wgmma too (wgmma-outputs), and the
# strict-fp32 kernel. About 30 s a job on an H100: ten fit in 5 minutes.
VARIANTS = ["linattn chunked bf16", "linattn chunked bf16, synchronous staging",
            "linattn chunked bf16, mma.sync",
            "linattn chunked bf16, wgmma outputs", "linattn recurrent f32"]
SECTIONS = ["SpeedOfLight", "LaunchStats", "Occupancy",
            "MemoryWorkloadAnalysis", "WarpStateStats"]
METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum"]
JOB_MARK = "### job "
META_MARK = "### meta "

# (ncu's metric name, whether its unit is a percentage) -> our field.
FIELDS = {
    ("Duration", False): "duration_us",
    ("DRAM Throughput", True): "dram_pct",
    ("Memory Throughput", True): "memory_pct",
    ("Compute (SM) Throughput", True): "sm_pct",
    ("L2 Hit Rate", True): "l2_hit_pct",
    ("Registers Per Thread", False): "registers",
    ("Dynamic Shared Memory Per Block", False): "dynamic_smem_bytes",
    ("Theoretical Occupancy", True): "theoretical_occupancy_pct",
    ("Achieved Occupancy", True): "achieved_occupancy_pct",
    ("Warp Cycles Per Issued Instruction", False): "warp_cycles_per_issue",
    ("Waves Per SM", False): "waves_per_sm",
    ("dram__bytes_read.sum", False): "dram_read_bytes",
    ("dram__bytes_write.sum", False): "dram_write_bytes",
}

_SCALE = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "K": 1e3, "M": 1e6,
          "G": 1e9, "T": 1e12}


def value_in_base_units(value, unit):
    """A metric's value in seconds (times are then given in µs by the
    caller), bytes, bytes per second, or as printed; None for n/a."""
    text = value.replace(",", "").strip()
    try:
        number = float(text)
    except ValueError:
        return None
    m = re.fullmatch(r"([numKMGT]?)(second|byte)(/second|/block)?", unit.strip())
    if m:
        number *= _SCALE[m.group(1)]
    return number


def parse_ncu_csv(text):
    """{launch ID: {"kernel", "grid", "block", field: value}} of ncu's
    `--csv --page details` output (lines before its header are skipped)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    launches = {}
    if start is None:
        return launches
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        name = row.get("Metric Name", "")
        unit = row.get("Metric Unit", "") or ""
        field = FIELDS.get((name, unit == "%"))
        launch = launches.setdefault(row["ID"], {
            "kernel": row.get("Kernel Name", ""),
            "grid": row.get("Grid Size", ""), "block": row.get("Block Size", "")})
        if not field:
            continue
        value = value_in_base_units(row.get("Metric Value", ""), unit)
        if value is not None and field == "duration_us":
            value *= 1e6 if unit.endswith("second") else 1e-3  # ncu's default: ns
        launch[field] = value
    return launches


def parse_jobs(text, parse_output):
    """(meta, [(job, parse_output(its output))]) of a run's text: the run's
    line (META_MARK and its JSON), then each job's line (JOB_MARK and its
    JSON) followed by the output of its command."""
    meta = {}
    if text.startswith(META_MARK):
        meta = json.loads(text[len(META_MARK):].partition("\n")[0])
    jobs = []
    for block in text.split(JOB_MARK)[1:]:
        header, _, body = block.partition("\n")
        jobs.append((json.loads(header), parse_output(body)))
    return meta, jobs


def parse_profile(text):
    """(meta, [(job, launches)]) of a profile.txt (ncu's output per job)."""
    return parse_jobs(text, parse_ncu_csv)


def summarize(jobs):
    """Rows of the report: one per job (a function call) with its kernels."""
    rows = []
    for job, launches in jobs:
        kernels = [launches[k] for k in sorted(launches, key=int)]
        total_us = sum(k.get("duration_us") or 0 for k in kernels)
        dram = sum((k.get("dram_read_bytes") or 0) + (k.get("dram_write_bytes") or 0)
                   for k in kernels)
        rows.append(dict(job, kernels=kernels, total_us=total_us,
                         dram_bytes=dram,
                         dram_over_compulsory=dram / job["compulsory_bytes"]
                         if dram and job["compulsory_bytes"] else None,
                         compulsory_gbs=job["compulsory_bytes"] / total_us * 1e-3
                         if total_us else None))
    return rows


def fmt(x, digits=1, scale=1.0):
    return "-" if x is None else f"{x * scale:.{digits}f}"


def short_kernel(name):
    """The kernel's name without linattn's prefix and the module's suffix."""
    return re.sub(r"_\d+$", "", name.removeprefix("linattn_"))


def markdown(rows, meta):
    out = [f"# linattn kernels under Nsight Compute: {meta.get('device', '?')}",
           "", f"{meta.get('date', '?')}, {meta.get('ncu', 'ncu')}; "
           "`bench/gpu/ncu_profile.py`, one call per "
           "row after a warm-up call, clocks not locked (`--clock-control none`). "
           "DRAM bytes are what the kernels moved; compulsory bytes are q, k, v "
           "read and o written once.", ""]
    out += ["## Per call", "",
            "| shape | variant | kernels | µs | DRAM MB | DRAM / compulsory "
            "| compulsory GB/s |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if r.get("error"):
            continue
        out.append(f"| {r['shape']} | {r['variant']} | {len(r['kernels'])} | "
                   f"{fmt(r['total_us'])} | {fmt(r['dram_bytes'], 1, 1e-6)} | "
                   f"{fmt(r['dram_over_compulsory'], 2)} | {fmt(r['compulsory_gbs'], 0)} |")
    out += ["", "## Per kernel", "",
            "| shape | variant | kernel | grid | block | regs | dyn. smem KB "
            "| occupancy th./ach. % | µs | DRAM % peak | SM % peak | L2 hit % "
            "| cycles/issue |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
            "| --- | --- |"]
    for r in rows:
        for k in r["kernels"]:
            out.append(
                f"| {r['shape']} | {r['variant']} | {short_kernel(k['kernel'])} | "
                f"{k['grid']} | {k['block']} | {fmt(k.get('registers'), 0)} | "
                f"{fmt(k.get('dynamic_smem_bytes'), 1, 1e-3)} | "
                f"{fmt(k.get('theoretical_occupancy_pct'), 0)}/"
                f"{fmt(k.get('achieved_occupancy_pct'), 0)} | "
                f"{fmt(k.get('duration_us'))} | {fmt(k.get('dram_pct'))} | "
                f"{fmt(k.get('sm_pct'))} | {fmt(k.get('l2_hit_pct'))} | "
                f"{fmt(k.get('warp_cycles_per_issue'))} |")
    out += failures(rows, "Not profiled")
    return "\n".join(out) + "\n"


def failures(rows, title):
    """The Markdown lines of the jobs that failed (none if none did)."""
    failed = [r for r in rows if r.get("error")]
    if not failed:
        return []
    return ["", f"## {title}", ""] + [
        f"- {r['shape']} {r['variant']}: {r['error']}" for r in failed]


def write_reports(rows, meta, out_dir, name, kind="profile", render=markdown):
    """<out_dir>/<name>-<kind>.json of the rows and .md of `render`."""
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, f"{name}-{kind}")
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(render(rows, meta))
    return base


#===------------------------------------------------------------------------===#
# The plan and the runs
#===------------------------------------------------------------------------===#


def find_ncu(given):
    if given:
        return given
    for candidate in [shutil.which("ncu"), "/usr/local/cuda/bin/ncu"] + sorted(
            p for d in ("/opt/nvidia/nsight-compute",) if os.path.isdir(d)
            for p in (os.path.join(d, v, "ncu") for v in os.listdir(d))):
        if candidate and os.path.exists(candidate):
            return candidate
    return "ncu"


def plan(args, default_variants=VARIANTS, default_shapes=SHAPES, extra=None):
    """The jobs: one per shape and variant (args.variants and args.shapes,
    else the defaults), with what the report needs. A variant is one of
    bench.py's or of `extra` ({name: (element, options)}); in the default
    plan only at the shapes where its kernels differ from the default's
    (bench.py's ONLY_FEATURES and ONLY_SHAPES: `chunks of 32` at D = 128)."""
    variants = {impl: (element, options) for impl, element, options, _ in
                bench.LINATTN_VARIANTS}
    variants.update(extra or {})
    names = ([v.strip() for v in args.variants.split(";")] if args.variants
             else default_variants)
    unknown = [v for v in names if v not in variants]
    if unknown:
        sys.exit(f"{os.path.basename(sys.argv[0])}: unknown variants {unknown}; "
                 f"there are {list(variants)}")
    shapes = ([tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
              if args.shapes else default_shapes)
    jobs = []
    for shape in shapes:
        applies = {x[0] for x in bench.prefill_variants([(n,) for n in names], shape)}
        for impl in names:
            if not args.variants and impl not in applies:
                continue
            element, options = variants[impl]
            slug = re.sub(r"[^A-Za-z0-9]+", "_", impl)
            jobs.append(dict(shape=bench.case_name(shape), variant=impl,
                             element=element, options=options,
                             compulsory_bytes=bench.prefill_bytes(
                                 *shape, 2 if element == "bf16" else 4),
                             library=f"lib{bench.case_name(shape)}_{slug}.so"))
    return jobs


def ncu_command(args, job, library):
    cmd = [find_ncu(args.ncu), "--csv", "--page", "details",
           "--profile-from-start", "off", "--clock-control", "none",
           "--target-processes", "all", "--kernel-name", "regex:linattn_"]
    for section in SECTIONS:
        cmd += ["--section", section]
    cmd += ["--metrics", ",".join(METRICS)]
    return cmd + [sys.executable, os.path.abspath(__file__), "--child",
                  f"--library={library}", f"--shape={job['shape']}",
                  f"--element={job['element']}",
                  f"--tools={os.path.abspath(args.tools)}"]


def child(args):
    """Calls the library's function twice on bench.py's inputs; ncu profiles
    the second call's kernels."""
    import torch
    shape = tuple(int(x) for x in args.shape.split("x"))
    gen = torch.Generator(device="cuda").manual_seed(0)
    inputs = [torch.rand(shape, generator=gen, device="cuda").mul_(2).sub_(1)
              .to(torch.bfloat16) for _ in range(3)]
    if args.element == "f32":
        inputs = [x.float() for x in inputs]
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        out = torch.empty_like(inputs[0])
        call = aot.Function(args.library).bind(
            [bench.torch_buffer(x) for x in inputs], [bench.torch_buffer(out)],
            stream.cuda_stream)
        call()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        call()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    exit_on_runtime_error(args.tools)


def exit_on_runtime_error(tools):
    """Ends the child with the linattn CUDA runtime's last error, if any: a
    call that failed returns quietly otherwise."""
    import ctypes
    runtime = ctypes.CDLL(os.path.join(tools, "..", "lib",
                                       "liblinattn_cuda_runtime.so"))
    runtime.linattnCudaGetLastError.restype = ctypes.c_char_p
    error = runtime.linattnCudaGetLastError()
    if error:
        sys.exit(f"{os.path.basename(sys.argv[0])}: the linattn runtime failed: "
                 f"{error.decode()}")


def ncu_version(args):
    """ncu's version line, or why there is none."""
    try:
        proc = subprocess.run([find_ncu(args.ncu), "--version"], capture_output=True,
                              text=True, timeout=60)
        lines = proc.stdout.strip().splitlines()
        return lines[-1] if proc.returncode == 0 and lines else "ncu: no version"
    except (OSError, subprocess.TimeoutExpired):
        return "ncu: not found"


def device_name():
    try:
        proc = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
        return proc.stdout.strip().splitlines()[0] if proc.returncode == 0 else "?"
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"


def run_jobs(args, jobs, measure, what="ncu", done="profiled"):
    """Runs every job within args.budget_s: writes its scan module, then
    `measure(job, module, workdir)` compiles it and returns the command whose
    stdout is the job's output (`what` names it in errors). Returns the jobs'
    text: each job's JOB_MARK line and that output."""
    workdir = tempfile.mkdtemp(prefix="linattn-jobs-")
    start = time.monotonic()
    text = []
    for job in jobs:
        output = ""
        if args.budget_s and time.monotonic() - start > args.budget_s:
            job["error"] = "over the time budget"
        else:
            shape = tuple(int(x) for x in job["shape"].split("x"))
            module = os.path.join(workdir, f"{job['shape']}_{job['element']}.mlir")
            with open(module, "w") as f:
                f.write(aot.scan_module(*shape, job["element"]))
            try:
                proc = subprocess.run(measure(job, module, workdir),
                                      capture_output=True, text=True,
                                      timeout=args.timeout_s)
                output = proc.stdout
                if proc.returncode != 0:
                    job["error"] = (f"{what} exited with {proc.returncode}: "
                                    f"{(proc.stderr or proc.stdout).strip()[-500:]}")
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                job["error"] = f"{type(e).__name__}: {e}"
        text.append(JOB_MARK + json.dumps(job) + "\n" + output)
        print(f"{job['shape']} {job['variant']}: {job.get('error', done)}",
              flush=True)
    shutil.rmtree(workdir, ignore_errors=True)
    return "".join(text)


def run(args, jobs):
    """Compiles and profiles every job within the budget; returns the text
    of profile.txt."""
    def measure(job, module, workdir):
        library = os.path.join(workdir, job["library"])
        aot.compile_library(args.tools, module, library, job["options"])
        return ncu_command(args, job, library)
    return run_jobs(args, jobs, measure)


def save_run(out_dir, name, kind, text, rows, meta, render=markdown):
    """<out_dir>/<name>-<kind>.txt of the run's text, and its reports."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{name}-{kind}.txt"), "w") as f:
        f.write(text)
    base = write_reports(rows, meta, out_dir, name, kind, render)
    print(f"wrote {base}.md, .json and -{kind}.txt")


def job_arguments(doc, shapes, variants, kind, job_run):
    """The arguments of a script that runs bench.py's variants as jobs
    (this one, phase_clocks.py): where the tools are and results go, the
    shapes and variants, limits, the dry run, --parse of a saved
    <name>-<kind>.txt, and the child's hidden ones."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--tools", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    parser.add_argument("--name", default="",
                        help="results file name (default: <device>-<date>)")
    parser.add_argument("--shapes", default="",
                        help="comma-separated BxHxTxD (default: "
                             + ",".join(bench.case_name(s) for s in shapes) + ")")
    parser.add_argument("--variants", default="",
                        help="semicolon-separated bench.py variant names "
                             "(default: " + "; ".join(variants) + ")")
    parser.add_argument("--timeout-s", type=float, default=120,
                        help=f"limit of one job's {job_run}")
    parser.add_argument("--budget-s", type=float, default=0,
                        help="start no job after this many seconds; 0: no limit")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the jobs' commands; needs no GPU, no torch")
    parser.add_argument("--parse", metavar="TXT",
                        help=f"the tables of a saved <name>-{kind}.txt; runs nothing")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--library", help=argparse.SUPPRESS)
    parser.add_argument("--shape", help=argparse.SUPPRESS)
    parser.add_argument("--element", help=argparse.SUPPRESS)
    return parser


def main():
    parser = job_arguments(__doc__, SHAPES, VARIANTS, "profile", "ncu run")
    parser.add_argument("--ncu", default="", help="the ncu executable")
    args = parser.parse_args()

    if args.child:
        return child(args)
    if args.parse:
        with open(args.parse) as f:
            meta, jobs = parse_profile(f.read())
        base = write_reports(summarize(jobs), meta, args.out,
                             args.name or "parsed")
        print(f"wrote {base}.md")
        return 0
    jobs = plan(args)
    if args.dry_run:
        for job in jobs:
            print(f"{job['shape']} {job['variant']}: "
                  f"{job['compulsory_bytes'] / 2**20:.0f} MiB compulsory")
            print("  " + " ".join(aot.compile_command(
                args.tools, f"<{job['shape']}_{job['element']}.mlir>",
                f"<{job['library']}>", job["options"])))
            print("  " + " ".join(ncu_command(args, job, f"<{job['library']}>")))
        return 0
    device = device_name()
    name = args.name or bench.results_stem(device)
    meta = {"device": device, "date": datetime.date.today().isoformat(),
            "ncu": ncu_version(args)}
    text = META_MARK + json.dumps(meta) + "\n" + run(args, jobs)
    save_run(args.out, name, "profile", text,
             summarize(parse_profile(text)[1]), meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
