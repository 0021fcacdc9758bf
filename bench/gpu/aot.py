#!/usr/bin/env python3
"""linattn functions compiled ahead of time for the GPU, called from Python.

`linattn-compile --target=cuda --shared` lowers a module with
`linattn-lower-to-nvvm{device-buffers=true}`: each public function takes
memref descriptors of the caller's device memory, out-params for its results
and a CUDA stream, and only enqueues kernels on that stream
(docs/UsingLinAttn.md). This module loads such a library with ctypes and calls
its functions on device pointers: torch tensors on the GPU (bench.py times
the calls with CUDA events on a torch stream, as it times the peers), or
buffers of the GPU emulator's runtime (`--self-test`, which needs no GPU).

    bench/gpu/aot.py --self-test --tools=build/bin \\
        --runtime=build/lib/liblinattn_gpu_emulator.so
"""

import argparse
import ctypes
import os
import subprocess
import sys
from collections import namedtuple

# A device buffer: its address and, in elements, its shape and strides.
Buffer = namedtuple("Buffer", "pointer shape strides")

_descriptor_types = {}


def descriptor_type(rank):
    """The memref descriptor of that rank: allocated and aligned pointers,
    offset, sizes, strides (linattn_memref_<T>_<R>d of the generated header;
    the element type does not change the layout)."""
    if rank not in _descriptor_types:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank),
                       ("strides", ctypes.c_int64 * rank)]
        _descriptor_types[rank] = type(f"MemRef{rank}D", (ctypes.Structure,),
                                       {"_fields_": fields})
    return _descriptor_types[rank]


def descriptor(buffer):
    rank = len(buffer.shape)
    d = descriptor_type(rank)()
    d.allocated = d.aligned = buffer.pointer
    d.offset = 0
    for i in range(rank):
        d.sizes[i] = buffer.shape[i]
        d.strides[i] = buffer.strides[i]
    return d


def scan_module(b, h, t, d, dtype, normalized=False, dv=None,
                token_major=False):
    """The benchmark's function: O of the causal scan of elu+1 features
    (F = D; Dv = D unless `dv` says otherwise). `token_major`: q, k, v and
    O are [B, T, H, D] (FLA's and JAX's layout), transposed into and out of
    the scan, as the raise and `layout="bnhd"` write it."""
    dv = d if dv is None else dv
    x = f"tensor<{b}x{h}x{t}x{d}x{dtype}>"
    y = f"tensor<{b}x{h}x{t}x{dv}x{dtype}>"
    s = f"tensor<{b}x{h}x{d}x{dv}xf32>"
    z = f"tensor<{b}x{h}x{d}xf32>"
    norm = " normalize(eps = 1.0e-06)" if normalized else ""
    scan = (f"  %fq = linattn.feature_map elu %q : {x} -> {x}\n"
            f"  %fk = linattn.feature_map elu %k : {x} -> {x}\n"
            f"  %o, %s, %z = linattn.scan forward %fq, %fk, %v{norm} : {x}, {x}, {y}"
            f" -> {y}, {s}, {z}\n")
    if not token_major:
        return (f"func.func @main(%q: {x}, %k: {x}, %v: {y}) -> {y} {{\n"
                f"{scan}  return %o : {y}\n}}\n")
    xt = f"tensor<{b}x{t}x{h}x{d}x{dtype}>"
    yt = f"tensor<{b}x{t}x{h}x{dv}x{dtype}>"
    swap = "permutation = [0, 2, 1, 3]"
    text = f"func.func @main(%qt: {xt}, %kt: {xt}, %vt: {yt}) -> {yt} {{\n"
    for name, source, target in (("q", xt, x), ("k", xt, x), ("v", yt, y)):
        text += (f"  %{name}e = tensor.empty() : {target}\n"
                 f"  %{name} = linalg.transpose ins(%{name}t : {source}) "
                 f"outs(%{name}e : {target}) {swap}\n")
    return (text + scan + f"  %oe = tensor.empty() : {yt}\n"
            f"  %ot = linalg.transpose ins(%o : {y}) outs(%oe : {yt}) {swap}\n"
            f"  return %ot : {yt}\n}}\n")


