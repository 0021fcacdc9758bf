"""Numerical tests of the CPU backend.

Each case writes a small function to a .mlir file and its inputs to .npy
files, runs `linattn-run` (which lowers with linattn-lower-to-cpu and JIT-
compiles), and compares every result with the float64 reference of
reference.py: the error max|out - ref| / max|ref| must stay within the case's
tolerance (1e-5 for f32, 1e-12 for f64).

Usage: cpu_cases.py --group=NAME --tools=DIR --workdir=DIR
"""

import argparse
import os
import subprocess
import sys
import zlib

try:
    import numpy as np
except ImportError:
    sys.exit("cpu_cases.py: numpy is missing; run scripts/install-deps.sh")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as ref  # noqa: E402

F32_TOL = 1e-5
F64_TOL = 1e-12
# 16-bit outputs are compared after their own rounding (half an ulp: 2^-9 for
# bf16, 2^-12 for f16, relative to the largest output) plus the rounding of
# the features to the data type; a few ulps of slack on top.
BF16_TOL = 1.6e-2
F16_TOL = 2e-3


def ttype(shape, dyn=(), et="f32"):
    rank = len(shape)
    dims = ["?" if (i in dyn or i - rank in dyn) else str(d) for i, d in enumerate(shape)]
    return "tensor<" + "x".join(dims + [et]) + ">"


class Case:
    def __init__(self, name, args, body, results, inputs, expected, tol=F32_TOL):
        """args: [(name, type)]; body: MLIR lines; results: [(value, type)]."""
        self.name = name
        sig = ", ".join(f"%{n}: {t}" for n, t in args)
        rtypes = ", ".join(t for _, t in results)
        rvals = ", ".join(v for v, _ in results)
        self.mlir = (f"func.func @main({sig}) -> ({rtypes}) {{\n"
                     + "".join(f"  {line}\n" for line in body)
                     + f"  return {rvals} : {rtypes}\n}}\n")
        self.inputs = inputs
        self.expected = expected
        self.tol = tol
        self.pipeline = None  # linattn-run's default: linattn-lower-to-cpu


