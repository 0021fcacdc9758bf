#!/usr/bin/env python3
# ===- backward.py - the backward pass on the CPU --------------------------=== #
#
# Part of the linattn project.
#
# ===----------------------------------------------------------------------=== #
"""The backward pass of linear attention on the CPU, through the Python API.

    python3 bench/backward.py [--build-dir build] [--quick] [--out DIR]

Measures, side by side in one run (one warm-up call, then the median of N
calls; every call allocates its results, which are dropped before the next):
  forward          `linattn.linear_attention(q, k, v, ...)`;
  backward         `linattn.linear_attention_grad(q, k, v, do, ...)`: dq, dk,
                   dv, with the compiled code's memory from linattn's caching
                   host allocator (the default);
  backward (no cache)
                   the same with the cache's limit at 0, so that every
                   buffer comes from the C library's malloc and goes back to
                   its free, as plain compiled code does.
  training step    `linear_attention` then `linear_attention_grad`: the
                   forward and backward passes of one training step;
and, where torch is installed (it is not a dependency: rows are skipped
without it), the same training step in torch:
  torch autograd, chunked
                   elu + 1 and the chunked causal form (chunks of 64: the
                   quadratic form within a chunk, the chunks' states by a
                   cumsum of their φ(K)ᵀV, no Python loop; non-causal
                   φ(Q)(φ(K)ᵀV)) written in torch, its forward then
                   `torch.autograd.grad`: what a torch user writes without
                   a kernel library;
  linattn.torch autograd
                   `linattn.torch.linear_attention` on CPU tensors that
                   require grad, then `torch.autograd.grad`: linattn's
                   passes through its autograd function.
The process runs with glibc's default malloc settings (GLIBC_TUNABLES is
reported, and should be unset): large blocks are mmap'd and unmapped at free,
so the page faults a call pays are part of what is measured.

Gradients are first checked on small shapes against the float64 reference
(`linattn.reference.linear_attention_grad`). GFLOP/s count the products of
the unnormalized backward pass, 10·B·H·T·F·Dv (causal: dφ(Q) = dO Sᵢᵀ with
its state update, the reversed state and its two readouts for dφ(K) and dV;
not causal: S, dS and the three products with them), for every row (a lower
bound for the normalized ones); the machine's fp32 FMA peak is measured as
run.py measures it. Results: <out>/cpu-backward.{md,csv}.
"""

import argparse
import csv
import gc
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as cpu  # noqa: E402  (the causal benchmark's helpers)

METHODS = ["forward", "backward", "backward (no cache)", "training step"]
TORCH_METHODS = ["torch autograd, chunked", "linattn.torch autograd"]
TORCH_CHUNK = 64


class Case:
    """[B, H, T, D] queries, keys and values (F = Dv = D), elu+1 features."""

    def __init__(self, b, h, t, d, causal, normalize):
        self.b, self.h, self.t, self.d = b, h, t, d
        self.causal, self.normalize = causal, normalize

    @property
    def name(self):
        t = f"{self.t // 1024}K" if self.t % 1024 == 0 else str(self.t)
        kind = ("causal" if self.causal else "non-causal") + (
            ", normalized" if self.normalize else "")
        return f"B{self.b}·H{self.h}·T{t}·D{self.d} {kind}"

    def kwargs(self):
        return dict(feature_map="elu", causal=self.causal,
                    normalize=self.normalize)

    def flops(self):
        return 10 * self.b * self.h * self.t * self.d * self.d


def full_cases():
    return [Case(1, 8, 4096, 64, True, False),
            Case(1, 8, 4096, 64, True, True),
            Case(1, 8, 4096, 64, False, False),
            Case(1, 8, 4096, 128, True, False),
            Case(1, 8, 16384, 64, True, False),
            Case(4, 16, 2048, 64, True, False)]


def quick_cases():
    return [Case(1, 2, 512, 32, True, False)]


def check_cases():
    return [Case(1, 2, 37, 16, True, False), Case(2, 1, 50, 32, True, True),
            Case(1, 3, 29, 8, False, False)]


def inputs_for(c, rng):
    return [rng.uniform(-1, 1, (c.b, c.h, c.t, c.d)).astype(np.float32)
            for _ in range(4)]


def timed(fn, repeat):
    fn()  # compiles, warms the cache
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        del result
    return float(np.median(times)) * 1e3