def linear_module(b, h, t, d, dtype):
    """The non-causal benchmark's function: O = φ(Q)(φ(K)ᵀV), elu+1
    features, unnormalized (the linear form: kv_summary, query_readout)."""
    x = f"tensor<{b}x{h}x{t}x{d}x{dtype}>"
    return (f"func.func @main(%q: {x}, %k: {x}, %v: {x}) -> {x} {{\n"
            f"  %o = linattn.attention elu %q, %k, %v : {x}, {x}, {x} -> {x}\n"
            f"  return %o : {x}\n}}\n")


def grad_module(b, h, t, d, dtype, normalized=False):
    """The backward benchmark's function: dQ, dK, dV of causal attention
    with elu+1 features for a loss gradient dO (linattn.attention_grad:
    three scans, four normalized, and the chain rule)."""
    x = f"tensor<{b}x{h}x{t}x{d}x{dtype}>"
    norm = " normalize(eps = 1.0e-06)" if normalized else ""
    return (f"func.func @main(%q: {x}, %k: {x}, %v: {x}, %do: {x}) -> "
            f"({x}, {x}, {x}) {{\n"
            f"  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do "
            f"causal{norm} : {x}, {x}, {x}, {x} -> {x}, {x}, {x}\n"
            f"  return %dq, %dk, %dv : {x}, {x}, {x}\n}}\n")


def compile_command(tools, module, library, options="", gpu_runtime=None):
    """linattn-compile of `module` into the shared library `library`."""
    pipeline = f"linattn-lower-to-nvvm{{device-buffers=true{' ' + options if options else ''}}}"
    cmd = [os.path.join(tools, "linattn-compile"), module, "--target=cuda",
           f"--pipeline={pipeline}", "-o", library + ".o", f"--shared={library}"]
    if gpu_runtime:
        cmd.append(f"--gpu-runtime={gpu_runtime}")
    return cmd


def compile_library(tools, module, library, options="", gpu_runtime=None):
    cmd = compile_command(tools, module, library, options, gpu_runtime)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-2000:]}")
    return library


class Function:
    """`_mlir_ciface_<name>` of a library linattn-compile made."""

    def __init__(self, library, name="main"):
        self.library = ctypes.CDLL(os.path.abspath(library))
        self.entry = getattr(self.library, "_mlir_ciface_" + name)
        self.entry.restype = None

    def bind(self, arguments, results, stream):
        """A call on these buffers and stream (an integer CUstream; 0 is the
        legacy default stream), as a function of no arguments: the
        descriptors are built once, so a timed call costs one ctypes call."""
        descriptors = [descriptor(b) for b in list(arguments) + list(results)]
        args = [ctypes.byref(d) for d in descriptors] + [ctypes.c_void_p(stream)]
        entry = self.entry

        def call():
            entry(*args)
        call.descriptors = descriptors  # alive as long as the call
        return call


#===------------------------------------------------------------------------===#
# Self-test on the GPU emulator
#===------------------------------------------------------------------------===#

def phi(x):
    """elu + 1 of a numpy array."""
    import numpy as np
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def reference(q, k, v, causal=True, eps=None):
    """O = tril(φ(Q)φ(K)ᵀ)V (causal) or φ(Q)φ(K)ᵀV in float64, φ = elu + 1;
    with `eps`, each row divided by its scores' sum + eps."""
    import numpy as np
    fq, fk = phi(q.astype(np.float64)), phi(k.astype(np.float64))
    scores = fq @ np.swapaxes(fk, -1, -2)
    if causal:
        scores = np.tril(scores)
    o = scores @ v.astype(np.float64)
    return o if eps is None else o / (scores.sum(-1, keepdims=True) + eps)