def rng_for(name):
    """A generator seeded from the case name: every case draws its own data."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def uniform(rng, shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def f64(x):
    return np.asarray(x, dtype=np.float64)


# The largest cancellation the forward forms' checks hold a result to: its
# error is relative to its largest value, but to no less than the sum of its
# terms' magnitudes over this (`cancellation_scales`). A result that cancels
# further is ill-conditioned, its rounding error set by its terms (a state of
# one element summing a hundred signed terms to 0.035 of their magnitudes'
# 25); random draws stay below it for 99.7% of their results, so the others
# keep the strictness of max|ref|.
CANCELLATION = 64


def cancellation_scales(form, *operands, **options):
    """`scales` for the results of the float64 reference `form` (scan,
    step, kv_summary) on `operands`: the sums of their terms' magnitudes
    (reference.magnitude) over CANCELLATION."""
    return [m / CANCELLATION for m in ref.magnitude(form, *operands, **options)]


def subnormal_feature_bands(form, fq, fk, tiny, *operands):
    """For each result of the float64 reference `form(fq, fk, *operands)`,
    how far it moves when the features between 0 and `tiny` (the smallest
    normal number of the type the kernels compute them in) take either end
    of that range, and the magnitudes it then reaches; None when there are
    no such features. A kernel knows them only to that absolute precision
    (the CPU kernels' exp returns the smallest normal number below it, a
    flush to zero returns 0), and a normalized output divides it by as
    little as eps: where every feature of a result is that small (elu of
    inputs near -100), so is the result, and its error relative to itself
    is large however the kernel rounds."""
    def small(x):
        return (x > 0) & (x < tiny)
    if not (small(fq).any() or small(fk).any()):
        return None
    exact = form(fq, fk, *operands)
    bands = [np.zeros_like(e) for e in exact]
    reached = [np.abs(e) for e in exact]
    for value in (0.0, tiny):
        moved = form(np.where(small(fq), value, fq),
                     np.where(small(fk), value, fk), *operands)
        bands = [np.maximum(b, np.abs(m - e))
                 for b, m, e in zip(bands, moved, exact)]
        reached = [np.maximum(r, np.abs(m)) for r, m in zip(reached, moved)]
    return bands, reached


def linear_scales(fq, fk, v, eps):
    """`cancellation_scales` of kv_summary followed by query_readout: O, S, z."""
    s, z = ref.magnitude(ref.kv_summary, fk, v)
    o = ref.magnitude(ref.query_readout, fq, s, z if eps else None, eps)
    return [x / CANCELLATION for x in (o, s, z)]


def round_bf16(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), still
    stored as float32: linattn-run converts them to bf16 exactly."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def in_dtype(x, dtype):
    """`x` as the array handed to linattn-run for an argument of `dtype`."""
    if dtype == "bf16":
        return round_bf16(x)
    if dtype == "f16":
        return x.astype(np.float16)
    if dtype == "f64":
        return x.astype(np.float64)
    return x


def kernel_tolerance(dtype, state):
    """The tolerance of a kernel case: the data's rounding, or f64's when
    both data and state are f64."""
    if dtype == "f64" and state == "f64":
        return F64_TOL
    return {"bf16": BF16_TOL, "f16": F16_TOL}.get(dtype, F32_TOL)


#===------------------------------------------------------------------------===#
# Cases
#===------------------------------------------------------------------------===#

def feature_size(kind, d, m):
    return {"poly2": 1 + d + d * d, "favor": m}.get(kind, d)


def feature_map_case(kind, shape, dyn=(), m=None, pdyn=()):
    name = f"feature_map_{kind}_{'x'.join(map(str, shape))}_{'dyn' if dyn or pdyn else 'static'}"
    rng = rng_for(name)
    rank = len(shape)
    d = shape[-1]
    x = uniform(rng, shape) * (0.5 if kind == "favor" else 1.0)
    f = feature_size(kind, d, m)
    out_shape = shape[:-1] + (f,)
    last_dyn = (rank - 1 in dyn or -1 in dyn) if kind != "favor" else (1 in pdyn)
    out_dyn = {i for i in dyn if i % rank != rank - 1} | ({rank - 1} if last_dyn else set())
    args = [("x", ttype(shape, dyn))]
    inputs = [x]
    proj, ptype = "", ""
    p = None
    if kind == "favor":
        p = rng.normal(size=(d, m)).astype(np.float32)
        args.append(("p", ttype((d, m), pdyn)))
        inputs.append(p)
        proj, ptype = " projection(%p)", ", " + ttype((d, m), pdyn)
    otype = ttype(out_shape, out_dyn)
    body = [f"%0 = linattn.feature_map {kind} %x{proj} : {args[0][1]}{ptype} -> {otype}"]
    return Case(name, args, body, [("%0", otype)], inputs,
                [ref.feature_map(kind, f64(x), None if p is None else f64(p))])


def scores_case(batch, n, m, f, causal, scale, dyn=()):
    name = f"scores_{'causal' if causal else 'full'}_{n}x{m}x{f}_b{len(batch)}_{scale}_{'dyn' if dyn else 'static'}"
    rng = rng_for(name)
    q = uniform(rng, batch + (n, f))
    k = uniform(rng, batch + (m, f))
    qt, kt = ttype(q.shape, dyn), ttype(k.shape, dyn)
    ot = ttype(batch + (n, m), dyn)
    attrs = (" causal" if causal else "") + (f" scale({scale:e})" if scale != 1.0 else "")
    body = [f"%0 = linattn.scores %q, %k{attrs} : {qt}, {kt} -> {ot}"]
    return Case(name, [("q", qt), ("k", kt)], body, [("%0", ot)], [q, k],
                [ref.scores(f64(q), f64(k), causal, scale)])


def apply_scores_case(batch, n, m, dv, eps, dyn=()):
    name = f"apply_scores_{'norm' if eps else 'plain'}_{n}x{m}x{dv}_b{len(batch)}_{'dyn' if dyn else 'static'}"
    rng = rng_for(name)
    a = uniform(rng, batch + (n, m), 0.0, 1.0)
    v = uniform(rng, batch + (m, dv))
    at, vt = ttype(a.shape, dyn), ttype(v.shape, dyn)
    ot = ttype(batch + (n, dv), dyn)
    norm = f" normalize(eps = {eps:e})" if eps else ""
    body = [f"%0 = linattn.apply_scores %a, %v{norm} : {at}, {vt} -> {ot}"]
    return Case(name, [("a", at), ("v", vt)], body, [("%0", ot)], [a, v],
                [ref.apply_scores(f64(a), f64(v), eps)])


def linear_case(batch, n, m, f, dv, eps, dyn=(), state="f32", dyns=None):
    """kv_summary followed by query_readout: returns O, S, z. `dyn` is the
    dynamic dimensions of q, k, v and O; `dyns` may give each of "q", "k",
    "v", "o", "s" and "z" its own (S and z are static by default)."""
    dyns = dyns or {}
    name = (f"linear_{'norm' if eps else 'plain'}_{n}x{m}x{f}x{dv}_b{len(batch)}_{state}_"
            f"{'dyn' if dyn or dyns else 'static'}")
    if dyns:
        name += "_" + "_".join(f"{k}{''.join(map(str, v))}" for k, v in sorted(dyns.items()))
    rng = rng_for(name)
    fq = uniform(rng, batch + (n, f), 0.0, 1.0)
    fk = uniform(rng, batch + (m, f), 0.0, 1.0)
    v = uniform(rng, batch + (m, dv))
    qt, kt, vt = (ttype(x.shape, dyns.get(key, dyn))
                  for key, x in (("q", fq), ("k", fk), ("v", v)))
    st = ttype(batch + (f, dv), dyns.get("s", ()), et=state)
    zt = ttype(batch + (f,), dyns.get("z", ()), et=state)
    ot = ttype(batch + (n, dv), dyns.get("o", dyn))
    norm = f" normalize(%z, eps = {eps:e})" if eps else ""
    ztype = f", {zt}" if eps else ""
    body = [f"%s, %z = linattn.kv_summary %fk, %v : {kt}, {vt} -> {st}, {zt}",
            f"%o = linattn.query_readout %fq, %s{norm} : {qt}, {st}{ztype} -> {ot}"]
    s, z = ref.kv_summary(f64(fk), f64(v))
    o = ref.query_readout(f64(fq), s, z if eps else None, eps)
    # With f64 state only the readout's f32 rounding remains.
    case = Case(name, [("fq", qt), ("fk", kt), ("v", vt)], body,
                [("%o", ot), ("%s", st), ("%z", zt)], [fq, fk, v], [o, s, z])
    case.scales = linear_scales(fq, fk, v, eps)
    return case


def scan_case(batch, n, f, dv, reverse, init, eps, dyn=(), chunk=None):
    name = (f"scan_{'reverse' if reverse else 'forward'}_{'init' if init else 'zero'}_"
            f"{'norm' if eps else 'plain'}_{n}x{f}x{dv}_b{len(batch)}_{'dyn' if dyn else 'static'}")
    rng = rng_for(name)
    fq = uniform(rng, batch + (n, f), 0.0, 1.0)
    fk = uniform(rng, batch + (n, f), 0.0, 1.0)
    v = uniform(rng, batch + (n, dv))
    qt, kt, vt = (ttype(x.shape, dyn) for x in (fq, fk, v))
    st, zt = ttype(batch + (f, dv)), ttype(batch + (f,))
    ot = ttype(batch + (n, dv), dyn)
    args = [("fq", qt), ("fk", kt), ("v", vt)]
    inputs = [fq, fk, v]
    s0 = z0 = None
    init_text, init_types = "", ""
    if init:
        s0 = uniform(rng, batch + (f, dv))
        z0 = uniform(rng, batch + (f,), 0.5, 1.5)
        args += [("s0", st), ("z0", zt)]
        inputs += [s0, z0]
        init_text, init_types = " init(%s0, %z0)", f", {st}, {zt}"
    norm = f" normalize(eps = {eps:e})" if eps else ""
    chunk_text = f" chunk_size({chunk})" if chunk else ""
    direction = "reverse" if reverse else "forward"
    body = [f"%o, %s, %z = linattn.scan {direction} %fq, %fk, %v{init_text}{norm}{chunk_text} "
            f": {qt}, {kt}, {vt}{init_types} -> {ot}, {st}, {zt}"]
    expected = ref.scan(f64(fq), f64(fk), f64(v), None if s0 is None else f64(s0),
                        None if z0 is None else f64(z0), reverse, eps)
    case = Case(name, args, body, [("%o", ot), ("%s", st), ("%z", zt)], inputs,
                list(expected))
    case.scales = cancellation_scales(ref.scan, fq, fk, v, s0, z0, reverse, eps)
    return case


def shared_buffer_case():
    """Two kernels read one tensor, and a tensor filled in place into its
    buffer (both fills of one tensor.empty) comes between them: the second
    must read the first fill. With the kernels' operands read through
    bufferization.to_buffer, CSE merged the two reads into the first one and
    bufferization let the second fill overwrite the buffer the second kernel
    read (linattn.read_buffer has a read effect instead)."""
    name = "scan_shared_buffer_2x7x4x3"
    rng = rng_for(name)
    q = uniform(rng, (2, 7, 4), 0.0, 1.0)
    v = uniform(rng, (2, 7, 3))
    t4, t3 = ttype((2, 7, 4)), ttype((2, 7, 3))
    st, zt = ttype((2, 4, 3)), ttype((2, 4))
    scan = f": {t4}, {t4}, {t3} -> {t3}, {st}, {zt}"
    body = [f"%e = tensor.empty() : {t4}",
            "%one = arith.constant 1.0 : f32",
            "%two = arith.constant 2.0 : f32",
            f"%x = linalg.fill ins(%one : f32) outs(%e : {t4}) -> {t4}",
            f"%o1, %s1, %z1 = linattn.scan forward %q, %x, %v {scan}",
            f"%y = linalg.fill ins(%two : f32) outs(%e : {t4}) -> {t4}",
            f"%o2, %s2, %z2 = linattn.scan forward %y, %q, %v {scan}",
            f"%o3, %s3, %z3 = linattn.scan reverse %q, %x, %v {scan}"]
    x, y = np.ones((2, 7, 4)), np.full((2, 7, 4), 2.0)
    expected = [ref.scan(f64(q), x, f64(v))[0], ref.scan(y, f64(q), f64(v))[0],
                ref.scan(f64(q), x, f64(v), reverse=True)[0]]
    return Case(name, [("q", t4), ("v", t3)], body,
                [("%o1", t3), ("%o2", t3), ("%o3", t3)], [q, v], expected)


def sliced_state_case():
    """A kernel's operand cut from another kernel's result: the key-value
    summary's first Dv - 1 columns, sizes dynamic, read by the readout. The
    slice keeps the summary's row pitch, so its buffer is copied for the
    kernels, which address their operands as contiguous (a cast to the
    identity layout, which upstream's castOrReallocMemRefValue chose for
    dynamic strides, had the GPU readout read rows Dv apart instead of Dv - 1;
    found by attention_grad's dV)."""
    name = "sliced_state_2x100x3x8x6"
    rng = rng_for(name)
    fq = uniform(rng, (2, 100, 8), 0.0, 1.0)
    gh = uniform(rng, (2, 100, 6))
    fk = uniform(rng, (2, 3, 8), 0.0, 1.0)
    qt, gt, kt = "tensor<?x100x8xf32>", "tensor<?x100x?xf32>", "tensor<?x3x8xf32>"
    st, ot = "tensor<?x8x?xf32>", "tensor<?x3x?xf32>"
    body = ["%c0 = arith.constant 0 : index",
            "%c1 = arith.constant 1 : index",
            "%c2 = arith.constant 2 : index",
            f"%s, %z = linattn.kv_summary %fq, %gh : {qt}, {gt} -> {st}, tensor<?x8xf32>",
            f"%b = tensor.dim %s, %c0 : {st}",
            f"%w = tensor.dim %s, %c2 : {st}",
            "%dv = arith.subi %w, %c1 : index",
            f"%sl = tensor.extract_slice %s[0, 0, 0] [%b, 8, %dv] [1, 1, 1] : {st} to {st}",
            f"%o = linattn.query_readout %fk, %sl : {kt}, {st} -> {ot}"]
    s = np.swapaxes(f64(fq), -1, -2) @ f64(gh)
    return Case(name, [("fq", qt), ("gh", gt), ("fk", kt)], body, [("%o", ot)],
                [fq, gh, fk], [f64(fk) @ s[..., :5]])


def _scan_grad_operands(name, batch, n, f, dv, dtype):
    """The case's generator, numpy type and φ(Q), φ(K) (in [0, 1)), V and dO
    (in [-1, 1)) of a scan gradient case."""
    rng = rng_for(name)
    npt = np.float64 if dtype == "f64" else np.float32
    return rng, npt, (uniform(rng, batch + (n, f), 0.0, 1.0, npt),
                      uniform(rng, batch + (n, f), 0.0, 1.0, npt),
                      uniform(rng, batch + (n, dv), dtype=npt),
                      uniform(rng, batch + (n, dv), dtype=npt))


def scan_grad_case(batch, n, f, dv, reverse, eps=None, dyn=(), dtype="f32"):
    """linattn.scan_grad: the gradients of a scan, normalized with `eps`.
    Errors are relative to the gradients with every sum's terms replaced by
    their magnitudes (reference.scan_grad_magnitude: dO·v has both signs)."""
    name = (f"scan_grad_{'reverse' if reverse else 'forward'}_{'norm' if eps else 'plain'}_"
            f"{n}x{f}x{dv}_b{len(batch)}_{dtype}_{'dyn' if dyn else 'static'}")
    _, _, (fq, fk, v, dout) = _scan_grad_operands(name, batch, n, f, dv,
                                                  dtype)
    qt, kt, vt, dt = (ttype(x.shape, dyn, dtype) for x in (fq, fk, v, dout))
    direction = "reverse" if reverse else "forward"
    norm = f" normalize(eps = {eps:e})" if eps else ""
    body = [f"%dq, %dk, %dv = linattn.scan_grad {direction} %fq, %fk, %v, %do{norm} "
            f": {qt}, {kt}, {vt}, {dt} -> {qt}, {kt}, {vt}"]
    operands = [f64(x) for x in (fq, fk, v, dout)]
    case = Case(name, [("fq", qt), ("fk", kt), ("v", vt), ("do", dt)], body,
                [("%dq", qt), ("%dk", kt), ("%dv", vt)], [fq, fk, v, dout],
                list(ref.scan_grad(*operands, reverse, eps)),
                F64_TOL if dtype == "f64" else F32_TOL)
    case.scales = list(ref.scan_grad_magnitude(*operands, reverse, eps))
    return case


def scan_grad_states_case(batch, n, f, dv, reverse, eps=None, final=True,
                          dyn=(), dtype="f32"):
    """linattn.scan_grad from an initial state (init), with the gradients of
    the final state and normalizer (final_grad) when `final`: also returns
    the initial state's and normalizer's gradients. `dyn` makes sequence
    dimensions dynamic; the states share its batch dimensions."""
    name = (f"scan_grad_states_{'reverse' if reverse else 'forward'}_"
            f"{'norm' if eps else 'plain'}_{'final' if final else 'init'}_"
            f"{n}x{f}x{dv}_b{len(batch)}_{dtype}_{'dyn' if dyn else 'static'}")
    rng, npt, (fq, fk, v, dout) = _scan_grad_operands(name, batch, n, f, dv,
                                                      dtype)
    s0 = uniform(rng, batch + (f, dv), dtype=npt)
    z0 = uniform(rng, batch + (f,), 0.0, 1.0, npt)
    ds = uniform(rng, batch + (f, dv), dtype=npt)
    dz = uniform(rng, batch + (f,), dtype=npt)
    qt, kt, vt, dt = (ttype(x.shape, dyn, dtype) for x in (fq, fk, v, dout))
    state_dyn = tuple(i for i in dyn if 0 <= i < len(batch))
    st = ttype(s0.shape, state_dyn, dtype)
    zt = ttype(z0.shape, state_dyn, dtype)
    direction = "reverse" if reverse else "forward"
    norm = f" normalize(eps = {eps:e})" if eps else ""
    args = [("fq", qt), ("fk", kt), ("v", vt), ("do", dt), ("s0", st),
            ("z0", zt)]
    inputs = [fq, fk, v, dout, s0, z0]
    grad = ""
    if final:
        args += [("ds", st), ("dz", zt)]
        inputs += [ds, dz]
        grad = f" final_grad(%ds, %dz : {st}, {zt})"
    body = [f"%dq, %dk, %dv, %ds0, %dz0 = linattn.scan_grad {direction} "
            f"%fq, %fk, %v, %do init(%s0, %z0 : {st}, {zt}){grad}{norm} "
            f": {qt}, {kt}, {vt}, {dt} -> {qt}, {kt}, {vt}, {st}, {zt}"]
    operands = [f64(x) for x in (fq, fk, v, dout, s0, z0)]
    finals = [f64(ds), f64(dz)] if final else [None, None]
    case = Case(name, args, body,
                [("%dq", qt), ("%dk", kt), ("%dv", vt), ("%ds0", st),
                 ("%dz0", zt)], inputs,
                list(ref.scan_grad_states(*operands, *finals, reverse, eps)),
                F64_TOL if dtype == "f64" else F32_TOL)
    case.scales = list(ref.scan_grad_states(*operands, *finals, reverse, eps,
                                            magnitude=True))
    return case


def scan_grad_cases():
    """The scan_grad cases, after checking their reference against central
    differences (reference.check_scan_grad)."""
    ref.check_scan_grad()
    ref.check_scan_grad_states()
    return [
        scan_grad_states_case(batch, n, 8, 5, reverse, eps, final, dyn)
        for reverse in (False, True)
        for eps in (None, EPS)
        for final in (False, True)
        for batch, n, dyn in (((2, 3), 7, ()), ((2,), 100, (0, 1)))
    ] + [
        scan_grad_states_case((3,), 33, 6, 4, True, EPS, dyn=(0, 1, 2),
                              dtype="f64"),
        scan_grad_states_case((), 1, 3, 2, False, EPS),
        generic(scan_grad_states_case((1, 2), 9, 4, 3, False, EPS, dyn=(2,))),
        generic(scan_grad_states_case((2,), 9, 4, 3, True, final=False)),
    ] + [
        scan_grad_case(batch, n, 8, 5, reverse, eps, dyn)
        for reverse in (False, True)
        for eps in (None, EPS)
        for batch, n, dyn in (((2, 3), 7, ()), ((2,), 100, (1,)))
    ] + [
        scan_grad_case((), 1, 3, 2, False),
        scan_grad_case((), 1, 3, 2, True, EPS),
        scan_grad_case((3,), 33, 6, 4, True, EPS, dyn=(0, 1, 2), dtype="f64"),
        # No value columns: normalized, [V, 1] is the ones alone.
        scan_grad_case((2,), 9, 4, 0, False, EPS, dyn=(0, 2)),
        generic(scan_grad_case((1, 2), 9, 4, 3, False, EPS, dyn=(0, 2))),
        generic(scan_grad_case((1, 2), 9, 4, 3, True, dyn=(2,))),
        via(scan_grad_case((2,), 37, 8, 5, True, EPS), "chunk8",
            ["linattn-decompose", "linattn-chunk-scan{chunk-size=8}"]),
    ]


def step_case(batch, f, dv, eps, dyn=()):
    name = f"step_{'norm' if eps else 'plain'}_{f}x{dv}_b{len(batch)}_{'dyn' if dyn else 'static'}"
    rng = rng_for(name)
    fq = uniform(rng, batch + (f,), 0.0, 1.0)
    fk = uniform(rng, batch + (f,), 0.0, 1.0)
    v = uniform(rng, batch + (dv,))
    s = uniform(rng, batch + (f, dv))
    z = uniform(rng, batch + (f,), 0.5, 1.5)
    qt, kt, vt = (ttype(x.shape, dyn) for x in (fq, fk, v))
    st, zt = ttype(s.shape, dyn), ttype(z.shape, dyn)
    ot = ttype(batch + (dv,), dyn)
    norm = f" normalize(eps = {eps:e})" if eps else ""
    body = [f"%o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z{norm} "
            f": {qt}, {kt}, {vt}, {st}, {zt} -> {ot}, {st}, {zt}"]
    expected = ref.step(f64(fq), f64(fk), f64(v), f64(s), f64(z), eps)
    case = Case(name, [("fq", qt), ("fk", kt), ("v", vt), ("s", st), ("z", zt)],
                body, [("%o", ot), ("%s1", st), ("%z1", zt)],
                [fq, fk, v, s, z], list(expected))
    case.scales = cancellation_scales(ref.step, fq, fk, v, s, z, eps)
    return case


def step_chain_case(batch, n, f, dv, eps):
    """n linattn.step ops threaded through the state equal a forward scan."""
    name = f"step_chain_{'norm' if eps else 'plain'}_{n}x{f}x{dv}_b{len(batch)}"
    rng = rng_for(name)
    fq = uniform(rng, batch + (n, f), 0.0, 1.0)
    fk = uniform(rng, batch + (n, f), 0.0, 1.0)
    v = uniform(rng, batch + (n, dv))
    qt, kt, vt = (ttype(x.shape) for x in (fq, fk, v))
    st, zt = ttype(batch + (f, dv)), ttype(batch + (f,))
    rank = len(batch) + 2
    zeros = ", ".join(["0"] * rank)
    ones = ", ".join(["1"] * rank)
    cst = "arith.constant 0.0 : f32"
    body = [f"%c0 = {cst}",
            f"%e_s = tensor.empty() : {st}",
            f"%s_0 = linalg.fill ins(%c0 : f32) outs(%e_s : {st}) -> {st}",
            f"%e_z = tensor.empty() : {zt}",
            f"%z_0 = linalg.fill ins(%c0 : f32) outs(%e_z : {zt}) -> {zt}"]
    results = []
    norm = f" normalize(eps = {eps:e})" if eps else ""
    for i in range(n):
        offs = ", ".join(["0"] * len(batch) + [str(i), "0"])
        for x, t, last in (("fq", qt, f), ("fk", kt, f), ("v", vt, dv)):
            sizes = ", ".join([str(b) for b in batch] + ["1", str(last)])
            body.append(f"%{x}_{i} = tensor.extract_slice %{x}[{offs}] [{sizes}] [{ones}] "
                        f": {t} to {ttype(batch + (last,))}")
        ft, dvt = ttype(batch + (f,)), ttype(batch + (dv,))
        body.append(f"%o_{i}, %s_{i + 1}, %z_{i + 1} = linattn.step %fq_{i}, %fk_{i}, %v_{i}, "
                    f"%s_{i}, %z_{i}{norm} : {ft}, {ft}, {dvt}, {st}, {zt} -> {dvt}, {st}, {zt}")
        results.append((f"%o_{i}", dvt))
    del zeros
    results += [(f"%s_{n}", st), (f"%z_{n}", zt)]
    o, s, z = ref.scan(f64(fq), f64(fk), f64(v), eps=eps)
    expected = [o[..., i, :] for i in range(n)] + [s, z]
    case = Case(name, [("fq", qt), ("fk", kt), ("v", vt)], body, results,
                [fq, fk, v], expected)
    o, s, z = cancellation_scales(ref.scan, fq, fk, v, eps=eps)
    case.scales = [o[..., i, :] for i in range(n)] + [s, z]
    return case


def kernel_features(kind, q, k, dtype):
    """φ(q) and φ(k) in float64 as the kernels see them: the fused map's
    result rounded to the data type, as the unfused map would produce it."""
    fq = ref.feature_map(kind, f64(q))
    fk = ref.feature_map(kind, f64(k))
    if dtype == "bf16":
        fq, fk = f64(round_bf16(fq)), f64(round_bf16(fk))
    elif dtype == "f16":
        fq, fk = f64(fq.astype(np.float16)), f64(fk.astype(np.float16))
    return fq, fk


def kernel_inputs(rng, batch, n, m, d, dv, dtype, lo=-1.0):
    """q [batch, n, d], k [batch, m, d] (uniform in [lo, 1)) and v
    [batch, m, dv] (in [-1, 1)) as handed over for `dtype`."""
    return (in_dtype(uniform(rng, batch + (n, d), lo), dtype),
            in_dtype(uniform(rng, batch + (m, d), lo), dtype),
            in_dtype(uniform(rng, batch + (m, dv)), dtype))


def feature_map_lines(kind, qt, kt):
    """%fq and %fk: the feature map on the raw %q and %k."""
    return [f"%fq = linattn.feature_map {kind} %q : {qt} -> {qt}",
            f"%fk = linattn.feature_map {kind} %k : {kt} -> {kt}"]


def kernel_case(kind, batch, n, d, dv, eps, reverse=False, init=False, dyn=(),
                dtype="f32", options="", lo=-1.0, state="f32", dyn_dv=False,
                values=1.0):
    """feature_map on raw q and k, then a scan with an f32 (or f64) state: the
    form the CPU kernels take (the maps fused), with their options in
    `options`. `dyn_dv`: Dv dynamic too (in v, O and S). `values` negative:
    values in [0, -values) (a state that grows with the sequence)."""
    name = (f"kernel_{kind}_{'reverse' if reverse else 'forward'}_"
            f"{'init' if init else 'zero'}_{'norm' if eps else 'plain'}_{n}x{d}x{dv}_"
            f"b{len(batch)}_{dtype}_{'dyn' if dyn else 'static'}"
            + ("_dyndv" if dyn_dv else "")
            + ("" if state == "f32" else f"_state_{state}")
            + (f"_from{-lo:g}" if lo != -1.0 else "")
            + (f"_values{values:g}" if values != 1.0 else "")
            + (f"_{options.replace(' ', '_').replace('=', '')}" if options else ""))
    rng = rng_for(name)
    q, k, v = kernel_inputs(rng, batch, n, n, d, dv, dtype, lo)
    if values != 1.0:
        v = in_dtype(uniform(rng, batch + (n, dv), 0.0, -values), dtype)
    dv_dyn = (-1,) if dyn_dv else ()
    qt, kt = (ttype(x.shape, dyn, dtype) for x in (q, k))
    vt = ttype(v.shape, tuple(dyn) + dv_dyn, dtype)
    st, zt = ttype(batch + (d, dv), dv_dyn, state), ttype(batch + (d,), (), state)
    ot = ttype(batch + (n, dv), tuple(dyn) + dv_dyn, dtype)
    args = [("q", qt), ("k", kt), ("v", vt)]
    inputs = [q, k, v]
    s0 = z0 = None
    init_text, init_types = "", ""
    if init:
        s0 = in_dtype(uniform(rng, batch + (d, dv)), state)
        z0 = in_dtype(uniform(rng, batch + (d,), 0.5, 1.5), state)
        args += [("s0", st), ("z0", zt)]
        inputs += [s0, z0]
        init_text, init_types = " init(%s0, %z0)", f", {st}, {zt}"
    norm = f" normalize(eps = {eps:e})" if eps else ""
    direction = "reverse" if reverse else "forward"
    body = feature_map_lines(kind, qt, kt) + [
            f"%o, %s, %z = linattn.scan {direction} %fq, %fk, %v{init_text}{norm} "
            f": {qt}, {kt}, {vt}{init_types} -> {ot}, {st}, {zt}"]
    fq, fk = kernel_features(kind, q, k, dtype)
    expected = ref.scan(fq, fk, f64(v), None if s0 is None else f64(s0),
                        None if z0 is None else f64(z0), reverse, eps)
    case = Case(name, args, body, [("%o", ot), ("%s", st), ("%z", zt)], inputs,
                list(expected), kernel_tolerance(dtype, state))
    case.scales = cancellation_scales(ref.scan, fq, fk, f64(v),
                                      None if s0 is None else f64(s0),
                                      None if z0 is None else f64(z0), reverse, eps)
    # The features are computed in f32 but for f64 data; errors are then
    # relative to the largest result the features' band reaches too.
    tiny = np.finfo(np.float64 if dtype == "f64" else np.float32).tiny
    band = subnormal_feature_bands(
        ref.scan, fq, fk, tiny, f64(v), None if s0 is None else f64(s0),
        None if z0 is None else f64(z0), reverse, eps)
    if band:
        case.bands = band[0]
        case.scales = [np.maximum(s, r) for s, r in zip(case.scales, band[1])]
    if options:
        case.pipeline = f"linattn-lower-to-cpu{{{options}}}"
    return case


def token_major_kernel_case(kind, outer, n, h, d, dv, eps, reverse=False,
                            init=False, dyn=(), dtype="f32", final=False,
                            m=None):
    """A scan on token-major q, k [*outer, N, H, D] and v [*outer, N, H, Dv]:
    transposes into [*outer, H, N, ·], the feature map on q and k, the scan,
    and O transposed back (its sizes read from the scan's result), as the
    raise and `layout="bnhd"` write it. `dyn`: dimensions of the token-major
    inputs left dynamic; `final`: S and z are results too. With `m` keys,
    the linear form instead: kv_summary and query_readout."""
    form = "scan" if m is None else "linear"
    assert form == "scan" or not (reverse or init), "the linear form has neither"
    name = (f"token_major_{form}_{kind}_{'reverse' if reverse else 'forward'}_"
            f"{'init' if init else 'zero'}_{'norm' if eps else 'plain'}_"
            f"{n}x{d}x{dv}_h{h}_b{len(outer)}_{dtype}"
            + ("" if m is None else f"_m{m}")
            + ("_dyn" + "".join(map(str, dyn)) if dyn else "")
            + ("_final" if final else ""))
    rng = rng_for(name)
    batch = tuple(outer)
    m = n if m is None else m
    q = in_dtype(uniform(rng, batch + (n, h, d)), dtype)
    k, v = (in_dtype(uniform(rng, batch + (m, h, w)), dtype) for w in (d, dv))
    rank = len(batch) + 3
    swap = list(range(rank))
    swap[-3], swap[-2] = swap[-2], swap[-3]
    heads_first = lambda x: np.swapaxes(x, -3, -2)
    hdyn = tuple(swap[i] for i in dyn)  # the same dimensions, heads first
    perm = ", ".join(map(str, swap))
    body = [f"%c{i} = arith.constant {i} : index" for i in range(rank)]

    def transpose(x, t, ht, dims, result):
        """%result: %x of type t transposed into type ht, whose dynamic
        dimensions `dims` are read from %x."""
        sizes = [f"%{x}d{i}" for i in sorted(dims)]
        body.extend(f"%{x}d{i} = tensor.dim %{x}, %c{swap[i]} : {t}"
                    for i in sorted(dims))
        body.extend([f"%{x}e = tensor.empty({', '.join(sizes)}) : {ht}",
                     f"%{result} = linalg.transpose ins(%{x} : {t}) "
                     f"outs(%{x}e : {ht}) permutation = [{perm}]"])

    transposed = {}
    for x, a in (("q", q), ("k", k), ("v", v)):
        t, ht = ttype(a.shape, dyn, dtype), ttype(heads_first(a).shape, hdyn, dtype)
        transpose(x, t, ht, hdyn, f"{x}t")
        transposed[x] = (t, ht)
    (qt, hqt), (kt, hkt), (vt, hvt) = transposed["q"], transposed["k"], transposed["v"]
    ot = ttype(batch + (n, h, dv), dyn, dtype)
    hot = ttype(batch + (h, n, dv), hdyn, dtype)
    st, zt = ttype(batch + (h, d, dv), (), "f32"), ttype(batch + (h, d), (), "f32")
    args = [("q", qt), ("k", kt), ("v", vt)]
    inputs = [q, k, v]
    s0 = z0 = None
    init_text, init_types = "", ""
    if init:
        s0 = uniform(rng, batch + (h, d, dv))
        z0 = uniform(rng, batch + (h, d), 0.5, 1.5)
        args += [("s0", st), ("z0", zt)]
        inputs += [s0, z0]
        init_text, init_types = " init(%s0, %z0)", f", {st}, {zt}"
    body += [f"%fq = linattn.feature_map {kind} %qt : {hqt} -> {hqt}",
             f"%fk = linattn.feature_map {kind} %kt : {hkt} -> {hkt}"]
    fq, fk = kernel_features(kind, heads_first(q), heads_first(k), dtype)
    if form == "scan":
        norm = f" normalize(eps = {eps:e})" if eps else ""
        direction = "reverse" if reverse else "forward"
        body.append(f"%o, %s, %z = linattn.scan {direction} %fq, %fk, %vt"
                    f"{init_text}{norm} : {hqt}, {hkt}, {hvt}{init_types} "
                    f"-> {hot}, {st}, {zt}")
        o, s_final, z_final = ref.scan(fq, fk, f64(heads_first(v)),
                                       None if s0 is None else f64(s0),
                                       None if z0 is None else f64(z0),
                                       reverse, eps)
    else:
        norm = f" normalize(%z, eps = {eps:e})" if eps else ""
        ztype = f", {zt}" if eps else ""
        body += [f"%s, %z = linattn.kv_summary %fk, %vt : {hkt}, {hvt} -> {st}, {zt}",
                 f"%o = linattn.query_readout %fq, %s{norm} : {hqt}, {st}{ztype} -> {hot}"]
        s_final, z_final = ref.kv_summary(fk, f64(heads_first(v)))
        o = ref.query_readout(fq, s_final, z_final if eps else None, eps)
    transpose("o", hot, ot, dyn, "out")
    results, expected = [("%out", ot)], [heads_first(o)]
    if final:
        results += [("%s", st), ("%z", zt)]
        expected += [s_final, z_final]
    return Case(name, args, body, results, inputs, expected,
                kernel_tolerance(dtype, "f32"))


def linear_kernel_case(kind, batch, n, m, d, dv, eps, dyn=(), dtype="f32",
                       options="", values=1.0, queries=1.0, dyn_dv=False):
    """feature_map on raw q and k, then kv_summary and query_readout with an
    f32 (f64 for f64 data) state: the non-causal form the CPU kernels take
    (the maps fused). The values are uniform in [-1, 1) times `values`, or
    with `values` negative in [0, -values): a state that grows with M; the
    queries are multiplied by `queries`. `dyn_dv`: Dv dynamic (in v, O and
    S)."""
    state = "f64" if dtype == "f64" else "f32"
    name = (f"linear_kernel_{kind}_{'norm' if eps else 'plain'}_{n}x{m}x{d}x{dv}_"
            f"b{len(batch)}_{dtype}_{'dyn' if dyn else 'static'}"
            + (f"_values{values:g}" if values != 1.0 else "")
            + (f"_queries{queries:g}" if queries != 1.0 else "")
            + ("_dyndv" if dyn_dv else "")
            + (f"_{options.replace(' ', '_').replace('=', '')}" if options else ""))
    rng = rng_for(name)
    q, k, v = kernel_inputs(rng, batch, n, m, d, dv, dtype)
    if values != 1.0:
        v = in_dtype(uniform(rng, batch + (m, dv), *((0.0, -values) if values < 0
                                                     else (-values, values))), dtype)
    if queries != 1.0:
        q = in_dtype(q.astype(np.float32) * np.float32(queries), dtype)
    dv_dyn = (-1,) if dyn_dv else ()
    qt, kt = (ttype(x.shape, dyn, dtype) for x in (q, k))
    vt = ttype(v.shape, tuple(dyn) + dv_dyn, dtype)
    st, zt = ttype(batch + (d, dv), dv_dyn, state), ttype(batch + (d,), (), state)
    ot = ttype(batch + (n, dv), tuple(dyn) + dv_dyn, dtype)
    norm = f" normalize(%z, eps = {eps:e})" if eps else ""
    ztype = f", {zt}" if eps else ""
    body = feature_map_lines(kind, qt, kt) + [
            f"%s, %z = linattn.kv_summary %fk, %v : {kt}, {vt} -> {st}, {zt}",
            f"%o = linattn.query_readout %fq, %s{norm} : {qt}, {st}{ztype} -> {ot}"]
    fq, fk = kernel_features(kind, q, k, dtype)
    s_ref, z_ref = ref.kv_summary(fk, f64(v))
    o_ref = ref.query_readout(fq, s_ref, z_ref if eps else None, eps)
    case = Case(name, [("q", qt), ("k", kt), ("v", vt)], body,
                [("%o", ot), ("%s", st), ("%z", zt)], [q, k, v],
                [o_ref, s_ref, z_ref], kernel_tolerance(dtype, state))
    case.scales = linear_scales(fq, fk, f64(v), eps)
    if options:
        case.pipeline = f"linattn-lower-to-cpu{{{options}}}"
    return case


# The unit roundoff of each data type.
UNIT_ROUNDOFF = {"bf16": 2.0**-8, "f16": 2.0**-11, "f32": 2.0**-24,
                 "f64": 2.0**-53}


def well_posed_eps(a, a_terms, eps, dtype):
    """`eps`, or where a row's denominator Σa + eps is within 8u Σ|a| of 0
    (u the data type's unit roundoff: the rounded scores can then sum to
    any sign, 0 included, and the output to anything) the least eps that
    puts every row's denominator that far above 0: a normalized form is
    only as defined as its denominators are."""
    sums = np.sum(a, axis=-1)
    margin = 8 * UNIT_ROUNDOFF[dtype] * np.sum(a_terms, axis=-1)
    if np.all(np.abs(sums + eps) >= margin):
        return eps
    return float(np.max(margin - sums))


def quadratic_kernel_case(kind, batch, n, m, d, dv, scale, eps, dtype="f32"):
    """feature_map on raw q and k, then non-causal scores (with `scale`) and
    apply_scores: the quadratic form that the CPU kernel pass reassociates
    when the kernels make its linear form the faster one."""
    name = (f"quadratic_kernel_{kind}_{'norm' if eps else 'plain'}_{n}x{m}x{d}x{dv}_"
            f"b{len(batch)}_s{scale:g}_{dtype}")
    q, k, v = kernel_inputs(rng_for(name), batch, n, m, d, dv, dtype)
    qt, kt, vt = (ttype(x.shape, (), dtype) for x in (q, k, v))
    at = ttype(batch + (n, m), (), dtype)
    ot = ttype(batch + (n, dv), (), dtype)
    fq, fk = kernel_features(kind, q, k, dtype)
    a = ref.scores(fq, fk, scale=scale)
    a_terms = abs(scale) * (np.abs(fq) @ np.swapaxes(np.abs(fk), -1, -2))
    if eps:
        eps = well_posed_eps(a, a_terms, eps, dtype)
    norm = f" normalize(eps = {eps:.17e})" if eps else ""
    body = feature_map_lines(kind, qt, kt) + [
            f"%a = linattn.scores %fq, %fk scale({scale:e}) : {qt}, {kt} -> {at}",
            f"%o = linattn.apply_scores %a, %v{norm} : {at}, {vt} -> {ot}"]
    case = Case(name, [("q", qt), ("k", kt), ("v", vt)], body, [("%o", ot)],
                [q, k, v], [ref.apply_scores(a, f64(v), eps)],
                kernel_tolerance(dtype, dtype))
    # Identity features' scores can cancel, and a negative scale can bring a
    # row sum close to -eps: errors are relative to the magnitude of what the
    # scores sum and to what the division magnifies, not to the output alone.
    case.scales = [ref.apply_scores_magnitude(a, f64(v), eps, a_terms)]
    return case


def attention_case(kind, batch, n, m, d, dv, causal, eps, dyn=(), fmax=None, dtype="f32"):
    name = (f"attention_{kind}_{'causal' if causal else 'full'}_{'norm' if eps else 'plain'}_"
            f"{n}x{m}x{d}x{dv}_b{len(batch)}_{dtype}_{'dyn' if dyn else 'static'}")
    rng = rng_for(name)
    npt = np.float64 if dtype == "f64" else np.float32
    scale = 0.5 if kind in ("poly2", "favor") else 1.0
    q = uniform(rng, batch + (n, d), dtype=npt) * npt(scale)
    k = uniform(rng, batch + (m, d), dtype=npt) * npt(scale)
    v = uniform(rng, batch + (m, dv), dtype=npt)
    qt, kt, vt = (ttype(x.shape, dyn, dtype) for x in (q, k, v))
    ot = ttype(batch + (n, dv), dyn, dtype)
    args = [("q", qt), ("k", kt), ("v", vt)]
    inputs = [q, k, v]
    p = None
    proj, ptype = "", ""
    if kind == "favor":
        p = rng.normal(size=(d, fmax)).astype(npt)
        args.append(("p", ttype(p.shape, (), dtype)))
        inputs.append(p)
        proj, ptype = " projection(%p)", ", " + args[-1][1]
    attrs = proj + (" causal" if causal else "") + (f" normalize(eps = {eps:e})" if eps else "")
    body = [f"%0 = linattn.attention {kind} %q, %k, %v{attrs} : {qt}, {kt}, {vt}{ptype} -> {ot}"]
    operands = (kind, f64(q), f64(k), f64(v), None if p is None else f64(p), causal, eps)
    case = Case(name, args, body, [("%0", ot)], inputs, [ref.attention(*operands)],
                F64_TOL if dtype == "f64" else F32_TOL)
    case.scales = [ref.attention_magnitude(*operands)]
    return case


def feature_map_grad_case(kind, shape, dyn=(), m=None, dtype="f32"):
    """linattn.feature_map_grad: the chain rule through a feature map, errors
    relative to the sums of the terms' magnitudes."""
    name = (f"feature_map_grad_{kind}_{'x'.join(map(str, shape))}_{dtype}_"
            f"{'dyn' if dyn else 'static'}")
    rng = rng_for(name)
    npt = np.float64 if dtype == "f64" else np.float32
    d = shape[-1]
    x = uniform(rng, shape, dtype=npt) * npt(0.5 if kind == "favor" else 1.0)
    dphi = uniform(rng, shape[:-1] + (feature_size(kind, d, m),), dtype=npt)
    xt, gt = ttype(x.shape, dyn, dtype), ttype(dphi.shape, dyn, dtype)
    args, inputs = [("x", xt), ("dphi", gt)], [x, dphi]
    p, proj, ptype = None, "", ""
    if kind == "favor":
        p = rng.normal(size=(d, m)).astype(npt)
        args.append(("p", ttype(p.shape, dyn, dtype)))
        inputs.append(p)
        proj, ptype = " projection(%p)", ", " + args[-1][1]
    body = [f"%dx = linattn.feature_map_grad {kind} %x, %dphi{proj} : {xt}, {gt}{ptype} -> {xt}"]
    operands = (kind, f64(x), f64(dphi), None if p is None else f64(p))
    case = Case(name, args, body, [("%dx", xt)], inputs, [ref.feature_map_grad(*operands)],
                F64_TOL if dtype == "f64" else F32_TOL)
    case.scales = [ref.feature_map_grad_magnitude(*operands)]
    return case


def attention_grad_case(kind, batch, n, m, d, dv, causal, eps, dyn=(), fmax=None,
                        dtype="f32"):
    """linattn.attention_grad: the gradients of linear attention with respect
    to Q, K and V, errors relative to the sums of the terms' magnitudes
    (reference.attention_grad_magnitude)."""
    name = (f"attention_grad_{kind}_{'causal' if causal else 'full'}_"
            f"{'norm' if eps else 'plain'}_{n}x{m}x{d}x{dv}_b{len(batch)}_{dtype}_"
            f"{'dyn' if dyn else 'static'}")
    rng = rng_for(name)
    npt = np.float64 if dtype == "f64" else np.float32
    scale = 0.5 if kind in ("poly2", "favor") else 1.0
    q, k, v, dout = (in_dtype(x, dtype) for x in (
        uniform(rng, batch + (n, d), dtype=npt) * npt(scale),
        uniform(rng, batch + (m, d), dtype=npt) * npt(scale),
        uniform(rng, batch + (m, dv), dtype=npt),
        uniform(rng, batch + (n, dv), dtype=npt)))
    qt, kt, vt, dt = (ttype(x.shape, dyn, dtype) for x in (q, k, v, dout))
    args = [("q", qt), ("k", kt), ("v", vt), ("do", dt)]
    inputs = [q, k, v, dout]
    p, proj, ptype = None, "", ""
    if kind == "favor":
        p = in_dtype(rng.normal(size=(d, fmax)).astype(npt), dtype)
        args.append(("p", ttype(p.shape, (), dtype)))
        inputs.append(p)
        proj, ptype = " projection(%p)", ", " + args[-1][1]
    attrs = proj + (" causal" if causal else "") + (f" normalize(eps = {eps:e})" if eps else "")
    body = [f"%dq, %dk, %dv = linattn.attention_grad {kind} %q, %k, %v, %do{attrs} "
            f": {qt}, {kt}, {vt}, {dt}{ptype} -> {qt}, {kt}, {vt}"]
    operands = (kind, f64(q), f64(k), f64(v), f64(dout), None if p is None else f64(p),
                causal, eps)
    case = Case(name, args, body, [("%dq", qt), ("%dk", kt), ("%dv", vt)], inputs,
                list(ref.attention_grad(*operands)), kernel_tolerance(dtype, dtype))
    case.scales = list(ref.attention_grad_magnitude(*operands))
    return case


def attention_grad_cases():
    """The attention_grad and feature_map_grad cases, after checking their
    reference against central differences (reference.check_attention_grad)."""
    ref.check_attention_grad()
    return [
        feature_map_grad_case("elu", (2, 3, 7, 8)),
        feature_map_grad_case("relu", (3, 5, 6), dyn=(0, 1, 2)),
        feature_map_grad_case("identity", (4, 5)),
        feature_map_grad_case("poly2", (2, 7, 4)),
        feature_map_grad_case("poly2", (2, 7, 3), dyn=(0, 1, 2), dtype="f64"),
        feature_map_grad_case("favor", (2, 7, 8), m=12),
        feature_map_grad_case("favor", (9, 5), dyn=(0, 1), m=7),
    ] + [
        attention_grad_case("elu", batch, n, n, 8, 5, causal, eps, dyn)
        for causal in (True, False)
        for eps in (None, EPS)
        for batch, n, dyn in (((2, 3), 7, ()), ((2,), 100, (1,)))
    ] + [
        attention_grad_case("elu", (2,), 7, 11, 8, 5, False, EPS),
        attention_grad_case("elu", (3,), 13, 6, 5, 7, False, None, dyn=(0, 1, 2)),
        attention_grad_case("relu", (2, 3), 7, 11, 8, 5, False, None),
        attention_grad_case("relu", (2,), 9, 9, 6, 4, True, None, dyn=(2,)),
        attention_grad_case("identity", (2,), 7, 7, 8, 5, True, None),
        attention_grad_case("poly2", (2,), 7, 13, 4, 5, False, EPS),
        attention_grad_case("poly2", (1, 2), 7, 7, 3, 6, True, EPS, dyn=(0, 1, 2)),
        attention_grad_case("favor", (2,), 7, 7, 8, 5, True, EPS, fmax=16),
        attention_grad_case("favor", (2, 3), 7, 11, 8, 8, False, EPS, fmax=12),
        attention_grad_case("elu", (1,), 1, 1, 8, 4, True, EPS),
        # No keys, normalized, f16: the denominators are eps, dO / eps is
        # past f16's range, and the gradients are 0 (not NaN).
        attention_grad_case("elu", (2,), 3, 0, 4, 8, False, EPS, dyn=(0,),
                            dtype="f16"),
        attention_grad_case("elu", (2,), 7, 7, 8, 5, True, EPS, dtype="f64"),
        attention_grad_case("elu", (2,), 9, 5, 6, 3, False, EPS, dtype="f64", dyn=(1,)),
        generic(attention_grad_case("elu", (1, 2), 9, 9, 4, 3, True, EPS, dyn=(0, 2))),
        generic(attention_grad_case("favor", (2,), 7, 11, 4, 3, False, EPS, fmax=6)),
        via(attention_grad_case("elu", (2,), 37, 37, 8, 5, True, EPS), "chunk8",
            ["linattn-decompose", "linattn-chunk-scan{chunk-size=8}"]),
    ]


def f32_tensor(*shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


ID3 = "affine_map<(d0, d1, d2) -> (d0, d1, d2)>"
ROW3 = "affine_map<(d0, d1, d2) -> (d0, d1)>"
PAR3 = '["parallel", "parallel", "parallel"]'


def linalg_elu1_prologue(q_type, k_type):
    """The constants %zero, %one and %eps, and %fq, %fk: elu + 1 of %q and %k
    as an importer writes it (a select of expm1, then + 1, in one generic)."""
    def elu1(src, typ):
        return [f"%e_{src} = tensor.empty() : {typ}",
                f"%f{src} = linalg.generic {{indexing_maps = [{ID3}, {ID3}], iterator_types = {PAR3}}} "
                f"ins(%{src} : {typ}) outs(%e_{src} : {typ}) {{",
                "^bb0(%x: f32, %o: f32):",
                "  %c = arith.cmpf ogt, %x, %zero : f32",
                "  %em1 = math.expm1 %x : f32",
                "  %s = arith.select %c, %x, %em1 : f32",
                "  %p = arith.addf %s, %one : f32",
                "  linalg.yield %p : f32",
                f"}} -> {typ}"]
    return (["%zero = arith.constant 0.0 : f32", "%one = arith.constant 1.0 : f32",
             f"%eps = arith.constant {EPS:e} : f32"]
            + elu1("q", q_type) + elu1("k", k_type))


def linalg_qkv(name, b, n, m, d, dv):
    """The seeded f32 inputs of a linalg case: q [b, n, d], k [b, m, d],
    v [b, m, dv]."""
    rng = rng_for(name)
    return (uniform(rng, (b, n, d)), uniform(rng, (b, m, d)),
            uniform(rng, (b, m, dv)))


def linalg_attention_case(b, n, m, d, dv, causal):
    """Normalized elu+1 attention written in plain linalg, as an importer
    emits it: elementwise feature maps, a transposed batch_matmul, an optional
    select-on-index causal mask, row sums and a division by them plus eps."""
    name = f"linalg_attention_{'causal' if causal else 'full'}_{b}x{n}x{m}x{d}x{dv}"
    q, k, v = linalg_qkv(name, b, n, m, d, dv)
    t = f32_tensor

    body = linalg_elu1_prologue(t(b, n, d), t(b, m, d))
    body += [f"%et = tensor.empty() : {t(b, d, m)}",
             f"%kt = linalg.transpose ins(%fk : {t(b, m, d)}) outs(%et : {t(b, d, m)}) permutation = [0, 2, 1]",
             f"%ea = tensor.empty() : {t(b, n, m)}",
             f"%za = linalg.fill ins(%zero : f32) outs(%ea : {t(b, n, m)}) -> {t(b, n, m)}",
             f"%{'a0' if causal else 'a'} = linalg.batch_matmul ins(%fq, %kt : {t(b, n, d)}, {t(b, d, m)}) outs(%za : {t(b, n, m)}) -> {t(b, n, m)}"]
    if causal:
        body += [f"%a = linalg.generic {{indexing_maps = [{ID3}, {ID3}], iterator_types = {PAR3}}} "
                 f"ins(%a0 : {t(b, n, m)}) outs(%ea : {t(b, n, m)}) {{",
                 "^bb0(%x: f32, %o: f32):",
                 "  %i = linalg.index 1 : index", "  %j = linalg.index 2 : index",
                 "  %c = arith.cmpi ule, %j, %i : index",
                 "  %s = arith.select %c, %x, %zero : f32", "  linalg.yield %s : f32",
                 f"}} -> {t(b, n, m)}"]
    body += [f"%er = tensor.empty() : {t(b, n)}",
             f"%zr = linalg.fill ins(%zero : f32) outs(%er : {t(b, n)}) -> {t(b, n)}",
             f"%r = linalg.generic {{indexing_maps = [{ID3}, {ROW3}], iterator_types = "
             f'["parallel", "parallel", "reduction"]}} ins(%a : {t(b, n, m)}) outs(%zr : {t(b, n)}) {{',
             "^bb0(%x: f32, %acc: f32):", "  %s = arith.addf %x, %acc : f32", "  linalg.yield %s : f32",
             f"}} -> {t(b, n)}",
             f"%eo = tensor.empty() : {t(b, n, dv)}",
             f"%zo = linalg.fill ins(%zero : f32) outs(%eo : {t(b, n, dv)}) -> {t(b, n, dv)}",
             f"%o = linalg.batch_matmul ins(%a, %v : {t(b, n, m)}, {t(b, m, dv)}) outs(%zo : {t(b, n, dv)}) -> {t(b, n, dv)}",
             f"%out = linalg.generic {{indexing_maps = [{ID3}, {ROW3}, {ID3}], iterator_types = {PAR3}}} "
             f"ins(%o, %r : {t(b, n, dv)}, {t(b, n)}) outs(%eo : {t(b, n, dv)}) {{",
             "^bb0(%x: f32, %s: f32, %y: f32):", "  %den = arith.addf %s, %eps : f32",
             "  %quot = arith.divf %x, %den : f32", "  linalg.yield %quot : f32",
             f"}} -> {t(b, n, dv)}"]
    expected = ref.attention("elu", f64(q), f64(k), f64(v), None, causal, EPS)
    return Case(name, [("q", t(b, n, d)), ("k", t(b, m, d)), ("v", t(b, m, dv))], body,
                [("%out", t(b, n, dv))], [q, k, v], [expected])


def linalg_linear_form_case(b, n, m, d, dv, normalized):
    """Attention in its linear form written in plain linalg, as an importer
    emits `(q @ (k.transpose(-2, -1) @ v)) / (einsum("bnd,bd->bn", q,
    k.sum(-2)) + eps)`:
    elementwise elu + 1, a transposed batch_matmul for the summary, one for
    the readout, the token sum by linalg.reduce, the products with it by a
    generic, and a division by them plus eps."""
    name = f"linalg_linear_form_{'normalized' if normalized else 'plain'}_{b}x{n}x{m}x{d}x{dv}"
    q, k, v = linalg_qkv(name, b, n, m, d, dv)
    t = f32_tensor
    vec3 = "affine_map<(d0, d1, d2) -> (d0, d2)>"

    body = linalg_elu1_prologue(t(b, n, d), t(b, m, d))
    body += [f"%et = tensor.empty() : {t(b, d, m)}",
             f"%kt = linalg.transpose ins(%fk : {t(b, m, d)}) outs(%et : {t(b, d, m)}) permutation = [0, 2, 1]",
             f"%es = tensor.empty() : {t(b, d, dv)}",
             f"%zs = linalg.fill ins(%zero : f32) outs(%es : {t(b, d, dv)}) -> {t(b, d, dv)}",
             f"%kv = linalg.batch_matmul ins(%kt, %v : {t(b, d, m)}, {t(b, m, dv)}) outs(%zs : {t(b, d, dv)}) -> {t(b, d, dv)}",
             f"%eo = tensor.empty() : {t(b, n, dv)}",
             f"%zo = linalg.fill ins(%zero : f32) outs(%eo : {t(b, n, dv)}) -> {t(b, n, dv)}",
             f"%{'num' if normalized else 'out'} = linalg.batch_matmul ins(%fq, %kv : {t(b, n, d)}, {t(b, d, dv)}) "
             f"outs(%zo : {t(b, n, dv)}) -> {t(b, n, dv)}"]
    if normalized:
        body += [f"%ez = tensor.empty() : {t(b, d)}",
                 f"%zz = linalg.fill ins(%zero : f32) outs(%ez : {t(b, d)}) -> {t(b, d)}",
                 f"%ksum = linalg.reduce ins(%fk : {t(b, m, d)}) outs(%zz : {t(b, d)}) dimensions = [1]",
                 "  (%x: f32, %acc: f32) {", "    %a = arith.addf %x, %acc : f32",
                 "    linalg.yield %a : f32", "  }",
                 f"%ed = tensor.empty() : {t(b, n)}",
                 f"%zd = linalg.fill ins(%zero : f32) outs(%ed : {t(b, n)}) -> {t(b, n)}",
                 f"%den = linalg.generic {{indexing_maps = [{ID3}, {vec3}, {ROW3}], iterator_types = "
                 f'["parallel", "parallel", "reduction"]}} ins(%fq, %ksum : {t(b, n, d)}, {t(b, d)}) '
                 f"outs(%zd : {t(b, n)}) {{",
                 "^bb0(%x: f32, %y: f32, %acc: f32):", "  %p = arith.mulf %x, %y : f32",
                 "  %s = arith.addf %acc, %p : f32", "  linalg.yield %s : f32",
                 f"}} -> {t(b, n)}",
                 f"%out = linalg.generic {{indexing_maps = [{ID3}, {ROW3}, {ID3}], iterator_types = {PAR3}}} "
                 f"ins(%num, %den : {t(b, n, dv)}, {t(b, n)}) outs(%eo : {t(b, n, dv)}) {{",
                 "^bb0(%x: f32, %s: f32, %y: f32):", "  %de = arith.addf %s, %eps : f32",
                 "  %quot = arith.divf %x, %de : f32", "  linalg.yield %quot : f32",
                 f"}} -> {t(b, n, dv)}"]
    expected = ref.attention("elu", f64(q), f64(k), f64(v), None, False,
                             EPS if normalized else None)
    return Case(name, [("q", t(b, n, d)), ("k", t(b, m, d)), ("v", t(b, m, dv))], body,
                [("%out", t(b, n, dv))], [q, k, v], [expected])


def token_major_generic(maps, iterators, ins, out, body, result_type):
    """A linalg.generic line list over `ins` [(value, type)] into `out`
    (value, type) with the given maps, iterator types and body lines."""
    affine = ", ".join(f"affine_map<{m}>" for m in maps)
    its = ", ".join(f'"{it}"' for it in iterators)
    names = ", ".join(v for v, _ in ins)
    types = ", ".join(t for _, t in ins)
    return ([f"{result_type[0]} = linalg.generic {{indexing_maps = [{affine}], iterator_types = [{its}]}} "
             f"ins({names} : {types}) outs({out[0]} : {out[1]}) {{"]
            + ["  " + line for line in body] + [f"}} -> {result_type[1]}"])


MULADD = ["^bb0(%x1: f32, %x2: f32, %acc: f32):", "  %p = arith.mulf %x1, %x2 : f32",
          "  %s = arith.addf %acc, %p : f32", "  linalg.yield %s : f32"]
ELU1 = ["^bb0(%x: f32, %o: f32):", "  %c = arith.cmpf ogt, %x, %zero : f32",
        "  %em1 = math.expm1 %x : f32", "  %s = arith.select %c, %x, %em1 : f32",
        "  %p = arith.addf %s, %one : f32", "  linalg.yield %p : f32"]
ID4 = "(d0, d1, d2, d3) -> (d0, d1, d2, d3)"


def token_major_attention_case(b, n, h, d, dv, causal, reference=True):
    """Normalized elu+1 attention on [B, N, H, D] with N dynamic, as
    StableHLO's dot_general lowers Flax-style einsums: scores =
    einsum("bnhd,bmhd->bhnm"), an optional select-on-index causal mask, row
    sums [B, H, N], out = einsum("bhnm,bmhe->bnhe") divided by the row sums
    plus eps read in their own layout. Without `reference` the case has no
    inputs or expected result (the float64 reference is quadratic in N)."""
    name = f"token_major_attention_{'causal' if causal else 'full'}_{b}x{n}x{h}x{d}x{dv}"
    if reference:
        rng = rng_for(name)
        q, k, v = (uniform(rng, (b, n, h, d)), uniform(rng, (b, n, h, d)),
                   uniform(rng, (b, n, h, dv)))
    tq, tv = f"tensor<{b}x?x{h}x{d}xf32>", f"tensor<{b}x?x{h}x{dv}xf32>"
    ts, tr = f"tensor<{b}x{h}x?x?xf32>", f"tensor<{b}x{h}x?xf32>"
    par4 = ["parallel"] * 4
    body = ["%zero = arith.constant 0.0 : f32", "%one = arith.constant 1.0 : f32",
            "%eps = arith.constant 1.0e-6 : f32", "%c1 = arith.constant 1 : index",
            f"%n = tensor.dim %q, %c1 : {tq}", f"%ef = tensor.empty(%n) : {tq}"]
    for x in ("q", "k"):
        body += token_major_generic([ID4, ID4], par4, [(f"%{x}", tq)], ("%ef", tq),
                                    ELU1, (f"%f{x}", tq))
    body += [f"%es = tensor.empty(%n, %n) : {ts}",
             f"%zs = linalg.fill ins(%zero : f32) outs(%es : {ts}) -> {ts}"]
    body += token_major_generic(
        ["(b, h, n, m, d) -> (b, n, h, d)", "(b, h, n, m, d) -> (b, m, h, d)",
         "(b, h, n, m, d) -> (b, h, n, m)"], par4 + ["reduction"],
        [("%fq", tq), ("%fk", tq)], ("%zs", ts), MULADD, ("%a0" if causal else "%a", ts))
    if causal:
        body += token_major_generic(
            [ID4, ID4], par4, [("%a0", ts)], ("%es", ts),
            ["^bb0(%x: f32, %o: f32):", "  %i = linalg.index 2 : index",
             "  %j = linalg.index 3 : index", "  %c = arith.cmpi ule, %j, %i : index",
             "  %s = arith.select %c, %x, %zero : f32", "  linalg.yield %s : f32"],
            ("%a", ts))
    body += [f"%er = tensor.empty(%n) : {tr}",
             f"%zr = linalg.fill ins(%zero : f32) outs(%er : {tr}) -> {tr}"]
    body += token_major_generic(
        [ID4, "(b, h, n, m) -> (b, h, n)"], ["parallel"] * 3 + ["reduction"],
        [("%a", ts)], ("%zr", tr),
        ["^bb0(%x: f32, %acc: f32):", "  %s = arith.addf %x, %acc : f32",
         "  linalg.yield %s : f32"], ("%r", tr))
    body += [f"%eo = tensor.empty(%n) : {tv}",
             f"%zo = linalg.fill ins(%zero : f32) outs(%eo : {tv}) -> {tv}"]
    body += token_major_generic(
        ["(b, n, h, e, m) -> (b, h, n, m)", "(b, n, h, e, m) -> (b, m, h, e)",
         "(b, n, h, e, m) -> (b, n, h, e)"], par4 + ["reduction"],
        [("%a", ts), ("%v", tv)], ("%zo", tv), MULADD, ("%num", tv))
    body += token_major_generic(
        [ID4, "(b, n, h, e) -> (b, h, n)", ID4], par4, [("%num", tv), ("%r", tr)],
        ("%eo", tv),
        ["^bb0(%x: f32, %s: f32, %y: f32):", "  %den = arith.addf %s, %eps : f32",
         "  %quot = arith.divf %x, %den : f32", "  linalg.yield %quot : f32"],
        ("%out", tv))
    if not reference:
        return Case(name, [("q", tq), ("k", tq), ("v", tv)], body, [("%out", tv)],
                    [], [])
    heads_first = lambda x: f64(x).transpose(0, 2, 1, 3)
    expected = ref.attention("elu", heads_first(q), heads_first(k), heads_first(v),
                             None, causal, EPS).transpose(0, 2, 1, 3)
    return Case(name, [("q", tq), ("k", tq), ("v", tv)], body, [("%out", tv)],
                [q, k, v], [expected])


def token_major_linear_form_case(b, l, s, h, d, dv):
    """The LinearAttention of "Transformers are RNNs" as its reference code
    writes it, on [N, L, H, D]: KV = einsum("nshd,nshm->nhmd", K, V),
    Z = 1 / (einsum("nlhd,nhd->nlh", Q, K.sum(dim=1)) + eps),
    out = einsum("nlhd,nhmd->nlhm", Q, KV) * Z, with elu + 1."""
    name = f"token_major_linear_form_{b}x{l}x{s}x{h}x{d}x{dv}"
    rng = rng_for(name)
    q, k, v = (uniform(rng, (b, l, h, d)), uniform(rng, (b, s, h, d)),
               uniform(rng, (b, s, h, dv)))
    t = f32_tensor
    par4 = ["parallel"] * 4
    body = ["%zero = arith.constant 0.0 : f32", "%one = arith.constant 1.0 : f32",
            "%eps = arith.constant 1.0e-6 : f32",
            f"%eq = tensor.empty() : {t(b, l, h, d)}", f"%ek = tensor.empty() : {t(b, s, h, d)}"]
    body += token_major_generic([ID4, ID4], par4, [("%q", t(b, l, h, d))],
                                ("%eq", t(b, l, h, d)), ELU1, ("%fq", t(b, l, h, d)))
    body += token_major_generic([ID4, ID4], par4, [("%k", t(b, s, h, d))],
                                ("%ek", t(b, s, h, d)), ELU1, ("%fk", t(b, s, h, d)))
    body += [f"%zkv = linalg.fill ins(%zero : f32) outs(%ekv : {t(b, h, dv, d)}) -> {t(b, h, dv, d)}"]
    body.insert(-1, f"%ekv = tensor.empty() : {t(b, h, dv, d)}")
    body += token_major_generic(
        ["(n, h, m, d, s) -> (n, s, h, d)", "(n, h, m, d, s) -> (n, s, h, m)",
         "(n, h, m, d, s) -> (n, h, m, d)"], par4 + ["reduction"],
        [("%fk", t(b, s, h, d)), ("%v", t(b, s, h, dv))], ("%zkv", t(b, h, dv, d)),
        MULADD, ("%kv", t(b, h, dv, d)))
    body += [f"%eks = tensor.empty() : {t(b, h, d)}",
             f"%zks = linalg.fill ins(%zero : f32) outs(%eks : {t(b, h, d)}) -> {t(b, h, d)}"]
    body += token_major_generic(
        [ID4, "(n, s, h, d) -> (n, h, d)"], ["parallel", "reduction", "parallel", "parallel"],
        [("%fk", t(b, s, h, d))], ("%zks", t(b, h, d)),
        ["^bb0(%x: f32, %acc: f32):", "  %r = arith.addf %acc, %x : f32",
         "  linalg.yield %r : f32"], ("%ksum", t(b, h, d)))
    body += [f"%ed = tensor.empty() : {t(b, l, h)}",
             f"%zd = linalg.fill ins(%zero : f32) outs(%ed : {t(b, l, h)}) -> {t(b, l, h)}"]
    body += token_major_generic(
        [ID4, "(n, l, h, d) -> (n, h, d)", "(n, l, h, d) -> (n, l, h)"],
        ["parallel"] * 3 + ["reduction"], [("%fq", t(b, l, h, d)), ("%ksum", t(b, h, d))],
        ("%zd", t(b, l, h)), MULADD, ("%den", t(b, l, h)))
    body += token_major_generic(
        ["(n, l, h) -> (n, l, h)"] * 2, ["parallel"] * 3, [("%den", t(b, l, h))],
        ("%ed", t(b, l, h)),
        ["^bb0(%x: f32, %o: f32):", "  %de = arith.addf %x, %eps : f32",
         "  %r = arith.divf %one, %de : f32", "  linalg.yield %r : f32"], ("%z", t(b, l, h)))
    body += [f"%eo = tensor.empty() : {t(b, l, h, dv)}",
             f"%zo = linalg.fill ins(%zero : f32) outs(%eo : {t(b, l, h, dv)}) -> {t(b, l, h, dv)}"]
    body += token_major_generic(
        ["(n, l, h, m, d) -> (n, l, h, d)", "(n, l, h, m, d) -> (n, h, m, d)",
         "(n, l, h, m, d) -> (n, l, h, m)"], par4 + ["reduction"],
        [("%fq", t(b, l, h, d)), ("%kv", t(b, h, dv, d))], ("%zo", t(b, l, h, dv)),
        MULADD, ("%num", t(b, l, h, dv)))
    body += token_major_generic(
        [ID4, "(n, l, h, m) -> (n, l, h)", ID4], par4,
        [("%num", t(b, l, h, dv)), ("%z", t(b, l, h))], ("%eo", t(b, l, h, dv)),
        ["^bb0(%x: f32, %r: f32, %o: f32):", "  %p = arith.mulf %x, %r : f32",
         "  linalg.yield %p : f32"], ("%out", t(b, l, h, dv)))
    heads_first = lambda x: f64(x).transpose(0, 2, 1, 3)
    expected = ref.attention("elu", heads_first(q), heads_first(k), heads_first(v),
                             None, False, EPS).transpose(0, 2, 1, 3)
    return Case(name, [("q", t(b, l, h, d)), ("k", t(b, s, h, d)), ("v", t(b, s, h, dv))],
                body, [("%out", t(b, l, h, dv))], [q, k, v], [expected])


EPS = 1e-6

# Lowers the ops as they are written, without the pipeline's own rewrites.
LOWER_AS_WRITTEN = "linattn-lower-to-cpu{rewrite-forms=false}"


def via(case, label, passes):
    """`case` run through `passes` first, then lowered as written: the same
    inputs and reference as the case itself, so a rewrite that changes the
    result fails it."""
    case.name += "__" + label
    case.pipeline = ",".join(passes + [LOWER_AS_WRITTEN])
    return case


def chunked(case, size):
    return via(case, f"chunk{size}", [f"linattn-chunk-scan{{chunk-size={size}}}"])


def generic(case):
    """`case` through the generic lowering (convert-linattn-to-linalg), not
    the CPU kernels."""
    case.name += "__generic"
    case.pipeline = "linattn-lower-to-cpu{kernels=false}"
    return case


def empty_cases():
    """Sizes of 0 (batch, tokens, features, values, head) through every
    path that slices the operands: the kernels, the generic lowering, the
    chunkwise and step rewrites, and poly2's constant feature."""
    cases = []
    for reverse, init, eps, batch, n, f, dv in (
            (False, True, EPS, (2,), 7, 0, 5),
            (True, False, None, (2,), 7, 0, 5),
            (False, True, EPS, (2,), 7, 6, 0),
            (True, True, EPS, (2,), 7, 6, 0),
            (False, True, EPS, (0,), 7, 6, 5),
            (True, True, EPS, (2, 0), 7, 6, 5)):
        make = lambda: scan_case(batch, n, f, dv, reverse, init, eps)
        cases += [make(), generic(make()), chunked(make(), 3),
                  via(make(), "steps", ["linattn-scan-to-steps"])]
    cases += [generic(step_case((2,), 0, 5, EPS)), generic(step_case((2,), 6, 0, EPS)),
              generic(step_case((0,), 6, 5, None))]
    for kind, batch, n, m, d, dv, causal in (
            ("poly2", (2,), 7, 5, 0, 4, False),
            ("poly2", (2,), 7, 7, 0, 4, True),
            ("poly2", (0,), 7, 7, 3, 4, True),
            ("poly2", (2,), 0, 5, 3, 4, False),
            ("poly2", (2,), 7, 0, 3, 4, False),
            ("elu", (2,), 7, 7, 0, 4, True),
            ("elu", (2,), 7, 7, 5, 0, True)):
        make = lambda: attention_case(kind, batch, n, m, d, dv, causal=causal, eps=EPS)
        cases += [make(), generic(make())]
        if causal:
            cases += [via(make(), "chunked", ["linattn-decompose", "linattn-masked-to-scan",
                                              "linattn-chunk-scan{chunk-size=3}"])]
        else:
            cases += [via(make(), "reassociate",
                          ["linattn-decompose", "linattn-reassociate{mode=always}"])]
    return cases

GROUPS = {
    "feature_map": lambda: [
        feature_map_case("elu", (2, 3, 7, 8)),
        feature_map_case("elu", (2, 3, 100, 16), dyn=(0, 1, 2)),
        feature_map_case("relu", (7, 5)),
        feature_map_case("relu", (2, 1, 5), dyn=(1, 2)),
        # The elementwise maps' own kernel (where no kernel fuses them):
        # rows in parallel (past the serial threshold), a masked last
        # vector, one row.
        feature_map_case("elu", (4, 1000, 37)),
        feature_map_case("relu", (9,), dyn=(0,)),
        feature_map_case("identity", (3, 7, 8), dyn=(0,)),
        feature_map_case("poly2", (2, 7, 3)),
        feature_map_case("poly2", (3, 5, 4), dyn=(0, 1, 2)),
        feature_map_case("poly2", (1, 1)),
        feature_map_case("favor", (2, 7, 8), m=12),
        feature_map_case("favor", (2, 3, 100, 8), dyn=(0, 2), m=20, pdyn=(1,)),
    ],
    "quadratic": lambda: [
        scores_case((2,), 7, 7, 8, causal=True, scale=0.125),
        scores_case((2, 3), 7, 11, 5, causal=False, scale=1.0),
        scores_case((2,), 100, 100, 16, causal=True, scale=1.0, dyn=(0, 1, 2)),
        scores_case((), 1, 1, 3, causal=True, scale=2.0),
        apply_scores_case((2,), 7, 11, 5, eps=None),
        apply_scores_case((2, 3), 7, 11, 5, eps=EPS),
        apply_scores_case((2,), 100, 37, 9, eps=EPS, dyn=(0, 1, 2)),
    ],
    "linear": lambda: [
        sliced_state_case(),
        linear_case((2, 3), 7, 11, 8, 5, eps=EPS),
        linear_case((2,), 7, 11, 8, 5, eps=None),
        linear_case((2,), 100, 37, 16, 9, eps=EPS, dyn=(1,)),
        linear_case((1,), 1, 1, 3, 2, eps=EPS, state="f64"),
    ],
    "scan": lambda: [
        scan_case(batch, n, 8, 5, reverse, init, eps, dyn)
        for reverse in (False, True)
        for init in (False, True)
        for eps in (None, EPS)
        for batch, n, dyn in (((2, 3), 7, ()), ((2,), 100, (1,)))
    ] + [
        scan_case((2,), 1, 8, 5, False, True, EPS),
        scan_case((), 7, 8, 5, True, True, EPS, dyn=(0,)),
        scan_case((), 1, 3, 2, False, False, None),
        scan_case((3,), 7, 6, 4, False, False, EPS, dyn=(0, 1, 2), chunk=4),
        # A batch of 1 beside dynamic sizes, through the generic lowering and
        # the steps: the token slices keep their unit dimension, so the
        # canonicalizer cannot drop a different one once sizes turn static.
        generic(scan_case((1, 2), 5, 4, 3, False, True, EPS, dyn=(0, 2))),
        generic(scan_case((1, 2), 5, 4, 3, True, False, None, dyn=(2, 3))),
        via(scan_case((1, 1), 3, 4, 3, False, True, EPS, dyn=(0, 1)), "steps",
            ["linattn-scan-to-steps", "canonicalize"]),
        shared_buffer_case(),
    ],
    "scan_grad": scan_grad_cases,
    "attention_grad": attention_grad_cases,
    "step": lambda: [
        step_case((2, 3), 8, 5, None),
        step_case((2, 3), 8, 5, EPS),
        step_case((2,), 7, 3, EPS, dyn=(0, 1)),
        step_case((), 7, 3, EPS, dyn=(0,)),
        step_case((), 4, 4, None),
        step_chain_case((2,), 3, 8, 5, EPS),
        step_chain_case((2, 3), 2, 4, 6, None),
    ],
    "attention": lambda: [
        attention_case("elu", (2, 3), 7, 7, 8, 8, causal=True, eps=EPS),
        attention_case("elu", (2,), 7, 11, 8, 5, causal=False, eps=EPS),
        attention_case("elu", (2,), 100, 100, 16, 9, causal=True, eps=EPS, dyn=(1,)),
        attention_case("relu", (2, 3), 7, 11, 8, 5, causal=False, eps=None),
        attention_case("identity", (2,), 7, 7, 8, 5, causal=True, eps=None),
        attention_case("poly2", (2,), 7, 13, 4, 5, causal=False, eps=EPS),
        attention_case("poly2", (1, 2), 7, 7, 3, 6, causal=True, eps=EPS, dyn=(0, 1, 2)),
        attention_case("favor", (2,), 7, 7, 8, 5, causal=True, eps=EPS, fmax=16),
        attention_case("favor", (2, 3), 7, 11, 8, 8, causal=False, eps=EPS, fmax=12),
        attention_case("elu", (1,), 1, 1, 8, 4, causal=True, eps=EPS),
        attention_case("elu", (), 7, 5, 3, 4, causal=False, eps=EPS, dyn=(0,)),
        attention_case("elu", (2,), 7, 7, 8, 5, causal=True, eps=EPS, dtype="f64"),
    ],
    # Each rewrite pass before and after: the quadratic form lowered as
    # written, and the same inputs through the pass.
    "rewrites": lambda: [
        via(attention_case("elu", (2,), 7, 7, 8, 5, causal=True, eps=EPS), "quadratic", []),
        via(attention_case("elu", (2,), 7, 7, 8, 5, causal=True, eps=EPS), "masked_to_scan",
            ["linattn-decompose", "linattn-masked-to-scan"]),
        via(attention_case("relu", (2, 3), 9, 9, 4, 6, causal=True, eps=None, dyn=(2,)),
            "masked_to_scan", ["linattn-decompose", "linattn-masked-to-scan"]),
        via(attention_case("relu", (2,), 7, 11, 8, 5, causal=False, eps=EPS), "quadratic", []),
        via(attention_case("relu", (2,), 7, 11, 8, 5, causal=False, eps=EPS), "reassociate",
            ["linattn-decompose", "linattn-reassociate{mode=always}"]),
        via(attention_case("elu", (3,), 13, 6, 5, 7, causal=False, eps=None, dyn=(1,)),
            "reassociate", ["linattn-decompose", "linattn-reassociate{mode=always}"]),
        via(attention_case("poly2", (2,), 7, 7, 3, 4, causal=True, eps=EPS), "chunked",
            ["linattn-decompose", "linattn-masked-to-scan", "linattn-chunk-scan{chunk-size=3}"]),
        chunked(scan_case((2,), 100, 8, 5, False, True, EPS), 1),
        chunked(scan_case((2,), 100, 8, 5, False, True, EPS), 16),
        chunked(scan_case((2,), 100, 8, 5, False, True, EPS), 64),
        chunked(scan_case((2,), 7, 6, 4, False, False, None, dyn=(1,)), 3),
        chunked(scan_case((2,), 7, 6, 4, True, True, EPS, dyn=(0, 1)), 3),
        chunked(scan_case((), 33, 5, 3, True, False, EPS), 8),
        # bf16 and f16 data with an f32 state: the chunks widen their tiles.
        chunked(kernel_case("elu", (2,), 100, 16, 8, EPS, dtype="bf16"), 16),
        chunked(kernel_case("relu", (2,), 37, 16, 8, EPS, reverse=True, init=True,
                            dtype="f16"), 16),
        via(scan_case((2,), 7, 8, 5, False, True, EPS), "steps", ["linattn-scan-to-steps"]),
        via(scan_case((2,), 5, 4, 3, True, False, None), "steps", ["linattn-scan-to-steps"]),
        # Importer IR in plain linalg: lowered as written, and raised (then
        # reassociated, or turned into a scan when causal).
        via(linalg_attention_case(2, 7, 11, 8, 5, causal=False), "as_written", []),
        via(linalg_attention_case(2, 7, 11, 8, 5, causal=False), "raised",
            ["linattn-raise", "linattn-reassociate{mode=always}"]),
        via(linalg_attention_case(2, 9, 9, 6, 4, causal=True), "as_written", []),
        via(linalg_attention_case(2, 9, 9, 6, 4, causal=True), "raised",
            ["linattn-raise", "linattn-masked-to-scan"]),
        # The linear form as written: as written, and raised to kv_summary
        # and query_readout (normalized by the summary's z).
        via(linalg_linear_form_case(2, 13, 10, 7, 5, normalized=True), "as_written", []),
        via(linalg_linear_form_case(2, 13, 10, 7, 5, normalized=True), "raised",
            ["linattn-raise"]),
        via(linalg_linear_form_case(3, 6, 17, 9, 4, normalized=False), "raised",
            ["linattn-raise"]),
        # The same on [B, N, H, D] (JAX, Flax, the paper's reference code):
        # raised through the transposes into the heads-first linattn ops.
        via(token_major_attention_case(2, 13, 3, 5, 4, causal=True), "as_written", []),
        via(token_major_attention_case(2, 13, 3, 5, 4, causal=True), "raised",
            ["linattn-raise", "linattn-masked-to-scan"]),
        via(token_major_attention_case(1, 10, 2, 7, 3, causal=False), "raised",
            ["linattn-raise", "linattn-reassociate{mode=always}"]),
        via(token_major_linear_form_case(2, 11, 9, 3, 6, 5), "as_written", []),
        via(token_major_linear_form_case(2, 11, 9, 3, 6, 5), "raised", ["linattn-raise"]),
        # Whole vectors (D = Dv = 16): the kernels read the token-major
        # operands in place and stream the output into its transposed buffer.
        token_major_attention_case(2, 70, 3, 16, 16, causal=True),
        token_major_attention_case(1, 33, 4, 16, 32, causal=False),
        token_major_linear_form_case(2, 40, 29, 3, 16, 16),
    ],
    # The vectorized scan and step kernels: fused feature maps, sizes that are
    # not multiples of the vector width or the token block, every head size
    # of the benchmarks, 16-bit data, and each kernel option against the
    # same reference.
    "kernels": lambda: [
        kernel_case(kind, (2, 3), n, d, dv, eps, reverse, init)
        for kind, n, d, dv, eps, reverse, init in (
            ("elu", 7, 16, 16, EPS, False, False),
            ("elu", 1, 32, 17, EPS, False, True),
            ("relu", 9, 64, 48, EPS, True, False),
            ("identity", 13, 20, 33, None, False, True),
            ("elu", 23, 128, 128, EPS, True, True),
            ("relu", 1, 16, 5, None, True, True),
        )
    ] + [
        kernel_case("elu", (2,), 1000, 64, 64, EPS, dyn=(1,)),
        kernel_case("elu", (1, 2), 4097, 32, 40, EPS, init=True, dyn=(0, 2)),
        kernel_case("elu", (3,), 0, 16, 8, EPS, init=True, dyn=(1,)),
        kernel_case("elu", (), 37, 24, 12, EPS, reverse=True),
        # elu's exp over its whole range, down to where it underflows.
        kernel_case("elu", (2,), 50, 32, 16, EPS, lo=-100.0),
        kernel_case("elu", (2,), 50, 32, 16, None, init=True, lo=-8.0),
        kernel_case("elu", (2, 2), 67, 64, 64, EPS, dtype="bf16"),
        kernel_case("relu", (2,), 31, 32, 20, None, init=True, dtype="bf16"),
        kernel_case("elu", (2, 2), 45, 64, 24, EPS, reverse=True, dtype="f16"),
        # f64 kernels: half the lanes per vector, exp by its f64 rational
        # approximation (down to where it underflows), f32 data into an f64
        # state, sequences split over threads.
        kernel_case("elu", (2, 3), 29, 20, 19, EPS, init=True, dtype="f64", state="f64"),
        kernel_case("elu", (2,), 50, 32, 16, EPS, dtype="f64", state="f64", lo=-800.0),
        kernel_case("relu", (2,), 37, 64, 13, None, reverse=True, dtype="f64", state="f64"),
        kernel_case("elu", (1, 2), 77, 16, 40, EPS, init=True, state="f64"),
        kernel_case("elu", (1,), 1000, 32, 24, EPS, init=True, dyn=(1,), dtype="f64",
                    state="f64", options="num-threads=5"),
    ] + [
        kernel_case("elu", (2, 3), 29, 20, 19, EPS, init=True, options=options)
        for options in ("tokens-per-block=1", "tokens-per-block=3",
                        "tokens-per-block=8 column-vectors=1",
                        "tokens-per-block=2 column-vectors=3",
                        "vector-width=4", "vector-width=8 tokens-per-block=5",
                        "num-threads=1", "kernels=false",
                        "target-cpu=x86-64-v3 target-features=+avx2,+fma,-avx512f",
                        "chunk-size=8")
    ] + [
        # Fewer batch elements than threads: the sequences are split into
        # chunks scanned in parallel (OpenMP runs more threads than cores).
        kernel_case("elu", (1,), 1000, 32, 24, EPS, init=True, options="num-threads=5"),
        kernel_case("relu", (2,), 300, 16, 16, EPS, reverse=True, init=True,
                    options="num-threads=7"),
        kernel_case("elu", (), 4097, 64, 64, EPS, options="num-threads=3"),
        kernel_case("identity", (1, 1), 513, 20, 9, None, reverse=True, dyn=(2,),
                    options="num-threads=4 tokens-per-block=3"),
    ] + [
        # The non-causal kernels: kv_summary (the scan's state update without
        # readout) and query_readout (the readout of a fixed state), with N
        # and M apart, sizes off the vector width and the token block, empty
        # sequences, 16-bit data and sequences split over more threads than
        # batch elements.
        linear_kernel_case(kind, batch, n, m, d, dv, eps, dyn, dtype, options)
        for kind, batch, n, m, d, dv, eps, dyn, dtype, options in (
            ("elu", (2, 3), 7, 11, 16, 16, EPS, (), "f32", ""),
            ("relu", (2,), 100, 37, 20, 33, None, (1,), "f32", ""),
            ("identity", (2,), 13, 9, 64, 48, None, (), "f32", ""),
            ("elu", (1, 2), 1000, 517, 64, 64, EPS, (0, 2), "f32", ""),
            ("elu", (3,), 5, 0, 16, 8, EPS, (1,), "f32", ""),
            ("elu", (3,), 0, 9, 16, 8, EPS, (1,), "f32", ""),
            ("elu", (2, 2), 67, 45, 64, 64, EPS, (), "bf16", ""),
            ("elu", (2,), 45, 70, 128, 24, EPS, (1,), "f16", ""),
            ("elu", (2, 3), 29, 31, 20, 19, EPS, (), "f64", ""),
            ("relu", (1,), 700, 900, 32, 24, None, (1,), "f64", "num-threads=5"),
            ("elu", (1,), 1000, 1200, 32, 24, EPS, (1,), "f32", "num-threads=5"),
            ("relu", (), 513, 301, 16, 17, None, (), "f32",
             "num-threads=7 tokens-per-block=3"),
            ("elu", (2, 3), 29, 31, 20, 19, EPS, (), "f32",
             "tokens-per-block=8 column-vectors=1"),
            ("elu", (2, 3), 29, 31, 20, 19, EPS, (), "f32", "vector-width=4"),
        )
    ] + [
        # Short non-causal quadratic forms, which the kernel pass
        # reassociates (the scale into eps, into the summary when negative or
        # unnormalized; a large eps so that its scaling shows), and one it
        # keeps (one query, one key, F = Dv = 256: the linear form needs 256
        # times the operations).
        quadratic_kernel_case(kind, batch, n, m, d, dv, scale, eps, dtype)
        for kind, batch, n, m, d, dv, scale, eps, dtype in (
            ("elu", (2, 3), 7, 11, 16, 16, 0.125, 0.5, "f32"),
            ("relu", (2,), 5, 9, 20, 19, -0.5, 0.5, "f32"),
            ("identity", (3,), 8, 8, 24, 12, 2.0, None, "f32"),
            ("elu", (), 1, 4, 64, 64, 1.0, EPS, "f32"),
            ("elu", (2, 2), 16, 16, 64, 64, 1.0, EPS, "bf16"),
            ("elu", (2,), 1, 1, 256, 256, 1.0, EPS, "f32"),
            ("elu", (2, 3), 7, 11, 16, 16, 0.125, 0.5, "f64"),
        )
    ] + [
        # Feature maps the kernels do not fuse, and cross-attention (no
        # scan), through the same pipeline.
        attention_case("poly2", (2,), 19, 19, 4, 7, causal=True, eps=EPS),
        attention_case("favor", (2,), 33, 33, 8, 9, causal=True, eps=EPS, fmax=24),
        attention_case("elu", (2, 2), 33, 70, 64, 48, causal=False, eps=EPS),
        attention_case("identity", (3,), 100, 100, 32, 16, causal=True, eps=None),
    ] + [
        # Token-major operands, read and written through strided views: a
        # reverse scan from an initial state with its final state, and the
        # linear form with more keys than queries.
        token_major_kernel_case("elu", (2,), 37, 3, 16, 24, EPS, reverse=True,
                                init=True, dyn=(1,), final=True),
        token_major_kernel_case("relu", (1, 2), 19, 2, 32, 8, EPS, m=41,
                                final=True),
    ],
    "empty": empty_cases,
    "large": lambda: [
        attention_case("elu", (1,), 1000, 1000, 16, 16, causal=False, eps=EPS, dyn=(1,)),
        scan_case((1,), 4097, 16, 16, False, False, EPS, dyn=(1,)),
        attention_case("elu", (1, 2), 4097, 4097, 64, 64, causal=True, eps=EPS),
        attention_case("elu", (1, 2), 1000, 1000, 128, 128, causal=True, eps=EPS, dyn=(2,)),
    ],
}


#===------------------------------------------------------------------------===#
# Driver
#===------------------------------------------------------------------------===#

def case_dir(workdir, name):
    """The directory of case `name` under `workdir`: names of many options
    pass the file system's 255-byte limit, so long ones keep their first
    200 characters and a checksum of the rest."""
    if len(name) > 240:
        name = f"{name[:200]}_{zlib.crc32(name.encode()):08x}"
    return os.path.join(workdir, name)


def run_case(case, tools, workdir):
    d = case_dir(workdir, case.name)
    os.makedirs(d, exist_ok=True)
    kernel = os.path.join(d, "kernel.mlir")
    with open(kernel, "w") as f:
        f.write(case.mlir)
    # --poison: every buffer the code allocates starts as NaN, so an output
    # element it never writes fails the comparison.
    cmd = [os.path.join(tools, "linattn-run"), kernel, f"--output-dir={d}", "--poison"]
    if case.pipeline:
        cmd.append(f"--pipeline={case.pipeline}")
    for i, x in enumerate(case.inputs):
        path = os.path.join(d, f"input{i}.npy")
        np.save(path, x)
        cmd.append(f"--input={path}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return False, f"linattn-run failed ({proc.returncode}):\n{proc.stderr}"
    return compare_results(case, d, case.tol)


def compare_results(case, d, tol):
    """Compares the result<i>.npy files in `d` with the case's expected
    values: (passed, message). Errors are relative to the largest expected
    value, or to the largest magnitude of what the result sums where the case
    gives one (`scales`), and, unless all are zero (the error is then
    absolute), to no less than the smallest normal number of the result's
    type: below it the type has no relative precision left, and expected
    values that small (the product of two elu features of inputs near -100
    underflows f32) are right as zeros or subnormals. Where the case gives
    `bands` (`subnormal_feature_bands`), each element's error is what
    exceeds its band."""
    worst = 0.0
    scales = getattr(case, "scales", None) or [None] * len(case.expected)
    bands = getattr(case, "bands", None) or [None] * len(case.expected)
    for i, expected in enumerate(case.expected):
        out = np.load(os.path.join(d, f"result{i}.npy"))
        if out.shape != expected.shape:
            return False, f"result {i} has shape {out.shape}, expected {expected.shape}"
        scale = np.max(np.abs(expected)) if expected.size else 0.0
        if scales[i] is not None and expected.size:
            scale = max(scale, float(np.max(np.abs(scales[i]))))
        if scale > 0 and np.issubdtype(out.dtype, np.floating):
            scale = max(scale, float(np.finfo(out.dtype).tiny))
        deviation = np.abs(out - expected)
        if bands[i] is not None:
            deviation = np.maximum(deviation - bands[i], 0.0)
        err = np.max(deviation) if expected.size else 0.0
        rel = err / scale if scale > 0 else err
        if not np.isfinite(rel) or rel > tol:
            return False, f"result {i}: relative error {rel:.3e} > {tol:.0e}"
        worst = max(worst, rel)
    return True, f"max relative error {worst:.3e}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", required=True, choices=sorted(GROUPS))
    parser.add_argument("--tools", required=True)
    parser.add_argument("--workdir", required=True)
    opts = parser.parse_args()
    failures = 0
    cases = GROUPS[opts.group]()
    for case in cases:
        ok, message = run_case(case, opts.tools, opts.workdir)
        print(f"{'PASS' if ok else 'FAIL'} {case.name}: {message}")
        failures += not ok
    print(f"{opts.group}: {len(cases) - failures} of {len(cases)} cases passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
