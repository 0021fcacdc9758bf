#!/usr/bin/env python3
# ===- run.py - the CPU benchmark of linattn and its peers ----------------=== #
#
# Part of the linattn project.
#
# ===----------------------------------------------------------------------=== #
"""Causal linear attention on the CPU: linattn against its peers, one run.

    python3 bench/run.py [--build-dir build] [--quick] [--out DIR]

Measures, side by side and with the same methodology (one warm-up call, then
the median of N calls, each call allocating its output):
  ours      linattn-run on the module, default `linattn-lower-to-cpu`
            (the masked quadratic form is rewritten into a scan);
  masked    the same module through `linattn-lower-to-cpu{rewrite-forms=false}`:
            causal scores + normalized apply_scores as written, O(T^2);
  ft        fast-transformers' CPU algorithm in C++ (src/ft_causal.cpp),
            built with the library's flags -O3 -fopenmp -ffast-math;
  softmax   causal softmax attention in C++ (src/softmax_causal.cpp),
            -O3 -march=native -fopenmp;
  python    (decode) the Python package's RecurrentState.step, in this
            process: the per-token latency a Python caller sees;
and the machine's fp32 FMA peak (src/peak_fma.cpp). Before timing, every
implementation is checked on small shapes: ours and masked against a float64
numpy reference, ft against ours, softmax against a float64 softmax.
See bench/README.md for the flop counts and the methodology.
"""

import argparse
import csv
import datetime
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    with open("/proc/loadavg") as _f:
        LOADAVG = " ".join(_f.read().split()[:3])
except OSError:
    LOADAVG = "unknown"
ROOT = os.path.dirname(HERE)
EPS = 1e-6

# Compile flags of each binary: the peers' flags are part of what is measured.
FLAGS = {
    "peak": ["-O3", "-march=native", "-fopenmp"],
    "ft": ["-O3", "-fopenmp", "-ffast-math"],  # fast-transformers' own flags
    "softmax": ["-O3", "-march=native", "-fopenmp"],
    "harness": ["-O2", "-fopenmp"],
}

METHODS = ["ours", "ft", "softmax", "masked"]
LABELS = {
    "ours": "linattn (scan)",
    "ft": "fast-transformers alg.",
    "softmax": "softmax (C++)",
    "masked": "masked quadratic (linattn, rewrite-forms=false)",
}
QUADRATIC = {"softmax", "masked"}
DECODE_METHODS = ["ours", "python", "ft"]


def methods_for(case):
    return DECODE_METHODS if case.decode else METHODS


def label(method, case):
    if case.decode:
        return {"ours": "linattn (step)",
                "python": "linattn Python API (RecurrentState.step)",
                "ft": "fast-transformers recurrent alg."}[method]
    return LABELS[method]


# ===----------------------------------------------------------------------=== #
# Cases and flop counts
# ===----------------------------------------------------------------------=== #


class Case:
    """One benchmarked shape: forward [B, H, T, D] -> [B, H, T, M] or decode."""

    def __init__(self, b, h, t, d, m=None, decode=False, series=None):
        self.b, self.h, self.t, self.d = b, h, t, d
        self.m = d if m is None else m
        self.decode = decode
        self.series = series  # the T-series (plot line) it belongs to

    @property
    def name(self):
        if self.decode:
            return f"decode B{self.b}·H{self.h}·D{self.d}"
        t = f"{self.t // 1024}K" if self.t % 1024 == 0 else str(self.t)
        return f"B{self.b}·H{self.h}·T{t}·D{self.d}"

    @property
    def key(self):
        if self.decode:
            return f"decode_b{self.b}_h{self.h}_d{self.d}"
        return f"b{self.b}_h{self.h}_t{self.t}_d{self.d}"

    @property
    def tokens(self):
        return 1 if self.decode else self.t

    def flops(self):
        """The common count, the same for every implementation: per token and
        head 4·F·Dv (state update + readout) + 4·F (normalizer) + 4·D (elu+1
        on q and k, two flops an element); F = D for elu+1."""
        f, d, m = self.d, self.d, self.m
        return self.b * self.h * self.tokens * (4 * f * m + 4 * f + 4 * d)

    def own_flops(self, method):
        """What a quadratic method computes itself (the causal half only)."""
        b, h, t, d, m = self.b, self.h, self.t, self.d, self.m
        pairs = t * (t + 1) // 2
        if method == "masked":
            # scores 2F, apply 2Dv, row sum 1 per pair; feature maps.
            return b * h * (pairs * (2 * d + 2 * m + 1) + 4 * d * t)
        if method == "softmax":
            # scores 2D, apply 2Dv; scale, max, subtract, exp, sum per pair.
            return b * h * pairs * (2 * d + 2 * m + 5)
        return self.flops()

    def bytes(self):
        """Compulsory traffic: read q, k, v (and the state), write o (and the
        state)."""
        n = self.b * self.h
        if self.decode:
            state = self.d * self.m + self.d
            return 4 * n * (2 * self.d + 2 * self.m + 2 * state)
        return 4 * n * self.t * (2 * self.d + 2 * self.m)

    def scores_bytes(self):
        return 4 * self.b * self.h * self.t * self.t


