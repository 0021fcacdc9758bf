#!/usr/bin/env python3
# ===- token_major.py - attention on [B, N, H, D] tensors on the CPU ------=== #
#
# Part of the linattn project.
#
# ===----------------------------------------------------------------------=== #
"""What a token-major caller pays on the CPU: causal normalized elu+1
attention on [B, N, H, D] tensors (JAX, Flax, the reference code of
"Transformers are RNNs"), written as importers emit it and raised by
linattn-raise, against the same attention on heads-first [B, H, N, D].

    python3 bench/token_major.py [--build-dir build] [--quick] [--out DIR]

Measures, side by side in one run and with run.py's methodology (one warm-up
call, then the median of N calls):
  heads-first  linattn-run on `linattn.attention` [B, H, N, D] (run.py's
               module) with the default linattn-lower-to-cpu;
  token-major  linattn-run on the importer-style linalg of the same
               attention on [B, N, H, D] (the generator of
               test/Integration/CPU/cpu_cases.py): einsum generics, a causal
               select, row sums and a division, raised by the default
               pipeline into transposes of Q, K and V, the scan, and a
               transpose of O, which the scan kernel reads and writes in
               place through strided views;
  transpose    one linalg.transpose [B, N, H, D] -> [B, H, N, D]: what each
               of those four transposes would cost as a copy.
Each shape's token-major output is compared with the heads-first output on
the same inputs, and a small shape with the float64 reference.
Results: <out>/cpu-token-major.md.
"""

import argparse
import os
import platform
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "Integration", "CPU"))
import run as cpu  # noqa: E402  (the causal benchmark's helpers)
import cpu_cases as cc  # noqa: E402  (the importer-style IR generators)


def heads_first_module(b, h, n, d):
    return cpu.forward_module(cpu.Case(b, h, n, d))


def transpose_module(b, h, n, d):
    src, dst = f"tensor<{b}x{n}x{h}x{d}xf32>", f"tensor<{b}x{h}x{n}x{d}xf32>"
    return f"""func.func @main(%x: {src}) -> {dst} {{
  %e = tensor.empty() : {dst}
  %t = linalg.transpose ins(%x : {src}) outs(%e : {dst}) permutation = [0, 2, 1, 3]
  return %t : {dst}
}}
"""


class Runner:
    def __init__(self, build_dir, work, log, repeat):
        self.run = os.path.join(build_dir, "bin", "linattn-run")
        self.work, self.log, self.repeat = work, log, repeat
        self.env = dict(os.environ, GLIBC_TUNABLES=cpu.GLIBC_TUNABLES)

    def time(self, name, mlir, inputs, repeat=None):
        """Runs `mlir` on the .npy `inputs`; returns (ms, calls, result)."""
        d = os.path.join(self.work, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "kernel.mlir")
        with open(path, "w") as f:
            f.write(mlir)
        cmd = [self.run, path, f"--output-dir={d}",
               f"--repeat={repeat or self.repeat}"]
        cmd += [f"--input={i}" for i in inputs]
        out = cpu.sh(cmd, self.log, env=self.env)
        ms, calls = cpu.median_ms(out)
        return ms, calls, np.load(os.path.join(d, "result0.npy"))


def save_inputs(work, key, arrays):
    paths = []
    for name, a in zip("qkv", arrays):
        path = os.path.join(work, f"{key}_{name}.npy")
        np.save(path, a)
        paths.append(path)
    return paths


def measure(runner, b, h, n, d, rng):
    """Times the three programs on one shape; returns a result row."""
    key = f"b{b}_h{h}_n{n}_d{d}"
    tm = [rng.uniform(-1, 1, (b, n, h, d)).astype(np.float32) for _ in range(3)]
    hf = [np.ascontiguousarray(x.transpose(0, 2, 1, 3)) for x in tm]
    case = cc.token_major_attention_case(b, n, h, d, d, causal=True,
                                         reference=False)
    tm_ms, calls, tm_out = runner.time(key + "_token_major", case.mlir,
                                       save_inputs(runner.work, key + "_tm", tm))
    hf_ms, _, hf_out = runner.time(key + "_heads_first",
                                   heads_first_module(b, h, n, d),
                                   save_inputs(runner.work, key + "_hf", hf))
    tr_ms, _, tr_out = runner.time(key + "_transpose", transpose_module(b, h, n, d),
                                   save_inputs(runner.work, key + "_tr", tm[:1]))
    if not np.array_equal(tr_out, hf[0]):
        sys.exit(f"bench: the transpose of {key} is wrong")
    err = cpu.rel_err(tm_out.transpose(0, 2, 1, 3), hf_out.astype(np.float64))
    if err > 1e-4:
        sys.exit(f"bench: token-major and heads-first differ at {key}: {err:.2e}")
    compulsory = 4 * b * h * n * 4 * d  # q, k, v read, o written
    return dict(shape=f"B{b}·N{n}·H{h}·D{d}", tm=tm_ms, hf=hf_ms, tr=tr_ms,
                calls=calls, err=err, bytes=compulsory)


