#!/usr/bin/env python3
# ===- linear_form.py - non-causal linear attention on the CPU ------------=== #
#
# Part of the linattn project.
#
# ===----------------------------------------------------------------------=== #
"""Non-causal linear attention on the CPU: linattn against numpy/OpenBLAS.

    python3 bench/linear_form.py [--build-dir build] [--quick] [--out DIR]

Measures, side by side in one run and with run.py's methodology (one warm-up
call, then the median of N calls, each call allocating its output):
  ours    linattn-run on `linattn.attention elu %q, %k, %v normalize`
          (not causal) with the default `linattn-lower-to-cpu`, which
          reassociates it into kv_summary + query_readout and lowers those
          to the CPU kernels;
  python  the same through the Python package, in this process:
          `linattn.linear_attention(q, k, v, causal=False, out=o)` on numpy
          arrays (compiled once before the timing, `o` allocated once), what
          a numpy user gets, overhead of the call included;
  numpy   the same math in float32 numpy, in this process: elu+1 of Q and K,
          S = φ(K)ᵀV by OpenBLAS' batched sgemm, z = Σ φ(k), φ(Q)S, the
          denominators φ(Q)z + eps and the division (numpy's own threads);
  blas    numpy's products alone, on φ(Q) and φ(K) computed before the
          timing: what OpenBLAS does with the matrix work, credited with the
          same flop count (the feature maps it skips included);
and the machine's fp32 FMA peak (src/peak_fma.cpp, built as run.py builds
it). All are first checked on small shapes against a float64 reference.
Results: <out>/cpu-linear.{md,csv}.
"""

import argparse
import csv
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as cpu  # noqa: E402  (the causal benchmark's helpers)

EPS = cpu.EPS
METHODS = ["ours", "python", "numpy", "blas"]
LABELS = {
    "ours": "linattn (kv_summary + query_readout)",
    "python": "linattn Python API (into a given out)",
    "numpy": "numpy float32 (OpenBLAS sgemm)",
    "blas": "numpy, products only (features given)",
}


class Case:
    """Non-causal attention of N queries over M keys, [B, H, ·, D], Dv = D."""

    def __init__(self, b, h, n, m, d):
        self.b, self.h, self.n, self.m, self.d = b, h, n, m, d

    @property
    def name(self):
        def tokens(t):
            return f"{t // 1024}K" if t % 1024 == 0 else str(t)
        seq = (f"T{tokens(self.n)}" if self.n == self.m
               else f"N{tokens(self.n)}·M{tokens(self.m)}")
        return f"B{self.b}·H{self.h}·{seq}·D{self.d}"

    @property
    def key(self):
        return f"b{self.b}_h{self.h}_n{self.n}_m{self.m}_d{self.d}"

    def flops(self):
        """Per batch element and head: S = φ(K)ᵀV 2·M·F·Dv, z M·F, the readout
        2·N·F·Dv, the denominators 2·N·F, the division N·Dv, elu+1 on q and
        k 2·D per element (as run.py counts it); F = Dv = D."""
        f = dv = self.d
        n, m = self.n, self.m
        return self.b * self.h * (2 * m * f * dv + m * f + 2 * n * f * dv +
                                  2 * n * f + n * dv + 2 * self.d * (n + m))

    def bytes(self):
        """Compulsory traffic: read q, k, v, write o (f32)."""
        return 4 * self.b * self.h * (2 * self.n * self.d + 2 * self.m * self.d)

    def module(self):
        qt = f"tensor<{self.b}x{self.h}x{self.n}x{self.d}xf32>"
        kt = f"tensor<{self.b}x{self.h}x{self.m}x{self.d}xf32>"
        return f"""// Non-causal normalized linear attention with elu+1 features.
func.func @attention(%q: {qt}, %k: {kt}, %v: {kt}) -> {qt} {{
  %o = linattn.attention elu %q, %k, %v normalize(eps = {EPS:.1e})
      : {qt}, {kt}, {kt} -> {qt}
  return %o : {qt}
}}
"""


def full_cases():
    return [Case(1, 8, 1024, 1024, 64), Case(1, 8, 4096, 4096, 64),
            Case(1, 8, 16384, 16384, 64), Case(8, 16, 4096, 4096, 64),
            Case(1, 8, 4096, 4096, 128), Case(8, 16, 4096, 4096, 128),
            Case(1, 8, 1024, 16384, 64)]


def quick_cases():
    return [Case(1, 2, 256, 256, 32), Case(2, 4, 128, 512, 32)]


def check_cases():
    return [Case(1, 2, 1, 1, 16), Case(2, 3, 7, 13, 64), Case(1, 2, 300, 129, 128)]