def full_cases():
    cases = []
    for d in (64, 128):
        for t in (1024, 4096, 16384):
            cases.append(Case(1, 8, t, d, series=f"B1·H8·D{d}"))
        cases.append(Case(8, 16, 4096, d))
    cases.append(Case(1, 16, 1, 64, decode=True))
    return cases


def quick_cases():
    cases = []
    for t in (128, 512):
        cases.append(Case(1, 2, t, 32, series="B1·H2·D32"))
    cases.append(Case(2, 4, 256, 32))
    cases.append(Case(1, 4, 1, 32, decode=True))
    return cases


def check_cases(quick):
    if quick:
        return [Case(1, 2, 1, 16), Case(1, 2, 7, 16), Case(2, 2, 65, 16),
                Case(1, 4, 1, 16, decode=True)]
    return [Case(1, 2, 1, 64), Case(2, 3, 7, 64), Case(2, 3, 300, 64),
            Case(1, 2, 129, 128), Case(1, 16, 1, 64, decode=True)]


# ===----------------------------------------------------------------------=== #
# Modules
# ===----------------------------------------------------------------------=== #


def forward_module(c):
    qk = f"tensor<{c.b}x{c.h}x{c.t}x{c.d}xf32>"
    vt = f"tensor<{c.b}x{c.h}x{c.t}x{c.m}xf32>"
    at = f"tensor<{c.b}x{c.h}x{c.t}x{c.t}xf32>"
    return f"""// Causal normalized linear attention with elu+1 features, written in its
// masked quadratic form; linattn-lower-to-cpu rewrites it into a scan.
func.func @attention(%q: {qk}, %k: {qk}, %v: {vt}) -> {vt} {{
  %fq = linattn.feature_map elu %q : {qk} -> {qk}
  %fk = linattn.feature_map elu %k : {qk} -> {qk}
  %a = linattn.scores %fq, %fk causal : {qk}, {qk} -> {at}
  %o = linattn.apply_scores %a, %v normalize(eps = {EPS:.1e}) : {at}, {vt} -> {vt}
  return %o : {vt}
}}
"""


def decode_module(c):
    qk = f"tensor<{c.b}x{c.h}x{c.d}xf32>"
    vt = f"tensor<{c.b}x{c.h}x{c.m}xf32>"
    st = f"tensor<{c.b}x{c.h}x{c.d}x{c.m}xf32>"
    return f"""// One decoding step of causal normalized linear attention (elu+1).
func.func @decode(%q: {qk}, %k: {qk}, %v: {vt}, %s: {st}, %z: {qk})
    -> ({vt}, {st}, {qk}) {{
  %fq = linattn.feature_map elu %q : {qk} -> {qk}
  %fk = linattn.feature_map elu %k : {qk} -> {qk}
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = {EPS:.1e})
      : {qk}, {qk}, {vt}, {st}, {qk} -> {vt}, {st}, {qk}
  return %o, %s1, %z1 : {vt}, {st}, {qk}
}}
"""


# ===----------------------------------------------------------------------=== #
# References (float64)
# ===----------------------------------------------------------------------=== #


