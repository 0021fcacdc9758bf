#!/usr/bin/env python3
"""Numerical cases of the sm_90 warpgroup MMA (nvvm.wgmma.mma_async) with
shared-memory operands in each canonical layout of the PTX ISA.

Each case is one kernel of 128 threads (a warpgroup): it copies an image of
shared memory, which this script lays out, into two workgroup buffers (A
and B, 1024-byte aligned), fences the async proxy, and runs K / k wgmma of
m64nNk (k = 16 for f16 and bf16, 8 for tf32) with descriptors that walk the
image, accumulating in f32; then every thread writes its accumulator
registers to D[row, column] by the register layout of the ISA. The result
is compared with the float64 product of the operands (values exact in the
data type, so only the f32 accumulation rounds).

The layouts (K-major: A `row`, B `col`; MN-major: A `col`, B `row`, 16-bit
types only), with each one's leading (LBO) and stride (SBO) byte offsets,
are laid out here independently of the emulator, so a case that passes on
a GPU checks the emulator's reading of the descriptors against the
hardware, and one that passes on the emulator checks the kernel.

The register-A cases keep A row by row in its buffer; each thread packs
its fragment from there (mma.sync's m16n8k16 A layout, per warp its 16
rows), and the k-steps are the inline PTX the chunk loops emit for P·V
with their scores in registers (wgmmaRegisterAAsm), B MN-major.

    wgmma_cases.py --tools=BUILD/bin --workdir=DIR [--emulate [--errors]]
                   [--chip=sm_90a]
    wgmma_cases.py --emit=NAME      prints the kernel of case NAME
"""

import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_cases  # noqa: E402

# Element type: (MLIR type, bytes, k of one wgmma, bits of mantissa kept).
TYPES = {"f16": ("f16", 2, 16), "bf16": ("bf16", 2, 16), "tf32": ("f32", 4, 8)}
SWIZZLE_MODE = {0: 0, 128: 1, 64: 2, 32: 3}


def exact_values(rng, shape, dtype):
    """Small random values exact in `dtype` (and their products in f32)."""
    if dtype == "f16":
        return rng.integers(-64, 65, shape) / 32.0
    if dtype == "bf16":
        return rng.integers(-32, 33, shape) / 16.0
    return rng.integers(-1024, 1025, shape) / 256.0