def numpy_attention(q, k, v):
    """The peer: float32 numpy, matrix products by OpenBLAS."""
    fq, fk = cpu.elu1(q).astype(np.float32), cpu.elu1(k).astype(np.float32)
    return numpy_products(fq, fk, v)


def numpy_products(fq, fk, v):
    """The peer's products on given features."""
    s = np.matmul(np.swapaxes(fk, -1, -2), v)
    z = fk.sum(axis=-2)
    den = np.matmul(fq, z[..., None]) + np.float32(EPS)
    return np.matmul(fq, s) / den


def reference(q, k, v):
    fq, fk = cpu.elu1(q.astype(np.float64)), cpu.elu1(k.astype(np.float64))
    s = np.swapaxes(fk, -1, -2) @ v.astype(np.float64)
    return (fq @ s) / (fq @ fk.sum(-2)[..., None] + EPS)


def inputs_for(c, rng):
    q = rng.uniform(-1, 1, (c.b, c.h, c.n, c.d)).astype(np.float32)
    k = rng.uniform(-1, 1, (c.b, c.h, c.m, c.d)).astype(np.float32)
    v = rng.uniform(-1, 1, (c.b, c.h, c.m, c.d)).astype(np.float32)
    return q, k, v


class Runner:
    def __init__(self, args, work, log):
        self.build_dir = args.build_dir
        self.run_tool = os.path.join(args.build_dir, "bin", "linattn-run")
        self.pipeline = args.pipeline
        self.work, self.log = work, log

    def ours(self, c, repeat, inputs=None, outdir=None):
        path = os.path.join(self.work, "modules", c.key + ".mlir")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(c.module())
        cmd = [self.run_tool, path, "--pipeline=" + self.pipeline]
        cmd += (["--input=" + x for x in inputs] if inputs
                else ["--random-seed=1"])
        if outdir:
            cmd.append("--output-dir=" + outdir)
        if repeat:
            cmd.append(f"--repeat={repeat}")
        out = cpu.sh(cmd, self.log)
        return cpu.median_ms(out)[0] if repeat else None

    @staticmethod
    def numpy(c, repeat, products_only=False):
        q, k, v = inputs_for(c, np.random.default_rng(1))
        if products_only:
            q = cpu.elu1(q).astype(np.float32)
            k = cpu.elu1(k).astype(np.float32)
        call = numpy_products if products_only else numpy_attention
        call(q, k, v)  # warm-up
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            call(q, k, v)
            times.append(time.perf_counter() - t0)
        return float(np.median(times)) * 1e3

    def python(self, c, repeat):
        linattn = cpu.package(self.build_dir)
        q, k, v = inputs_for(c, np.random.default_rng(1))
        o = np.empty_like(q)
        linattn.linear_attention(q, k, v, causal=False, out=o)  # compiles
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            linattn.linear_attention(q, k, v, causal=False, out=o)
            times.append(time.perf_counter() - t0)
        return float(np.median(times)) * 1e3

    def time(self, method, c, repeat):
        if method == "ours":
            return self.ours(c, repeat)
        if method == "python":
            return self.python(c, repeat)
        return self.numpy(c, repeat, products_only=method == "blas")


def run_checks(runner, work):
    rows, ok = [], True
    rng = np.random.default_rng(20241)
    for c in check_cases():
        d = os.path.join(work, "check", c.key)
        os.makedirs(d, exist_ok=True)
        q, k, v = inputs_for(c, rng)
        paths = []
        for name, a in zip("qkv", (q, k, v)):
            paths.append(os.path.join(d, name + ".npy"))
            np.save(paths[-1], a)
        runner.ours(c, 0, inputs=paths, outdir=d)
        ref = reference(q, k, v)
        python = cpu.package(runner.build_dir).linear_attention(
            q, k, v, causal=False)
        for method, out in (("ours", np.load(os.path.join(d, "result0.npy"))),
                            ("python", python),
                            ("numpy", numpy_attention(q, k, v))):
            err = cpu.rel_err(out, ref)
            good = err <= 1e-5
            ok = ok and good
            rows.append((c, method, err, good))
    return rows, ok


def time_all(runner, cases, args):
    results = []
    for c in cases:
        for method in METHODS:
            pilot = runner.time(method, c, 1)
            repeats = int(max(1, min(args.max_repeat,
                                     args.budget / max(pilot * 1e-3, 1e-9))))
            ms = runner.time(method, c, repeats)
            results.append({"case": c, "method": method, "ms": ms,
                             "repeats": repeats})
            print(f"  {c.name:24s} {method:6s} {ms:10.3f} ms (median of "
                  f"{repeats})", flush=True)
    return results