def elu1(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def ref_linear(q, k, v):
    fq, fk = elu1(q.astype(np.float64)), elu1(k.astype(np.float64))
    t = q.shape[-2]
    a = fq @ np.swapaxes(fk, -1, -2) * np.tril(np.ones((t, t)))
    return (a @ v.astype(np.float64)) / (a.sum(-1, keepdims=True) + EPS)


def ref_softmax(q, k, v):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    t, d = q.shape[-2], q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)
    s = np.where(np.tril(np.ones((t, t), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def ref_step(q, k, v, s, z):
    fq, fk = elu1(q.astype(np.float64)), elu1(k.astype(np.float64))
    s1 = s + fk[..., :, None] * v[..., None, :]
    z1 = z + fk
    return (np.einsum("...f,...fm->...m", fq, s1) /
            (np.einsum("...f,...f->...", fq, z1)[..., None] + EPS))


def rel_err(x, ref):
    """max |x - ref| / max |ref| (a normwise relative error)."""
    scale = float(np.max(np.abs(ref))) if ref.size else 1.0
    if not np.all(np.isfinite(x)):
        return float("inf")
    return float(np.max(np.abs(x.astype(np.float64) - ref))) / max(scale, 1e-30)


# ===----------------------------------------------------------------------=== #
# Running things
# ===----------------------------------------------------------------------=== #


# No mmap'd chunks, no trimming: freed outputs are reused by the next call.
GLIBC_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736"


def sh(cmd, log, env=None, check=True):
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
    log.write(p.stdout)
    log.flush()
    if check and p.returncode != 0:
        sys.exit(f"bench: command failed ({p.returncode}): {' '.join(cmd)}\n"
                 f"{p.stdout[-4000:]}")
    return p.stdout


def median_ms(output):
    m = re.search(r"median time: ([0-9.eE+-]+) ms over (\d+) calls", output)
    if not m:
        sys.exit(f"bench: no timing in the output:\n{output[-2000:]}")
    return float(m.group(1)), int(m.group(2))


def build_cxx(build_dir):
    """The build's C++ compiler (CMAKE_CXX_COMPILER), else LLVM 22's clang++."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            m = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.+)$", f.read(), re.M)
        if m:
            return m.group(1).strip()
    except OSError:
        pass
    return "/usr/lib/llvm-22/bin/clang++"


def openmp_link_flags(cxx):
    """Link flags for the OpenMP runtime of the compiler's own LLVM (Debian
    may also have an older libomp on the default search path), found at link
    and run time."""
    libdir = os.path.join(os.path.dirname(os.path.realpath(shutil.which(cxx) or cxx)),
                          "..", "lib")
    if not os.path.exists(os.path.join(libdir, "libomp.so")):
        libdir = os.path.dirname(subprocess.run(
            [cxx, "-print-file-name=libomp.so"], stdout=subprocess.PIPE,
            text=True).stdout.strip())
    libdir = os.path.normpath(libdir)
    return ["-L" + libdir, "-Wl,-rpath," + libdir]


def build_peak(cxx, work, log):
    """Builds src/peak_fma.cpp; returns the binary and the command."""
    binary = os.path.join(work, "peak_fma")
    cmd = [cxx, *FLAGS["peak"], os.path.join(HERE, "src", "peak_fma.cpp"),
           *openmp_link_flags(cxx), "-o", binary]
    sh(cmd, log)
    return binary, " ".join(cmd)


def measure_peak(binary, quick, log):
    """Runs the peak measurement; returns its fields (isa, threads,
    peak_1core_gflops, peak_allcore_gflops, ...)."""
    out = sh([binary, *(["2000000", "3"] if quick else [])], log)
    return dict(l.split(": ", 1) for l in out.strip().splitlines())


def build_peers(cxx, work, log):
    src = os.path.join(HERE, "src")
    rpath = openmp_link_flags(cxx)
    bins = {}
    commands = []

    def compile_(args):
        commands.append(" ".join(args))
        sh(args, log)

    bins["peak"], peak_command = build_peak(cxx, work, log)
    commands.append(peak_command)
    objs = []
    for name, file in (("ft", "ft_causal.cpp"), ("softmax", "softmax_causal.cpp")):
        obj = os.path.join(work, file.replace(".cpp", ".o"))
        compile_([cxx, *FLAGS[name], "-c", os.path.join(src, file), "-o", obj])
        objs.append(obj)
    bins["peers"] = os.path.join(work, "bench-peers")
    compile_([cxx, *FLAGS["harness"], os.path.join(src, "harness.cpp"), *objs,
              *rpath, "-o", bins["peers"]])
    return bins, commands


class Runner:
    def __init__(self, args, bins, work, log):
        self.args, self.bins, self.work, self.log = args, bins, work, log
        self.run_tool = os.path.join(args.build_dir, "bin", "linattn-run")
        self.pipelines = {
            "ours": args.pipeline,
            "masked": "linattn-lower-to-cpu{rewrite-forms=false}",
        }

    def module_path(self, c):
        path = os.path.join(self.work, "modules", c.key + ".mlir")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(decode_module(c) if c.decode else forward_module(c))
        return path

    def python_step(self, c, repeat, inputs=None, outdir=None):
        """RecurrentState.step of the Python package, in this process, from
        the state s, z: one warm-up call, then the median of `repeat` timed
        calls (the state advances; each call allocates its output)."""
        linattn = package(self.args.build_dir)
        arrays = ([np.load(x) for x in inputs] if inputs else
                  decode_inputs(c, np.random.default_rng(1)))
        q, k, v, s, z = arrays
        state = linattn.RecurrentState(c.b, c.h, c.d, c.m, eps=EPS)
        state.S[...] = s
        state.z[...] = z
        o = state.step(q, k, v)
        if outdir:
            np.save(os.path.join(outdir, "result0.npy"), o)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            state.step(q, k, v)
            times.append(time.perf_counter() - t0)
        return float(np.median(times)) * 1e3 if repeat else None

    def time(self, method, c, repeat, inputs=None, outdir=None):
        """Runs one method once (warm-up + `repeat` timed calls); returns the
        median in ms (None when repeat is 0)."""
        if method == "python":
            return self.python_step(c, repeat, inputs, outdir)
        if method in ("ours", "masked"):
            cmd = [self.run_tool, self.module_path(c),
                   "--pipeline=" + self.pipelines[method]]
            if inputs:
                cmd += ["--input=" + x for x in inputs]
            else:
                cmd += ["--random-seed=1"]
            if outdir:
                cmd += ["--output-dir=" + outdir]
        else:
            peer = "ft-step" if (method == "ft" and c.decode) else method
            cmd = [self.bins["peers"], peer, str(c.b), str(c.h), str(c.t),
                   str(c.d), str(c.m)]
            cmd += ["--input=" + x for x in inputs] if inputs else ["--seed=1"]
            if outdir:
                cmd += ["--output=" + os.path.join(outdir, "result0.npy")]
        if repeat:
            cmd.append(f"--repeat={repeat}")
        out = sh(cmd, self.log)
        return median_ms(out)[0] if repeat else None


def package(build_dir):
    """The Python package of this tree, on the build's library."""
    os.environ.setdefault("LINATTN_LIBRARY", os.path.join(
        build_dir, "lib", "libLinAttnCAPI.so"))
    path = os.path.join(ROOT, "python")
    if path not in sys.path:
        sys.path.insert(0, path)
    import linattn
    return linattn


def decode_inputs(c, rng):
    """q, k, v of one token and a state (s, z) that a few real tokens
    produced, so that the normalizer is positive."""
    q = rng.uniform(-1, 1, (c.b, c.h, c.d)).astype(np.float32)
    k = rng.uniform(-1, 1, (c.b, c.h, c.d)).astype(np.float32)
    v = rng.uniform(-1, 1, (c.b, c.h, c.m)).astype(np.float32)
    ks = elu1(rng.uniform(-1, 1, (5, c.b, c.h, c.d)))
    vs = rng.uniform(-1, 1, (5, c.b, c.h, c.m))
    s = np.einsum("tbhf,tbhm->bhfm", ks, vs).astype(np.float32)
    z = ks.sum(0).astype(np.float32)
    return [q, k, v, s, z]


# ===----------------------------------------------------------------------=== #
# Correctness checks
# ===----------------------------------------------------------------------=== #


def run_checks(runner, cases, work):
    """Every implementation on small shapes, against float64 references and
    against ours. Returns (rows, ok)."""
    rows, ok = [], True
    rng = np.random.default_rng(20240)
    for c in cases:
        d = os.path.join(work, "check", c.key)
        os.makedirs(d, exist_ok=True)
        if c.decode:
            arrays = decode_inputs(c, rng)
            q, k, v, s, z = arrays
            ref = ref_step(q, k, v, s.astype(np.float64), z.astype(np.float64))
        else:
            arrays = [rng.uniform(-1, 1, (c.b, c.h, c.t, n)).astype(np.float32)
                      for n in (c.d, c.d, c.m)]
            q, k, v = arrays
            ref = ref_linear(q, k, v)
        inputs = []
        for name, a in zip("qkvsz", arrays):
            path = os.path.join(d, name + ".npy")
            np.save(path, a)
            inputs.append(path)
        methods = methods_for(c)
        outs = {}
        for method in methods:
            od = os.path.join(d, method)
            os.makedirs(od, exist_ok=True)
            runner.time(method, c, 0, inputs=inputs, outdir=od)
            outs[method] = np.load(os.path.join(od, "result0.npy"))
        for method in methods:
            if method == "softmax":
                err, vs_ours, against = rel_err(outs[method], ref_softmax(q, k, v)), None, "float64 softmax"
            else:
                err, against = rel_err(outs[method], ref), "float64 linear"
                vs_ours = None if method == "ours" else rel_err(
                    outs[method], outs["ours"].astype(np.float64))
            bound = 1e-4
            good = err <= bound and (vs_ours is None or vs_ours <= bound)
            ok = ok and good
            rows.append((c, method, err, against, vs_ours, good))
    return rows, ok


# ===----------------------------------------------------------------------=== #
# The timed runs
# ===----------------------------------------------------------------------=== #


def plan_and_time(runner, cases, peak, args):
    """Times every method on every case. A quadratic method is estimated,
    not run, where one call would take longer than --max-call seconds or its
    scores would not fit --max-scores-gib; the estimate is its own flop count
    at the rate it reached with the same D at the same T, else at the largest
    T it ran."""
    results = []
    # (method, D) -> {T: own flops per second}: every method runs at least
    # once per feature size; estimates use the rate at the same T, else at
    # the largest T run.
    rate = {}
    for c in cases:
        for method in methods_for(c):
            own = c.own_flops(method)
            known = rate.get((method, c.d), {})
            r = known.get(c.t, known[max(known)] if known else None)
            est = own / r if r else None
            too_big = (method == "masked" and
                       c.scores_bytes() > args.max_scores_gib * 2**30)
            too_slow = method in QUADRATIC and est is not None and est > args.max_call
            row = {"case": c, "method": method, "own_flops": own}
            if too_big or too_slow:
                why = ("scores over %g GiB" % args.max_scores_gib if too_big
                       else "call over %g s" % args.max_call)
                if est is None:
                    why += ", no rate to estimate from"
                row.update(ms=est * 1e3 if est else float("nan"), repeats=0,
                           estimated=True, why=why)
                results.append(row)
                print(f"  {c.name:22s} {method:8s} estimated ({why})", flush=True)
                continue
            budget = args.budget_decode if c.decode else args.budget
            max_rep = args.max_repeat_decode if c.decode else args.max_repeat
            t0 = time.time()
            pilot = None
            if est is None:
                # No rate yet: a pilot call sets the number of repeats (the
                # quick mode's tiny shapes just take the most).
                if args.quick:
                    est = 0.0
                else:
                    pilot = runner.time(method, c, 1)
                    est = pilot * 1e-3
            repeats = int(max(1, min(max_rep, budget / max(est, 1e-9))))
            ms = pilot if (pilot is not None and repeats == 1) else \
                runner.time(method, c, repeats)
            wall = time.time() - t0
            row.update(ms=ms, repeats=repeats, estimated=False, why="")
            results.append(row)
            rate.setdefault((method, c.d), {})[c.t] = own / (ms * 1e-3)
            print(f"  {c.name:22s} {method:8s} {ms:12.4f} ms  "
                  f"(median of {repeats}, {wall:.1f} s)", flush=True)
    return results


# ===----------------------------------------------------------------------=== #
# Reporting
# ===----------------------------------------------------------------------=== #


def machine_description(args, peak_info, commands):
    lines = []
    cpu, flags = "unknown", ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        m = re.search(r"^model name\s*:\s*(.*)$", text, re.M)
        cpu = m.group(1) if m else cpu
        m = re.search(r"^flags\s*:\s*(.*)$", text, re.M)
        flags = m.group(1) if m else ""
    except OSError:
        pass

    def first_line(cmd):
        try:
            return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "unknown"

    simd = [f for f in flags.split() if f.startswith(("avx", "fma", "sse4"))]
    # "-dirty" with local changes to tracked files.
    commit = first_line(["git", "-C", ROOT, "describe", "--always", "--dirty"])
    lines += [
        f"date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"cpu: {cpu}",
        f"cores (OpenMP procs): {os.cpu_count()}",
        f"simd flags: {' '.join(simd)}",
        f"kernel: {platform.system()} {platform.release()}",
        f"compiler (peers): {first_line([args.cxx, '--version'])}",
        f"linattn: {commit}, "
        f"pipeline {args.pipeline}",
        f"OMP_NUM_THREADS: {os.environ.get('OMP_NUM_THREADS', '(unset)')}",
        f"GLIBC_TUNABLES: {os.environ.get('GLIBC_TUNABLES', '(unset)')}",
        f"measured fp32 FMA peak ({peak_info.get('isa')}): "
        f"{float(peak_info['peak_1core_gflops']):.1f} GFLOP/s on 1 core, "
        f"{float(peak_info['peak_allcore_gflops']):.1f} GFLOP/s on "
        f"{peak_info.get('threads')} cores",
    ]
    if "avx2_allcore_gflops" in peak_info:
        lines.append(f"  (256-bit FMAs: {float(peak_info['avx2_1core_gflops']):.1f} / "
                     f"{float(peak_info['avx2_allcore_gflops']):.1f} GFLOP/s)")
    one, all_ = float(peak_info["peak_1core_gflops"]), float(peak_info["peak_allcore_gflops"])
    threads = int(peak_info.get("threads", 1))
    if threads > 1 and all_ < 0.75 * threads * one:
        lines.append(f"WARNING: the all-core peak is {all_ / one:.2f}x the 1-core peak on "
                     f"{threads} cores: other processes were using the cores, "
                     f"so every number of this run is disturbed")
    lines.append(f"load average at the start: {LOADAVG}")
    lines.append("build commands:")
    lines += ["  " + c for c in commands]
    lines.append(f"all cpu flags: {flags}")
    return lines


def fmt_ms(row):
    ms = row["ms"]
    if ms != ms:  # NaN
        return "n/a"
    s = f"{ms:.3f}" if ms < 100 else f"{ms:.1f}"
    return f"~{s} (est.)" if row["estimated"] else s


def report(results, checks, peak, machine, args, outdir, elapsed):
    by = {(r["case"].key, r["method"]): r for r in results}
    cases = []
    for r in results:
        if r["case"] not in cases:
            cases.append(r["case"])
    peak_all = peak

    # CSV.
    csv_path = os.path.join(outdir, "cpu.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "B", "H", "T", "D", "Dv", "decode", "method", "ms",
                    "repeats", "estimated", "flops", "gflops", "pct_peak",
                    "own_flops", "own_gflops", "bytes", "speedup_of_ours"])
        for r in results:
            c = r["case"]
            ours = by.get((c.key, "ours"))
            ms = r["ms"]
            g = c.flops() / (ms * 1e-3) * 1e-9 if ms == ms else float("nan")
            og = r["own_flops"] / (ms * 1e-3) * 1e-9 if ms == ms else float("nan")
            sp = ms / ours["ms"] if ours and ours["ms"] == ours["ms"] else float("nan")
            w.writerow([c.name, c.b, c.h, c.t, c.d, c.m, int(c.decode), r["method"],
                        f"{ms:.6f}", r["repeats"], int(r["estimated"]), c.flops(),
                        f"{g:.3f}", f"{100 * g / peak_all:.2f}", r["own_flops"],
                        f"{og:.3f}", c.bytes(), f"{sp:.3f}"])

    # Markdown.
    md = []
    md.append("# CPU benchmark: causal linear attention, fp32\n")
    md.append("Generated by `make bench` (`bench/run.py`); see `bench/README.md` "
              "for what is measured and how.\n")
    md.append("## Machine\n")
    md.append("```")
    md += [l for l in machine if not l.startswith("all cpu flags")]
    md.append("```\n")
    md.append("## Results\n")
    md.append(f"Median of N calls after one warm-up call. GFLOP/s use the common "
              f"flop count (per token and head 4·F·Dv + 4·F + 4·D) for every "
              f"method, so they compare times; `own` is a quadratic method's "
              f"own (causal-half) flop count per second. % of peak is of the "
              f"measured all-core FMA peak ({peak_all:.1f} GFLOP/s). "
              f"`×ours` is the peer's time over ours (> 1: ours is faster). "
              f"`est.` rows were not run: their time is their own flop count at "
              f"the rate the method reached with the same D at the same T, "
              f"else at the largest T it ran.\n")
    md.append("| shape | method | ms | N | GFLOP/s | % peak | own GFLOP/s | ×ours |")
    md.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for c in cases:
        for method in methods_for(c):
            r = by.get((c.key, method))
            if not r:
                continue
            ms = r["ms"]
            ours = by[(c.key, "ours")]["ms"]
            if ms == ms:
                g = c.flops() / (ms * 1e-3) * 1e-9
                og = r["own_flops"] / (ms * 1e-3) * 1e-9
                gs, ps = f"{g:.2f}", f"{100 * g / peak_all:.1f}"
                ogs = f"{og:.2f}" if method in QUADRATIC else ""
                sp = "" if method == "ours" else f"{ms / ours:.2f}"
            else:
                gs = ps = ogs = sp = "n/a"
            extra = ""
            if c.decode and method in ("ours", "python"):
                extra = f" ({ms * 1e3:.1f} µs/token, {c.bytes() / (ms * 1e-3) * 1e-9:.2f} GB/s of state)"
            md.append(f"| {c.name} | {label(method, c)}{extra} | {fmt_ms(r)} | "
                      f"{r['repeats'] or '-'} | {gs} | {ps} | {ogs} | {sp} |")
    md.append("")

    # Targets (issue 5: reported, not asserted).
    md.append("## Targets\n")
    big = [c for c in cases if not c.decode and c.series is None]
    if big:
        c = big[0]
        ours, ft = by[(c.key, "ours")], by[(c.key, "ft")]
        pct = 100 * c.flops() / (ours["ms"] * 1e-3) * 1e-9 / peak_all
        md.append(f"- {c.name}, fraction of the measured all-core FMA peak: "
                  f"{pct:.1f}% (target ≥ 60%: {'met' if pct >= 60 else 'missed'})")
        sp = ft["ms"] / ours["ms"]
        md.append(f"- {c.name}, speedup over the fast-transformers algorithm: "
                  f"{sp:.2f}× (target ≥ 5×: {'met' if sp >= 5 else 'missed'})")
    for series in sorted({c.series for c in cases if c.series},
                         key=lambda s: int(s.rsplit("D", 1)[1])):
        sc = sorted([c for c in cases if c.series == series], key=lambda c: c.t)
        lo, hi = by[(sc[0].key, "ours")], by[(sc[-1].key, "ours")]
        ratio = (hi["ms"] / sc[-1].t) / (lo["ms"] / sc[0].t)
        md.append(f"- {series}, time per token at T={sc[-1].t} over T={sc[0].t}: "
                  f"{ratio:.3f} (target within 10% of linear: "
                  f"{'met' if abs(ratio - 1) <= 0.10 else 'missed'})")
    md.append("")

    md.append("## Correctness on small shapes\n")
    md.append("Relative error = max |x − ref| / max |ref|. Linear methods are "
              "compared with a float64 numpy reference and with ours; softmax "
              "with a float64 softmax. Bound: 1e-4.\n")
    md.append("| shape | method | vs float64 | vs ours | |")
    md.append("|---|---|---:|---:|---|")
    for c, method, err, against, vs_ours, good in checks:
        vo = "" if vs_ours is None else f"{vs_ours:.2e}"
        md.append(f"| {c.name} | {label(method, c)} | {err:.2e} | {vo} | "
                  f"{'ok' if good else 'FAIL'} |")
    md.append("")
    md.append(f"Whole run: {elapsed:.0f} s.\n")
    md_text = "\n".join(md)
    with open(os.path.join(outdir, "cpu.md"), "w") as f:
        f.write(md_text)
    with open(os.path.join(outdir, "machine.txt"), "w") as f:
        f.write("\n".join(machine) + "\n")
    return md_text


def plot(results, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: matplotlib is missing, no plot (pip install matplotlib)")
        return None
    series = sorted({r["case"].series for r in results if r["case"].series},
                    key=lambda s: int(s.rsplit("D", 1)[1]))
    fig, axes = plt.subplots(1, len(series), figsize=(6 * len(series), 4.5),
                             squeeze=False)
    styles = {"ours": ("C0", "o"), "ft": ("C1", "s"), "softmax": ("C3", "^"),
              "masked": ("C2", "D")}
    for ax, s in zip(axes[0], series):
        ts = []
        for method in METHODS:
            rows = sorted([r for r in results if r["case"].series == s
                           and r["method"] == method and r["ms"] == r["ms"]],
                          key=lambda r: r["case"].t)
            if not rows:
                continue
            color, marker = styles[method]
            x = [r["case"].t for r in rows]
            y = [r["ms"] for r in rows]
            ts = sorted(set(ts) | set(x))
            ax.plot(x, y, color=color, label=LABELS[method])
            for xi, yi, r in zip(x, y, rows):
                ax.plot([xi], [yi], marker=marker, color=color,
                        markerfacecolor="none" if r["estimated"] else color)
        if ts:
            ours = sorted([r for r in results if r["case"].series == s
                           and r["method"] == "ours"], key=lambda r: r["case"].t)
            t0, y0 = ours[0]["case"].t, ours[0]["ms"]
            ax.plot(ts, [y0 * t / t0 for t in ts], ":", color="gray",
                    label="∝ T (from ours at the smallest T)")
            ax.plot(ts, [y0 * (t / t0) ** 2 for t in ts], "--", color="gray",
                    label="∝ T²")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length T")
        ax.set_ylabel("time per call (ms)")
        ax.set_title(f"causal attention, {s}, fp32 (hollow: estimated)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(outdir, "cpu.png")
    fig.savefig(path, dpi=110)
    return path


# ===----------------------------------------------------------------------=== #
# Main
# ===----------------------------------------------------------------------=== #


def peak_and_machine(args, work, log):
    """For the scripts without C++ peers: builds and runs the FMA peak
    measurement; returns the all-core peak (GFLOP/s) and the machine block."""
    print("bench: measuring the fp32 FMA peak", flush=True)
    binary, command = build_peak(args.cxx, work, log)
    peak_info = measure_peak(binary, args.quick, log)
    return (float(peak_info["peak_allcore_gflops"]),
            machine_description(args, peak_info, [command]))


def add_common_arguments(p, check_only, cxx):
    """The options every CPU benchmark script takes (bench/run.sh hands them
    all the same ones); `check_only` and `cxx` are those options' help."""
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true",
                   help="tiny shapes, few repeats: a smoke test")
    p.add_argument("--check-only", action="store_true", help=check_only)
    p.add_argument("--out", help="results directory (default bench/results, "
                   "or <work>/results with --quick)")
    p.add_argument("--work-dir", help="scratch directory (default "
                   "<build>/bench/quick or full)")
    p.add_argument("--cxx", default=None, help=cxx)
    p.add_argument("--pipeline", default="linattn-lower-to-cpu",
                   help="linattn-run pipeline of `ours`")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds of timed calls per measurement (sets N)")
    p.add_argument("--max-repeat", type=int, default=None)


def resolve_common_arguments(args, max_repeat):
    """Fills in the defaults of `add_common_arguments`' options (`max_repeat`
    calls at most in a full run); returns the work and results directories,
    created."""
    args.build_dir = os.path.abspath(args.build_dir)
    if args.cxx is None:
        args.cxx = build_cxx(args.build_dir)
    if args.budget is None:
        args.budget = 0.2 if args.quick else 3.0
    if args.max_repeat is None:
        args.max_repeat = 3 if args.quick else max_repeat
    work = os.path.abspath(args.work_dir or os.path.join(
        args.build_dir, "bench", "quick" if args.quick else "full"))
    outdir = os.path.abspath(args.out or (os.path.join(work, "results")
                                          if args.quick
                                          else os.path.join(HERE, "results")))
    os.makedirs(work, exist_ok=True)
    os.makedirs(outdir, exist_ok=True)
    return work, outdir


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(p, check_only="build the peers and run the "
                         "correctness checks only",
                         cxx="compiler of the C++ peers (default: the build's)")
    p.add_argument("--max-call", type=float, default=None,
                   help="estimate, not run, a quadratic method whose call "
                   "would take longer (seconds)")
    p.add_argument("--max-scores-gib", type=float, default=2.0,
                   help="estimate, not run, the masked form when its scores "
                   "tensor is larger")
    args = p.parse_args()
    # Every timed program (ours and the peers) allocates its output inside the
    # timed call. glibc would hand out fresh mmap'd pages for each large
    # output and return them on free, so every call would pay page faults
    # (and the kernel's zeroing) for its output: here that is most of the
    # time of a 128 MiB output. Keeping freed memory in the heap measures the
    # computation, the same way for all.
    os.environ.setdefault("GLIBC_TUNABLES", GLIBC_TUNABLES)
    work, outdir = resolve_common_arguments(args, max_repeat=20)
    if args.max_call is None:
        args.max_call = 5.0 if args.quick else 12.0
    args.budget_decode = 0.2 if args.quick else 1.0
    args.max_repeat_decode = 50 if args.quick else 2000
    if not os.access(os.path.join(args.build_dir, "bin", "linattn-run"), os.X_OK):
        sys.exit(f"bench: no linattn-run in {args.build_dir}/bin: build first (make build)")
    start = time.time()
    log = open(os.path.join(work, "bench.log"), "w")
    print(f"bench: log in {log.name}", flush=True)

    print("bench: building the peers", flush=True)
    bins, commands = build_peers(args.cxx, work, log)
    runner = Runner(args, bins, work, log)

    print("bench: checking every implementation on small shapes", flush=True)
    checks, ok = run_checks(runner, check_cases(args.quick), work)
    for c, method, err, against, vs_ours, good in checks:
        vo = "" if vs_ours is None else f", vs ours {vs_ours:.2e}"
        print(f"  {c.name:22s} {method:8s} vs {against} {err:.2e}{vo} "
              f"{'ok' if good else 'FAIL'}", flush=True)
    if not ok:
        sys.exit("bench: an implementation is wrong (see above)")
    if args.check_only:
        print("bench: all checks passed")
        return

    print("bench: measuring the fp32 FMA peak", flush=True)
    peak_info = measure_peak(bins["peak"], args.quick, log)
    peak = float(peak_info["peak_allcore_gflops"])
    print(f"  {peak_info['isa']}: {float(peak_info['peak_1core_gflops']):.1f} GFLOP/s "
          f"1 core, {peak:.1f} GFLOP/s {peak_info['threads']} cores", flush=True)

    print("bench: timing", flush=True)
    results = plan_and_time(runner, quick_cases() if args.quick else full_cases(),
                            peak, args)
    machine = machine_description(args, peak_info, commands)
    md = report(results, checks, peak, machine, args, outdir, time.time() - start)
    png = plot(results, outdir)
    print()
    print(md)
    print(f"bench: results in {outdir} (cpu.md, cpu.csv, machine.txt"
          f"{', cpu.png' if png else ''})")


if __name__ == "__main__":
    main()