class Layout:
    """Where element (r, k) of an operand of `rows` x `depth` lies (byte
    offset in its buffer), and the descriptor of each k-step.

    kind: "k" (K-major) or "mn" (MN-major); swizzle: 0 (none), 32, 64, 128
    bytes; far: without swizzle, put the core matrices adjacent along the
    other dimension (LBO and SBO swap magnitudes)."""

    def __init__(self, kind, swizzle, rows, depth, eb, kstep, far=False):
        self.kind, self.swizzle, self.rows, self.depth = kind, swizzle, rows, depth
        self.eb, self.kstep = eb, kstep
        if kind == "k":
            chunks = depth * eb // 16  # 16-byte chunks of k
            if swizzle:
                per_row = swizzle // eb
                assert depth <= per_row
                self.lbo, self.sbo = 16, 8 * swizzle  # LBO unused
                self.bytes = rows * swizzle
            elif far:
                self.lbo, self.sbo = rows // 8 * 128, 128
                self.bytes = rows * depth * eb
            else:
                self.lbo, self.sbo = 128, chunks * 128
                self.bytes = rows * depth * eb
        else:
            if swizzle:
                per_row = swizzle // eb
                assert rows % per_row == 0 and depth % 8 == 0
                self.sbo = 8 * swizzle  # next 8 k
                self.lbo = depth // 8 * self.sbo  # next width of rows
                self.bytes = rows * depth * eb
            elif far:
                self.sbo, self.lbo = depth // 8 * 128, 128
                self.bytes = rows * depth * eb
            else:
                self.sbo, self.lbo = 128, rows // 8 * 128
                self.bytes = rows * depth * eb

    def address(self, r, k):
        eb, sw = self.eb, self.swizzle
        if self.kind == "k":
            if sw:
                at = r // 8 * self.sbo + r % 8 * sw + k * eb
            else:
                kb = k * eb
                at = r // 8 * self.sbo + r % 8 * 16 + kb // 16 * self.lbo + kb % 16
        elif sw:
            per_row = sw // eb
            at = (r // per_row * self.lbo + r % per_row * eb + k % 8 * sw +
                  k // 8 * self.sbo)
        else:
            at = r // 8 * self.sbo + r % 8 * eb + k % 8 * 16 + k // 8 * self.lbo
        if sw:
            at ^= ((at >> 7) & (sw // 16 - 1)) << 4
        return at

    def step_offset(self, s):
        """The byte offset of k-step s's start address."""
        k = s * self.kstep
        if self.kind == "k":
            if self.swizzle:
                return k * self.eb
            return k * self.eb // 16 * self.lbo
        if self.swizzle:
            return k // 8 * self.sbo
        return k // 8 * self.lbo

    def high_bits(self):
        """The descriptor's bits above the start address."""
        return ((self.lbo >> 4) << 16 | (self.sbo >> 4) << 32 |
                SWIZZLE_MODE[self.swizzle] << 62)

    def image(self, values):
        """The buffer's elements (in units of the element size)."""
        out = np.zeros(self.bytes // self.eb)
        for r in range(self.rows):
            for k in range(self.depth):
                at = self.address(r, k)
                assert at % self.eb == 0 and at < self.bytes
                out[at // self.eb] = values[r, k]
        return out


class RowMajor:
    """An operand stored row by row, for a case whose A is loaded into
    registers (element (r, k) at r * depth + k)."""

    kind = "row"

    def __init__(self, rows, depth, eb):
        self.rows, self.depth, self.eb = rows, depth, eb
        self.bytes = rows * depth * eb

    def image(self, values):
        return np.asarray(values, dtype=np.float64).reshape(-1)


def register_a_asm(n, dtype):
    """The inline PTX of wgmma with A in registers and B MN-major, as the
    chunk loops emit it (wgmmaRegisterAAsm in LinAttnToGPU.h, which the
    emulator runs exactly), escaped for an MLIR string."""
    d = n // 2
    acc = ", ".join(f"${i}" for i in range(d))
    text = ("{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {%s}, "
            "{$%d, $%d, $%d, $%d}, $%d, p, 1, 1, 1;\n}"
            % (d + 5, n, dtype, dtype, acc, d, d + 1, d + 2, d + 3, d + 4))
    constraints = "=f," * d + "r,r,r,r,l,r" + "".join(f",{i}" for i in range(d))
    return text.replace("\n", "\\0A"), constraints


def register_a_steps(emit, dtype, n, depth, lb, acc):
    """The k-steps of a register-A case: each thread packs its A fragment
    (mma.sync's m16n8k16 layout, its warp's 16 rows) from A's row-major
    copy in %sa, and the inline-PTX wgmmas chain their accumulators."""
    mlir_type = TYPES[dtype][0]
    words = n // 2
    text, constraints = register_a_asm(n, dtype)
    emit("      %ra32 = arith.constant 32 : index")
    emit("      %ra4 = arith.constant 4 : index")
    emit("      %ra16 = arith.constant 16 : index")
    emit(f"      %rad = arith.constant {depth} : index")
    emit("      %raw = arith.divui %t, %ra32 : index")
    emit("      %ral = arith.remui %t, %ra32 : index")
    emit("      %rag = arith.divui %ral, %ra4 : index")
    emit("      %raq = arith.remui %ral, %ra4 : index")
    emit("      %raw16 = arith.muli %raw, %ra16 : index")
    emit("      %rar = arith.addi %raw16, %rag : index")
    emit("      %raq2 = arith.addi %raq, %raq : index")
    # Every fragment before the fence, as the chunk loops have theirs (a
    # register written between the wgmmas of a group takes ptxas' injected
    # warpgroup.arrive, warning C7519).
    regs = {}
    for s in range(depth // 16):
        for i in range(4):
            tag = f"{s}_{i}"
            emit(f"      %rk{tag} = arith.constant {16 * s + 8 * (i // 2) + 8 * depth * (i % 2)} : index")
            emit(f"      %rrow{tag} = arith.muli %rar, %rad : index")
            emit(f"      %rbase{tag} = arith.addi %rrow{tag}, %rk{tag} : index")
            emit(f"      %rlo{tag} = arith.addi %rbase{tag}, %raq2 : index")
            emit(f"      %rhi{tag} = arith.addi %rlo{tag}, %c1i : index")
            emit(f"      %rx{tag} = memref.load %sa[%rlo{tag}] : !a")
            emit(f"      %ry{tag} = memref.load %sa[%rhi{tag}] : !a")
            emit(f"      %rv{tag} = vector.from_elements %rx{tag}, %ry{tag} : vector<2x{mlir_type}>")
            emit(f"      %rc{tag} = vector.bitcast %rv{tag} : vector<2x{mlir_type}> to vector<1xi32>")
            emit(f"      %reg{tag} = vector.extract %rc{tag}[0] : i32 from vector<1xi32>")
            regs.setdefault(s, []).append(f"%reg{tag}")
    emit(f"      %acc0 = llvm.mlir.undef : {acc}")
    emit("      nvvm.wgmma.fence.aligned")
    for s in range(depth // 16):
        emit(f"      %ob{s} = arith.constant {lb.step_offset(s)} : i64")
        emit(f"      %xb{s} = arith.addi %pb64, %ob{s} : i64")
        emit(f"      %yb{s} = arith.shrui %xb{s}, %c4 : i64")
        emit(f"      %db{s} = arith.ori %yb{s}, %hib : i64")
        emit(f"      %scale{s} = arith.constant {1 if s else 0} : i32")
        ins = []
        for i in range(words):
            emit(f"      %in{s}_{i} = llvm.extractvalue %acc{s}[{i}] : {acc}")
            ins.append(f"%in{s}_{i}")
        operands = ", ".join(regs[s] + [f"%db{s}", f"%scale{s}"] + ins)
        types = ", ".join(["i32"] * 4 + ["i64", "i32"] + ["f32"] * words)
        emit(f'      %acc{s + 1} = llvm.inline_asm has_side_effects "{text}", '
             f'"{constraints}" {operands} : ({types}) -> {acc}')


def kernel_mlir(name, dtype, n, depth, la, lb, loop=False, register_a=False):
    mlir_type, eb, kstep = TYPES[dtype]
    ea, eb_ = la.bytes // eb, lb.bytes // eb
    words = n // 2
    acc = "!llvm.struct<(" + ", ".join(["f32"] * words) + ")>"
    convert = "" if dtype == "tf32" else f"%h = arith.truncf %v : f32 to {mlir_type}"
    stored = "%v" if dtype == "tf32" else "%h"
    lines = []
    emit = lines.append
    emit(f"!a = memref<{ea}x{mlir_type}, #gpu.address_space<workgroup>>")
    emit(f"!b = memref<{eb_}x{mlir_type}, #gpu.address_space<workgroup>>")
    emit("module attributes {gpu.container_module} {")
    emit("  gpu.module @linattn_kernels {")
    emit(f"    gpu.func @{name}(%in: memref<?xf32>, %out: memref<?xf32>)")
    emit("        workgroup(%sa : !a {llvm.align = 1024 : i64}, "
         "%sb : !b {llvm.align = 1024 : i64}) kernel {")
    emit("      %c128 = arith.constant 128 : index")
    emit(f"      %cea = arith.constant {ea} : index")
    emit(f"      %ceb = arith.constant {eb_} : index")
    emit("      %t = gpu.thread_id x")
    for buf, count, base in (("%sa", "%cea", None), ("%sb", "%ceb", "%cea")):
        mem = "!a" if buf == "%sa" else "!b"
        emit(f"      scf.for %i = %t to {count} step %c128 {{")
        src = "%i"
        if base:
            emit(f"        %j = arith.addi %i, {base} : index")
            src = "%j"
        emit(f"        %v = memref.load %in[{src}] : memref<?xf32>")
        if convert:
            emit(f"        {convert}")
        emit(f"        memref.store {stored}, {buf}[%i] : {mem}")
        emit("      }")
    emit("      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, "
         "space = #nvvm.shared_space<cta>}")
    emit("      gpu.barrier")
    for buf, tag, mem, lay in (("%sa", "a", "!a", la), ("%sb", "b", "!b", lb)):
        if register_a and tag == "a":
            continue
        emit(f"      %p{tag} = memref.extract_aligned_pointer_as_index {buf} : {mem} -> index")
        emit(f"      %p{tag}64 = arith.index_cast %p{tag} : index to i64")
        emit(f"      %hi{tag} = arith.constant {lay.high_bits() - (1 << 64) if lay.high_bits() >= 1 << 63 else lay.high_bits()} : i64")
    emit("      %c4 = arith.constant 4 : i64")
    ta = "col" if la.kind == "mn" else "row"
    tb = "row" if lb.kind == "mn" else "col"
    steps = depth // kstep
    shape = f"#nvvm.shape<m = 64, n = {n}, k = {kstep}>"
    types = f"A [<{dtype}>, <one>, <{ta}>], B [<{dtype}>, <one>, <{tb}>]"
    if register_a:
        emit("      %c1i = arith.constant 1 : index")
        register_a_steps(emit, dtype, n, depth, lb, acc)
    elif loop:
        # The k-steps as a loop carrying the accumulator, from zeros.
        emit(f"      %acc0 = llvm.mlir.zero : {acc}")
        emit("      nvvm.wgmma.fence.aligned")
        emit("      %z0 = arith.constant 0 : index")
        emit("      %z1 = arith.constant 1 : index")
        emit(f"      %zs = arith.constant {steps} : index")
        emit(f"      %acc{steps} = scf.for %s = %z0 to %zs step %z1 "
             f"iter_args(%acc = %acc0) -> ({acc}) {{")
        emit("        %s64 = arith.index_cast %s : index to i64")
        for tag, lay in (("a", la), ("b", lb)):
            emit(f"        %step{tag} = arith.constant {lay.step_offset(1)} : i64")
            emit(f"        %o{tag} = arith.muli %s64, %step{tag} : i64")
            emit(f"        %x{tag} = arith.addi %p{tag}64, %o{tag} : i64")
            emit(f"        %y{tag} = arith.shrui %x{tag}, %c4 : i64")
            emit(f"        %d{tag} = arith.ori %y{tag}, %hi{tag} : i64")
        emit(f"        %r = nvvm.wgmma.mma_async %da, %db, %acc, {shape}, "
             f"D [<f32>, <one>], {types} : {acc} -> {acc}")
        emit(f"        scf.yield %r : {acc}")
        emit("      }")
    else:
        emit(f"      %acc0 = llvm.mlir.undef : {acc}")
        emit("      nvvm.wgmma.fence.aligned")
    for s in (range(0) if loop or register_a else range(steps)):
        for tag, lay in (("a", la), ("b", lb)):
            emit(f"      %o{tag}{s} = arith.constant {lay.step_offset(s)} : i64")
            emit(f"      %x{tag}{s} = arith.addi %p{tag}64, %o{tag}{s} : i64")
            emit(f"      %y{tag}{s} = arith.shrui %x{tag}{s}, %c4 : i64")
            emit(f"      %d{tag}{s} = arith.ori %y{tag}{s}, %hi{tag} : i64")
        scale = "zero" if s == 0 else "one"
        emit(f"      %acc{s + 1} = nvvm.wgmma.mma_async %da{s}, %db{s}, %acc{s}, "
             f"{shape}, D [<f32>, <{scale}>], {types} : {acc} -> {acc}")
    emit("      nvvm.wgmma.commit.group.sync.aligned")
    emit("      nvvm.wgmma.wait.group.sync.aligned 0")
    # Register i of thread 32w + 4g + q: row 16w + g + 8(i/2 % 2), column
    # 8(i/4) + 2q + i % 2.
    emit("      %c2 = arith.constant 2 : index")
    emit("      %c4i = arith.constant 4 : index")
    emit("      %c8 = arith.constant 8 : index")
    emit("      %c16 = arith.constant 16 : index")
    emit("      %c32 = arith.constant 32 : index")
    emit(f"      %cn = arith.constant {n} : index")
    emit("      %w = arith.divui %t, %c32 : index")
    emit("      %lane = arith.remui %t, %c32 : index")
    emit("      %g = arith.divui %lane, %c4i : index")
    emit("      %q = arith.remui %lane, %c4i : index")
    emit("      %w16 = arith.muli %w, %c16 : index")
    emit("      %row0 = arith.addi %w16, %g : index")
    emit("      %row8 = arith.addi %row0, %c8 : index")
    emit("      %q2 = arith.muli %q, %c2 : index")
    emit("      %base0 = arith.muli %row0, %cn : index")
    emit("      %base8 = arith.muli %row8, %cn : index")
    for i in range(words):
        col = 8 * (i // 4) + i % 2
        emit(f"      %e{i} = llvm.extractvalue %acc{steps}[{i}] : {acc}")
        emit(f"      %k{i} = arith.constant {col} : index")
        emit(f"      %col{i} = arith.addi %q2, %k{i} : index")
        base = "%base8" if (i // 2) % 2 else "%base0"
        emit(f"      %at{i} = arith.addi {base}, %col{i} : index")
        emit(f"      memref.store %e{i}, %out[%at{i}] : memref<?xf32>")
    emit("      gpu.return")
    emit("    }")
    emit("  }")
    emit(f"  func.func private @launch(index, index, index, index, index, index, "
         f"memref<?xf32>, memref<?xf32>) attributes {{linattn.gpu_kernel = "
         f"@linattn_kernels::@{name}, linattn.gpu_outputs = array<i64: 1>}}")
    total = ea + eb_
    emit(f"  func.func @main(%x: tensor<{total}xf32>) -> tensor<{64 * n}xf32> {{")
    emit("    %c1 = arith.constant 1 : index")
    emit("    %c128 = arith.constant 128 : index")
    emit(f"    %in = bufferization.to_buffer %x read_only : tensor<{total}xf32> to memref<{total}xf32>")
    emit(f"    %in_flat = memref.cast %in : memref<{total}xf32> to memref<?xf32>")
    emit(f"    %out = memref.alloc() : memref<{64 * n}xf32>")
    emit(f"    %out_flat = memref.cast %out : memref<{64 * n}xf32> to memref<?xf32>")
    emit("    call @launch(%c1, %c1, %c1, %c128, %c1, %c1, %in_flat, %out_flat) : "
         "(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()")
    emit(f"    %r = bufferization.to_tensor %out restrict writable : memref<{64 * n}xf32> to tensor<{64 * n}xf32>")
    emit(f"    return %r : tensor<{64 * n}xf32>")
    emit("  }")
    emit("}")
    return "\n".join(lines) + "\n"


class Case:
    """a_layout None: A in registers (register_a_steps), copied to %sa row
    by row."""

    def __init__(self, name, dtype, n, depth, a_layout, b_layout, seed,
                 loop=False):
        _, eb, kstep = TYPES[dtype]
        rng = np.random.default_rng(seed)
        a = exact_values(rng, (64, depth), dtype)
        b = exact_values(rng, (n, depth), dtype)
        register_a = a_layout is None
        # A in registers: its buffer holds A row by row, from which each
        # thread packs its fragment.
        la = (RowMajor(64, depth, eb) if register_a else
              Layout(*a_layout[:2], 64, depth, eb, kstep, *a_layout[2:]))
        lb = Layout(*b_layout[:2], n, depth, eb, kstep, *b_layout[2:])
        self.name = name
        self.mlir = kernel_mlir(name, dtype, n, depth, la, lb, loop, register_a)
        image = np.concatenate([la.image(a), lb.image(b)]).astype(np.float32)
        self.inputs = [image]
        self.expected = [(a @ b.T).reshape(-1)]
        self.tol = 1e-6
        self.gpu_options = []


def cases():
    # (name, type, N, K, A layout, B layout): layout = (kind, swizzle[, far]).
    table = [
        ("bf16_k_none", "bf16", 16, 32, ("k", 0), ("k", 0)),
        ("bf16_k_none_far", "bf16", 24, 48, ("k", 0, True), ("k", 0, True)),
        ("bf16_k_sw128", "bf16", 64, 64, ("k", 128), ("k", 128)),
        ("f16_k_sw64", "f16", 32, 32, ("k", 64), ("k", 64)),
        ("f16_k_sw32", "f16", 8, 16, ("k", 32), ("k", 32)),
        ("bf16_mn_none", "bf16", 16, 32, ("mn", 0), ("mn", 0)),
        ("bf16_mn_none_far", "bf16", 16, 32, ("k", 0), ("mn", 0, True)),
        ("f16_mn_sw128", "f16", 64, 32, ("mn", 128), ("mn", 128)),
        ("bf16_mn_sw64_b", "bf16", 32, 16, ("k", 128), ("mn", 64)),
        ("tf32_k_none", "tf32", 16, 16, ("k", 0), ("k", 0)),
        ("tf32_k_sw128", "tf32", 32, 32, ("k", 128), ("k", 128)),
    ]
    out = []
    for i, (name, dtype, n, depth, la, lb) in enumerate(table):
        out.append(Case(name, dtype, n, depth, la, lb, seed=1000 + i))
    out.append(Case("bf16_k_sw128_loop", "bf16", 128, 64, ("k", 128), ("k", 128),
                    seed=2000, loop=True))
    out.append(Case("f16_mn_none_loop", "f16", 256, 32, ("mn", 0), ("k", 0),
                    seed=2001, loop=True))
    # A in registers (the chunk loops' P·V with their scores in registers),
    # B MN-major in the 128-byte swizzle, four chained k-steps.
    out.append(Case("bf16_regs_mn_sw128", "bf16", 64, 64, None, ("mn", 128),
                    seed=2002))
    out.append(Case("f16_regs_mn_none", "f16", 16, 32, None, ("mn", 0),
                    seed=2003))
    return out


# What the emulator must reject, as edits of a correct kernel: (name, the
# kernel's case, [(old, new)], the error expected).
WAIT = "      nvvm.wgmma.wait.group.sync.aligned 0\n"
ERRORS = [
    ("no_proxy_fence", "bf16_k_none",
     [("      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, "
       "space = #nvvm.shared_space<cta>}\n", "")],
     "wrote without an async-proxy fence (nvvm.fence.proxy async.shared) after it"),
    ("no_barrier", "bf16_k_none", [("      gpu.barrier\n", "")],
     "with no gpu.barrier in between"),
    ("no_wgmma_fence", "bf16_k_none", [("      nvvm.wgmma.fence.aligned\n", "")],
     "wgmma.mma_async without a wgmma.fence since the warpgroup's last "
     "wgmma.wait.group"),
    ("read_before_wait", "bf16_k_none",
     [(WAIT, ""), ("      gpu.return", WAIT + "      gpu.return")],
     "read of the result of "),
    ("read_loop_result_before_wait", "bf16_k_sw128_loop",
     [(WAIT, ""), ("      gpu.return", WAIT + "      gpu.return")],
     "before a wgmma.wait.group completed it"),
    ("wait_leaves_group", "bf16_k_none",
     [("nvvm.wgmma.wait.group.sync.aligned 0", "nvvm.wgmma.wait.group.sync.aligned 1")],
     "before a wgmma.wait.group completed it"),
    ("never_waited", "bf16_k_none",
     [(WAIT, ""), ("llvm.extractvalue %acc2[", "llvm.extractvalue %acc0[")],
     "the kernel returns with 2 wgmma.mma_async of warpgroup 0 that no "
     "wgmma.wait.group completed"),
    ("write_while_read", "bf16_k_none",
     [(WAIT, "      %zero = arith.constant 0.0 : bf16\n"
             "      memref.store %zero, %sb[%t] : !b\n" + WAIT)],
     "write to element 0 of workgroup buffer #1, which a wgmma.mma_async in "
     "flight reads"),
    ("partial_warpgroup", "bf16_k_none",
     [("call @launch(%c1, %c1, %c1, %c128,", "call @launch(%c1, %c1, %c1, %c96,"),
      ("    %c128 = arith.constant 128 : index\n    %in",
       "    %c96 = arith.constant 96 : index\n    %in")],
     "nvvm.wgmma.fence.aligned executed without all 128 threads of warpgroup 0 "
     "(thread 96 missing: the block has 96 threads)"),
    ("divergent_descriptor", "bf16_k_none",
     [("%xa0 = arith.addi %pa64, %oa0 : i64",
       "%tq = arith.index_cast %t : index to i64\n"
       "      %c16i64 = arith.constant 16 : i64\n"
       "      %tq16 = arith.muli %tq, %c16i64 : i64\n"
       "      %xa0 = arith.addi %pa64, %tq16 : i64")],
     "wgmma.mma_async descriptors differ across warpgroup 0"),
    ("read_register_a_before_wait", "bf16_regs_mn_sw128",
     [(WAIT, ""), ("      gpu.return", WAIT + "      gpu.return")],
     "= llvm.inline_asm has_side_effects \"{\\0A.reg .pred p;"),
    ("divergent_scale", "bf16_regs_mn_sw128",
     [("%scale1 = arith.constant 1 : i32",
       "%scale1 = arith.index_cast %t : index to i32")],
     "wgmma.mma_async scale-d differs across warpgroup 0 (thread 0 and this one)"),
    ("outside_shared_memory", "bf16_k_none",
     [("%xb0 = arith.addi %pb64, %ob0 : i64",
       "%far = arith.constant 65536 : i64\n"
       "      %xb0 = arith.addi %pb64, %far : i64")],
     "wgmma operand element (0, 0) at shared address 69632 is in no workgroup "
     "buffer"),
]


def check_error(name, case, edits, expected, opts):
    """Runs `case`'s kernel, every `old` of `edits` replaced, on the
    emulator; passes if it fails with `expected` in its message."""
    kernel = case.mlir
    for old, new in edits:
        assert old in kernel, (name, old)
        kernel = kernel.replace(old, new)
    d = os.path.join(opts.workdir, "error_" + name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "kernel.mlir")
    with open(path, "w") as f:
        f.write(kernel)
    image = os.path.join(d, "input0.npy")
    np.save(image, case.inputs[0])
    proc = subprocess.run(
        [os.path.join(opts.tools, "linattn-run"), path, "--target=cuda",
         "--emulate-gpu", f"--input={image}", f"--output-dir={d}"],
        capture_output=True, text=True)
    ok = proc.returncode != 0 and expected in proc.stderr
    first = proc.stderr.strip().splitlines()[:1] or [f"exit {proc.returncode}"]
    print(f"{'PASS' if ok else 'FAIL'} error {name}: {first[0]}", flush=True)
    return ok


def main():
    if len(sys.argv) == 2 and sys.argv[1].startswith("--emit="):
        name = sys.argv[1][len("--emit="):]
        kernels = {case.name: case.mlir for case in cases()}
        if name not in kernels:
            sys.exit(f"wgmma_cases.py: no case {name}")
        sys.stdout.write(kernels[name])
        return 0
    parser = argparse.ArgumentParser()
    gpu_cases.add_run_arguments(parser)
    parser.add_argument("--errors", action="store_true",
                        help="also check that the emulator rejects the "
                             "misuses of ERRORS (with --emulate)")
    opts = parser.parse_args()
    all_cases = cases()
    failures = sum(not gpu_cases.check(case, False, opts) for case in all_cases)
    print(f"wgmma: {len(all_cases) - failures} of {len(all_cases)} cases passed")
    if opts.errors:
        kernels = {case.name: case for case in all_cases}
        wrong = sum(not check_error(name, kernels[base], edits, expected, opts)
                    for name, base, edits, expected in ERRORS)
        print(f"wgmma errors: {len(ERRORS) - wrong} of {len(ERRORS)} rejected")
        failures += wrong
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