class EmulatorRuntime:
    """Device buffers and a stream of the GPU emulator's runtime
    (liblinattn_gpu_emulator.so), for calls of libraries compiled with
    `emulate=true`: what a test uses in place of a GPU."""

    def __init__(self, path):
        self.runtime = runtime = ctypes.CDLL(os.path.abspath(path))
        runtime.mgpuStreamCreate.restype = ctypes.c_void_p
        runtime.mgpuMemAlloc.restype = ctypes.c_void_p
        runtime.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_bool]
        runtime.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        runtime.mgpuStreamSynchronize.argtypes = [ctypes.c_void_p]
        self.stream = runtime.mgpuStreamCreate()

    def to_device(self, array):
        """A Buffer holding a copy of a contiguous numpy array."""
        pointer = self.runtime.mgpuMemAlloc(array.nbytes, None, False)
        ctypes.memmove(pointer, array.ctypes.data, array.nbytes)
        strides = [s // array.itemsize for s in array.strides]
        return Buffer(pointer, array.shape, strides)

    def to_host(self, buffer, array):
        """Copies `buffer` into the numpy array of its shape."""
        self.synchronize()
        ctypes.memmove(array.ctypes.data, buffer.pointer, array.nbytes)

    def free(self, buffer):
        self.runtime.mgpuMemFree(buffer.pointer, None)

    def synchronize(self):
        self.runtime.mgpuStreamSynchronize(self.stream)


def reference_grad(q, k, v, do, eps=None):
    """dQ, dK, dV of Σ dO ⊙ O for the causal O of `reference`, in float64,
    by the quadratic form: dA = (dO Vᵀ) ⊙ L, dφ(Q) = dA φ(K), dφ(K) =
    dAᵀ φ(Q), dV = (A ⊙ L)ᵀ dO, then φ'(x) = 1 for x > 0, exp(x) otherwise.
    Normalized (`eps`), dO is first replaced by g = dO / D and the row
    terms h = -(dO·N) / D² join dA."""
    import numpy as np
    q, k, v, do = (x.astype(np.float64) for x in (q, k, v, do))
    fq, fk = phi(q), phi(k)
    a = np.tril(fq @ np.swapaxes(fk, -1, -2))
    if eps is None:
        da = np.tril(do @ np.swapaxes(v, -1, -2))
        dv = np.swapaxes(a, -1, -2) @ do
    else:
        den = a.sum(-1, keepdims=True) + eps
        g = do / den
        h = -(do * (a @ v)).sum(-1, keepdims=True) / den**2
        da = np.tril(g @ np.swapaxes(v, -1, -2) + h)
        dv = np.swapaxes(a, -1, -2) @ g
    dfq, dfk = da @ fk, np.swapaxes(da, -1, -2) @ fq

    def chain(x, grad):
        return grad * np.where(x > 0, 1.0, np.exp(np.minimum(x, 0.0)))
    return chain(q, dfq), chain(k, dfk), dv


def relative_error(out, ref):
    """max |out - ref| / max |ref|, in float64."""
    import numpy as np
    return float(np.abs(out.astype(np.float64) - ref).max() / np.abs(ref).max())


def self_test(args):
    """Compiles the benchmark's function in each of its linattn variants for
    the emulator, calls it through Function on buffers of the emulator's
    runtime (from its mgpuMemAlloc, on a stream of its own) and checks the
    outputs against float64."""
    import numpy as np
    device = EmulatorRuntime(args.runtime)
    os.makedirs(args.workdir, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    # (name, element type, numpy type, options, tolerance); bench.py's bf16
    # variant is the f16 one with another element type (numpy has no bf16).
    # The function returns only O: the kernels skip the unused normalizer.
    # The default small-batch choice is sequence-parallel; the batch-parallel
    # kernel and segments of several chunks are forced here too, and
    # bench.py's comparison rows: the chunk loops' 32-bit offsets, mma.sync
    # instead of wgmma, value tiles of 32 columns and the scores kept in
    # registers. The linear-* variants are the non-causal
    # function (bench.py's noncausal rows): the tensor-core kernels of the
    # linear form, the scalar ones, tf32 and tf32x3. The *-normalized ones are bench.py's
    # normalized rows, the *-token-major one its row on [B, T, H, D] tensors.
    # The grad-* ones are the backward function (bench.py's backward rows),
    # three outputs, normalized its glue kernels too.
    variants = [("chunked-f16", "f16", np.float16, "", 1e-2),
                ("chunked-f16-batch-parallel", "f16", np.float16,
                 "sequence-parallel-blocks=0", 1e-2),
                ("chunked-f16-segments", "f16", np.float16,
                 "sequence-parallel-blocks=8 min-segment-tokens=0", 1e-2),
                ("chunked-f16-sync", "f16", np.float16, "async-copies=false", 1e-2),
                ("chunked-f16-sync-segments", "f16", np.float16,
                 "async-copies=false sequence-parallel-blocks=8 "
                 "min-segment-tokens=0", 1e-2),
                ("chunked-f16-32-bit-offsets", "f16", np.float16,
                 "narrow-offset-limit=2147483648", 1e-2),
                ("chunked-f16-value-tile-32", "f16", np.float16,
                 "value-tile=32", 1e-2),
                ("chunked-f16-value-tile-128", "f16", np.float16,
                 "value-tile=128", 1e-2),
                ("chunked-f16-mma-sync", "f16", np.float16, "wgmma=false", 1e-2),
                ("chunked-f16-scores-in-registers", "f16", np.float16,
                 "scores-in-registers=true", 1e-2),
                ("chunked-f16-prefetch", "f16", np.float16,
                 "async-copies=false prefetch-chunks=1", 1e-2),
                ("chunked-f16-normalized", "f16", np.float16, "", 1e-2),
                ("chunked-f16-mma-sync-normalized", "f16", np.float16,
                 "wgmma=false", 1e-2),
                ("chunked-f16-token-major", "f16", np.float16, "", 1e-2),
                ("chunked-tf32", "f32", np.float32, "tf32=true", 4e-3),
                ("chunked-tf32x3", "f32", np.float32, "tf32x3=true", 1e-5),
                ("recurrent-f32", "f32", np.float32, "scan-kernel=recurrent", 1e-5),
                ("recurrent-f32-one-lane", "f32", np.float32,
                 "scan-kernel=recurrent scan-feature-lanes=1", 1e-5),
                ("recurrent-f32-tile-32", "f32", np.float32,
                 "scan-kernel=recurrent scan-tile=32", 1e-5),
                ("linear-f16", "f16", np.float16, "", 1e-2),
                ("linear-f16-scalar", "f16", np.float16, "linear-kernel=scalar",
                 1e-2),
                ("linear-tf32", "f32", np.float32, "tf32=true", 4e-3),
                ("linear-tf32x3", "f32", np.float32, "tf32x3=true", 1e-5),
                ("grad-f16", "f16", np.float16, "", 5e-3),
                ("grad-f16-normalized", "f16", np.float16, "", 5e-3),
                ("grad-tf32", "f32", np.float32, "tf32=true", 2e-3),
                ("grad-tf32x3", "f32", np.float32, "tf32x3=true", 1e-5),
                ("grad-f32", "f32", np.float32, "scan-kernel=recurrent", 1e-5)]
    failures = 0
    for b, h, t, d in ((2, 3, 300, 64), (1, 2, 37, 32)):
        q, k, v, do = (rng.uniform(-1, 1, (b, h, t, d)) for _ in range(4))
        for name, element, np_type, options, tol in variants:
            case = f"{name}_{b}x{h}x{t}x{d}"
            causal = not name.startswith("linear")
            grad = name.startswith("grad")
            normalized = name.endswith("-normalized")
            token_major = name.endswith("-token-major")
            eps = 1e-6 if normalized else None
            module = os.path.join(args.workdir, case + ".mlir")
            with open(module, "w") as f:
                f.write(grad_module(b, h, t, d, element, normalized) if grad
                        else scan_module(b, h, t, d, element, normalized,
                                         token_major=token_major)
                        if causal else linear_module(b, h, t, d, element))
            library = os.path.join(args.workdir, f"lib{case}.so")
            try:
                compile_library(args.tools, module, library,
                                " ".join(filter(None, [options, "emulate=true"])),
                                args.runtime)
            except RuntimeError as e:
                print(f"FAIL {case}: {e}")
                failures += 1
                continue
            layout = (lambda x: x.swapaxes(1, 2)) if token_major else (lambda x: x)
            inputs = [np.ascontiguousarray(layout(x).astype(np_type))
                      for x in ((q, k, v, do) if grad else (q, k, v))]
            outs = [np.empty(inputs[0].shape, np_type) for _ in range(3 if grad else 1)]
            buffers = [device.to_device(x) for x in inputs]
            results = [device.to_device(out) for out in outs]
            Function(library).bind(buffers, results, device.stream)()
            for result, out in zip(results, outs):
                device.to_host(result, out)
            for buffer in buffers + results:
                device.free(buffer)
            refs = (reference_grad(*inputs, eps=eps) if grad
                    else [layout(reference(*map(layout, inputs), causal=causal,
                                           eps=eps))])
            err = max(relative_error(out, ref) for out, ref in zip(outs, refs))
            ok = err <= tol
            failures += not ok
            print(f"{'ok' if ok else 'FAIL'} {case}: max rel. error {err:.2e} (tolerance {tol:g})")
    failures += step_in_place(args, device, rng)
    return 1 if failures else 0


def step_in_place(args, device, rng, batch=2, tokens=3, eps=1e-6):
    """The decode step of decode_step.mlir as decode_graph.cpp replays it in
    place: each token's new state written over the state it read (one
    buffer), the normalizer ping-ponged; every output and the final state
    and normalizer against a float64 recurrence. Returns 1 on failure."""
    import numpy as np
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        library = compile_library(
            args.tools, os.path.join(here, "decode_step.mlir"),
            os.path.join(args.workdir, "libdecode_step.so"), "emulate=true",
            args.runtime)
    except RuntimeError as e:
        print(f"FAIL step-in-place: {e}")
        return 1
    step = Function(library, "decode_step")
    shape = (batch, 32, 128)
    s = rng.uniform(0, 1, shape + (128,)).astype(np.float32)
    z = rng.uniform(1, 2, shape).astype(np.float32)
    s_ref, z_ref = s.astype(np.float64), z.astype(np.float64)
    s_dev = device.to_device(s)
    z_dev = [device.to_device(z), device.to_device(np.zeros_like(z))]
    o = np.empty(shape, np.float32)
    o_dev = device.to_device(o)
    err = 0.0
    for t in range(tokens):
        q, k, v = (rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(3))
        inputs = [device.to_device(x) for x in (q, k, v)]
        step.bind(inputs + [s_dev, z_dev[t % 2]], [o_dev, s_dev, z_dev[1 - t % 2]],
                  device.stream)()
        device.to_host(o_dev, o)
        for buffer in inputs:
            device.free(buffer)
        fq, fk = phi(q.astype(np.float64)), phi(k.astype(np.float64))
        s_ref += fk[..., :, None] * v.astype(np.float64)[..., None, :]
        z_ref += fk
        o_ref = (np.einsum("bhf,bhfd->bhd", fq, s_ref)
                 / (np.einsum("bhf,bhf->bh", fq, z_ref)[..., None] + eps))
        err = max(err, relative_error(o, o_ref))
    device.to_host(s_dev, s)
    device.to_host(z_dev[tokens % 2], z)
    err = max(err, relative_error(s, s_ref), relative_error(z, z_ref))
    for buffer in [s_dev, o_dev] + z_dev:
        device.free(buffer)
    ok = err <= 1e-5
    print(f"{'ok' if ok else 'FAIL'} step-in-place_{batch}x32x128: {tokens} tokens, "
          f"max rel. error {err:.2e} (tolerance 1e-05)")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--self-test", action="store_true", required=True)
    parser.add_argument("--tools", required=True, help="directory of linattn-compile")
    parser.add_argument("--runtime", required=True,
                        help="liblinattn_gpu_emulator.so")
    parser.add_argument("--workdir", default="aot-self-test")
    parser.add_argument("--seed", type=int, default=3)
    return self_test(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