def torch_linear_attention(torch, q, k, v, causal, normalize, eps=1e-6):
    """Linear attention with elu + 1 features written in torch as a torch
    user would, without a Python loop: causal, by chunks of TORCH_CHUNK
    (each chunk's φ(K)ᵀV by one batched product, their exclusive prefix
    sums by cumsum, then the masked quadratic form within each chunk plus
    φ(Q) times the state before it; the sequence padded to whole chunks,
    which only the discarded padded rows see), else φ(Q)(φ(K)ᵀV);
    normalized, divided by φ(q)·Σφ(k) + eps."""
    fq = torch.nn.functional.elu(q) + 1
    fk = torch.nn.functional.elu(k) + 1
    if not causal:
        o = fq @ (fk.transpose(-1, -2) @ v)
        if normalize:
            o = o / ((fq * fk.sum(-2, keepdim=True)).sum(-1, keepdim=True)
                     + eps)
        return o
    b, h, t, d = fq.shape
    c = TORCH_CHUNK
    pad = -t % c
    if pad:
        fq, fk, v = (torch.nn.functional.pad(x, (0, 0, 0, pad))
                     for x in (fq, fk, v))
    n = (t + pad) // c
    qc, kc, vc = (x.reshape(b, h, n, c, x.shape[-1]) for x in (fq, fk, v))
    kv = kc.transpose(-1, -2) @ vc                    # [b, h, n, d, dv]
    states = torch.cumsum(kv, dim=2) - kv             # before each chunk
    mask = torch.tril(fq.new_ones(c, c))
    scores = (qc @ kc.transpose(-1, -2)) * mask       # [b, h, n, c, c]
    o = scores @ vc + qc @ states
    if normalize:
        ksum = kc.sum(-2, keepdim=True)               # [b, h, n, 1, d]
        z = torch.cumsum(ksum, dim=2) - ksum
        o = o / (scores.sum(-1, keepdim=True)
                 + (qc * z).sum(-1, keepdim=True) + eps)
    return o.reshape(b, h, n * c, -1)[:, :, :t]


def torch_step(torch, forward, inputs):
    """One training step in torch: forward, then the gradients of
    Σ dO ⊙ O with respect to q, k and v."""
    q, k, v, do = inputs
    leaves = [torch.from_numpy(x).requires_grad_() for x in (q, k, v)]
    out = forward(*leaves)
    return torch.autograd.grad(out, leaves, torch.from_numpy(do))


def measure(linattn, method, c, inputs, repeat):
    q, k, v, do = inputs
    if method == "forward":
        return timed(lambda: linattn.linear_attention(q, k, v, **c.kwargs()),
                     repeat)
    if method == "training step":
        def step():
            o = linattn.linear_attention(q, k, v, **c.kwargs())
            return o, linattn.linear_attention_grad(q, k, v, do, **c.kwargs())
        return timed(step, repeat)
    if method in TORCH_METHODS:
        import torch
        import linattn.torch as lt
        if method == "torch autograd, chunked":
            def forward(*x):
                return torch_linear_attention(torch, *x, c.causal, c.normalize)
        else:
            def forward(*x):
                return lt.linear_attention(*x, **c.kwargs())
        return timed(lambda: torch_step(torch, forward, inputs), repeat)
    previous = None
    if method == "backward (no cache)":
        previous = linattn.set_host_cache_limit(0)
    try:
        return timed(lambda: linattn.linear_attention_grad(
            q, k, v, do, **c.kwargs()), repeat)
    finally:
        if previous is not None:
            linattn.set_host_cache_limit(previous)


def torch_available():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def run_checks(linattn):
    """Every method's gradients on small shapes against float64: linattn's,
    and where torch is installed the torch rows' (f32)."""
    rows, ok = [], True
    rng = np.random.default_rng(31337)
    methods = ["linattn"] + (TORCH_METHODS if torch_available() else [])
    for c in check_cases():
        inputs = inputs_for(c, rng)
        want = linattn.reference.linear_attention_grad(
            *(a.astype(np.float64) for a in inputs), **c.kwargs())
        for method in methods:
            if method == "linattn":
                got = linattn.linear_attention_grad(*inputs, **c.kwargs())
            else:
                import torch
                import linattn.torch as lt
                forward = (
                    (lambda *x: torch_linear_attention(
                        torch, *x, c.causal, c.normalize))
                    if method == "torch autograd, chunked"
                    else (lambda *x: lt.linear_attention(*x, **c.kwargs())))
                got = [g.numpy() for g in torch_step(torch, forward, inputs)]
            for name, g, w in zip(("dq", "dk", "dv"), got, want):
                err = cpu.rel_err(g, w)
                good = err <= 1e-4
                ok = ok and good
                rows.append((c, f"{name} ({method})", err, good))
    return rows, ok


def time_all(linattn, cases, args):
    results = []
    rng = np.random.default_rng(2024)
    methods = METHODS + (TORCH_METHODS if torch_available() else [])
    for c in cases:
        inputs = inputs_for(c, rng)
        for method in methods:
            pilot = measure(linattn, method, c, inputs, 1)
            repeats = int(max(1, min(args.max_repeat,
                                     args.budget / max(pilot * 1e-3, 1e-9))))
            ms = measure(linattn, method, c, inputs, repeats)
            results.append({"case": c, "method": method, "ms": ms,
                            "repeats": repeats})
            print(f"  {c.name:36s} {method:18s} {ms:10.3f} ms (median of "
                  f"{repeats})", flush=True)
    return results