def check_small(runner):
    """A small token-major shape against the float64 reference."""
    case = cc.token_major_attention_case(2, 37, 3, 16, 8, causal=True)
    inputs = save_inputs(runner.work, "check", case.inputs)
    _, _, out = runner.time("check", case.mlir, inputs, repeat=1)
    err = cpu.rel_err(out, case.expected[0])
    if err > 1e-5:
        sys.exit(f"bench: token-major attention is off the reference: {err:.2e}")
    return err


def report(rows, check_err, args):
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    cpu_name = cpu_model()
    lines = [
        "# Token-major attention on the CPU",
        "",
        f"Measured by `bench/token_major.py` on {cpu_name}, {os.cpu_count()} cores "
        f"(linattn {rev}, {platform.system()} {platform.release()}). Causal "
        "normalized elu+1 attention, Dv = D, float32; median of the timed calls "
        "after one warm-up. *token-major*: the importer-style linalg on "
        "[B, N, H, D], raised by the default `linattn-lower-to-cpu` "
        "(transposes of Q, K and V into [B, H, N, D], the scan with the feature "
        "maps fused, a transpose of O back; the kernel reads and writes the "
        "token-major buffers in place through strided views of them); "
        "*heads-first*: `linattn.attention` on [B, H, N, D]; *transpose*: one "
        "[B, N, H, D] → [B, H, N, D] copy, and *with copies* the heads-first "
        "time plus four of them, what the transposes would cost as copies. "
        "GB/s counts the compulsory bytes (Q, K, V read, O written) over the "
        "time; the transposes' GB/s counts the copy's read and write.",
        "",
        "| shape | heads-first ms (GB/s) | token-major ms (GB/s) | token-major / heads-first | one transpose ms (GB/s) | with copies ms | token-major vs heads-first (rel. err.) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        gbs = lambda ms, nbytes: nbytes / (ms * 1e-3) / 1e9
        lines.append(
            f"| {r['shape']} | {r['hf']:.3f} ({gbs(r['hf'], r['bytes']):.1f}) "
            f"| {r['tm']:.3f} ({gbs(r['tm'], r['bytes']):.1f}) "
            f"| {r['tm'] / r['hf']:.2f}× "
            f"| {r['tr']:.3f} ({gbs(r['tr'], r['bytes'] // 2):.1f}) "
            f"| {4 * r['tr'] + r['hf']:.3f} | {r['err']:.1e} |")
    lines += ["", f"A small shape (B2·N37·H3·D16) against the float64 reference: "
              f"max relative error {check_err:.1e}.", ""]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "cpu-token-major.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    print(f"wrote {path}")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "an unknown CPU"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true",
                   help="small shapes and few calls (a smoke test)")
    p.add_argument("--work-dir", default=None,
                   help="inputs, kernels and the log (default: "
                        "<build-dir>/bench/token-major)")
    p.add_argument("--out", default=None,
                   help="where cpu-token-major.md goes (default: bench/results, "
                        "or build/bench/quick/results with --quick)")
    # run.sh passes every benchmark the same options: the others' are not
    # this one's business.
    args, _ = p.parse_known_args()
    if args.out is None:
        args.out = (os.path.join(args.build_dir, "bench", "quick", "results")
                    if args.quick else os.path.join(HERE, "results"))
    work = args.work_dir or os.path.join(args.build_dir, "bench", "token-major")
    os.makedirs(work, exist_ok=True)
    shapes = ([(1, 2, 256, 32)] if args.quick else
              [(1, 8, 4096, 64), (1, 8, 16384, 64), (1, 8, 4096, 128),
               (4, 16, 1024, 64)])
    rng = np.random.default_rng(7)
    with open(os.path.join(work, "log.txt"), "w") as log:
        runner = Runner(args.build_dir, work, log, 3 if args.quick else 15)
        check_err = check_small(runner)
        rows = [measure(runner, *shape, rng) for shape in shapes]
    report(rows, check_err, args)


if __name__ == "__main__":
    main()