def report(results, checks, peak, machine, outdir):
    ours = {r["case"].key: r["ms"] for r in results if r["method"] == "ours"}
    md = ["# CPU benchmark: non-causal linear attention, fp32\n",
          "Generated by `bench/linear_form.py` (see `bench/README.md`).\n",
          "## Machine\n", "```", *machine,
          f"numpy {np.__version__}, BLAS: {blas_name()}", "```\n",
          "## Results\n",
          "Median of N calls after one warm-up call; every call allocates its "
          "output, except the Python API's, which writes a given array. "
          "GFLOP/s use the common flop count of `Case.flops` "
          "(S = φ(K)ᵀV, z, the readout, the denominators, the division, elu+1) "
          f"for every method; % of peak is of the measured all-core FMA peak "
          f"({peak:.1f} GFLOP/s). GB/s is the compulsory traffic (q, k, v "
          "read, o written) over the time. `×ours` is the peer's time over "
          "ours (> 1: ours is faster).\n",
          "| shape | method | ms | N | GFLOP/s | % peak | GB/s | ×ours |",
          "|---|---|---:|---:|---:|---:|---:|---:|"]
    rows = []
    for r in results:
        c = r["case"]
        gflops = c.flops() / (r["ms"] * 1e-3) / 1e9
        gbs = c.bytes() / (r["ms"] * 1e-3) / 1e9
        ratio = "" if r["method"] == "ours" else f"{r['ms'] / ours[c.key]:.2f}"
        label = LABELS[r["method"]]
        md.append(f"| {c.name} | {label} | {r['ms']:.3f} | {r['repeats']} | "
                  f"{gflops:.2f} | {100 * gflops / peak:.1f} | {gbs:.2f} | "
                  f"{ratio} |")
        rows.append([c.name, c.b, c.h, c.n, c.m, c.d, r["method"],
                     f"{r['ms']:.4f}", r["repeats"], f"{gflops:.3f}",
                     f"{100 * gflops / peak:.2f}", f"{gbs:.3f}", ratio])
    md += ["", "## Correctness on small shapes\n",
           "max |out − ref| / max |ref| against a float64 reference; bound 1e-5.\n",
           "| shape | method | error | |", "|---|---|---:|---|"]
    for c, method, err, good in checks:
        md.append(f"| {c.name} | {method} | {err:.2e} | {'ok' if good else 'FAIL'} |")
    text = "\n".join(md) + "\n"
    with open(os.path.join(outdir, "cpu-linear.md"), "w") as f:
        f.write(text)
    with open(os.path.join(outdir, "cpu-linear.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "B", "H", "N", "M", "D", "method", "ms", "repeats",
                    "gflops", "pct_peak", "gbs", "x_ours"])
        w.writerows(rows)
    return text


def blas_name():
    try:
        info = np.show_config(mode="dicts")
        blas = info["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # numpy < 1.26 has no dict form
        return "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    cpu.add_common_arguments(
        p, check_only="run the correctness checks only",
        cxx="compiler of the peak measurement (default: the build's)")
    # run.py's options for its quadratic methods, so that bench/run.sh can
    # hand both scripts the same options; there is no quadratic method here.
    p.add_argument("--max-call", type=float, help=argparse.SUPPRESS)
    p.add_argument("--max-scores-gib", type=float, help=argparse.SUPPRESS)
    args = p.parse_args()
    os.environ.setdefault("GLIBC_TUNABLES", cpu.GLIBC_TUNABLES)
    work, outdir = cpu.resolve_common_arguments(args, max_repeat=20)
    if not os.access(os.path.join(args.build_dir, "bin", "linattn-run"), os.X_OK):
        sys.exit(f"bench: no linattn-run in {args.build_dir}/bin: build first")
    log = open(os.path.join(work, "linear-bench.log"), "w")
    print(f"bench: log in {log.name}", flush=True)
    runner = Runner(args, work, log)

    print("bench: checking every implementation on small shapes", flush=True)
    checks, ok = run_checks(runner, work)
    for c, method, err, good in checks:
        print(f"  {c.name:24s} {method:6s} vs float64 {err:.2e} "
              f"{'ok' if good else 'FAIL'}", flush=True)
    if not ok:
        sys.exit("bench: an implementation is wrong (see above)")
    if args.check_only:
        print("bench: all checks passed")
        return

    peak, machine = cpu.peak_and_machine(args, work, log)

    print("bench: timing", flush=True)
    results = time_all(runner, quick_cases() if args.quick else full_cases(), args)
    text = report(results, checks, peak, machine, outdir)
    print()
    print(text)
    print(f"bench: results in {outdir} (cpu-linear.md, cpu-linear.csv)")


if __name__ == "__main__":
    main()