def torch_note():
    """Which torch the torch rows ran on, or why there are none."""
    try:
        import torch
    except ImportError:
        return "not measured (torch is not installed)"
    return (f"torch {torch.__version__}, {torch.get_num_threads()} "
            "threads")


def report(results, checks, peak, machine, outdir):
    by = {(r["case"].name, r["method"]): r["ms"] for r in results}
    md = ["# CPU benchmark: the backward pass, fp32\n",
          "Generated by `bench/backward.py` (see `bench/README.md`).\n",
          "## Machine\n", "```", *machine, "```\n",
          "## Checks\n",
          "Relative error of dq, dk, dv against the float64 reference "
          "(tolerance 1e-4):\n",
          "| shape | gradient | error |", "|---|---|---:|"]
    for c, name, err, good in checks:
        md.append(f"| {c.name} | {name} | {err:.1e} |")
    md += ["", "## Results\n",
           "Median of N calls after one warm-up call, each allocating its "
           "results. GFLOP/s: 10·B·H·T·F·Dv (the unnormalized backward "
           "pass's products; a lower bound for normalized rows) over the "
           f"time; % peak of the measured all-core FMA peak ({peak:.1f} "
           "GFLOP/s). `÷ forward`: the time over the forward pass's. "
           "`no cache ÷ cached`: what the caching host allocator saves. "
           "`÷ linattn step`: a training step's time (forward and "
           "backward) over linattn's `training step` (> 1: linattn is "
           "faster); torch rows: " + torch_note() + ".\n",
           "| shape | method | ms | N | GFLOP/s | % peak | ÷ forward | "
           "no cache ÷ cached | ÷ linattn step |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    rows = []
    for r in results:
        c, method, ms = r["case"], r["method"], r["ms"]
        backward = method in ("backward", "backward (no cache)")
        gflops = c.flops() / (ms * 1e-3) / 1e9 if backward else None
        over_fwd = ms / by[(c.name, "forward")] if backward else None
        saving = (ms / by[(c.name, "backward")]
                  if method == "backward (no cache)" else None)
        step = by.get((c.name, "training step"))
        versus = (ms / step if step and (method == "training step" or
                                         method in TORCH_METHODS) else None)

        def fmt(x, spec):
            return "" if x is None else format(x, spec)
        md.append(f"| {c.name} | {method} | {ms:.2f} | {r['repeats']} | "
                  f"{fmt(gflops, '.1f')} | "
                  f"{fmt(gflops and 100 * gflops / peak, '.1f')} | "
                  f"{fmt(over_fwd, '.2f')} | {fmt(saving, '.2f')} | "
                  f"{fmt(versus, '.2f')} |")
        rows.append([c.name, c.b, c.h, c.t, c.d, int(c.causal),
                     int(c.normalize), method, f"{ms:.4f}", r["repeats"],
                     fmt(gflops, ".2f"), fmt(over_fwd, ".3f"),
                     fmt(saving, ".3f"), fmt(versus, ".3f")])
    text = "\n".join(md) + "\n"
    with open(os.path.join(outdir, "cpu-backward.md"), "w") as f:
        f.write(text)
    with open(os.path.join(outdir, "cpu-backward.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "B", "H", "T", "D", "causal", "normalize",
                    "method", "ms", "repeats", "gflops", "x_forward",
                    "x_no_cache", "x_linattn_step"])
        w.writerows(rows)
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    cpu.add_common_arguments(
        p, check_only="run the correctness checks only",
        cxx="compiler of the peak measurement (default: the build's)")
    # run.py's options for its quadratic methods, so that bench/run.sh can
    # hand every script the same options.
    p.add_argument("--max-call", type=float, help=argparse.SUPPRESS)
    p.add_argument("--max-scores-gib", type=float, help=argparse.SUPPRESS)
    args = p.parse_args()
    work, outdir = cpu.resolve_common_arguments(args, max_repeat=15)
    if "GLIBC_TUNABLES" in os.environ:
        print("bench: GLIBC_TUNABLES is set: the 'no cache' rows will not "
              "show glibc's default behaviour", flush=True)
    linattn = cpu.package(args.build_dir)
    import linattn.reference  # noqa: F401
    log = open(os.path.join(work, "backward-bench.log"), "w")

    print("bench: checking the gradients on small shapes", flush=True)
    checks, ok = run_checks(linattn)
    for c, name, err, good in checks:
        print(f"  {c.name:36s} {name} vs float64 {err:.2e} "
              f"{'ok' if good else 'FAIL'}", flush=True)
    if not ok:
        sys.exit("bench: a gradient is wrong (see above)")
    if args.check_only:
        print("bench: all checks passed")
        return

    peak, machine = cpu.peak_and_machine(args, work, log)

    print("bench: timing", flush=True)
    results = time_all(linattn, quick_cases() if args.quick else full_cases(),
                       args)
    text = report(results, checks, peak, machine, outdir)
    print()
    print(text)
    print(f"bench: results in {outdir} (cpu-backward.md, cpu-backward.csv)")


if __name__ == "__main__":
    main()
