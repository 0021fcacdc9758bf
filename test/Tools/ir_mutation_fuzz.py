"""Robustness fuzzing of linattn-opt on mutated IR.

Takes the functions of the lit tests that are meant to be valid (the
dialect's round trips, the rewrite passes' and the conversions' tests; the
`invalid` files are left out), mutates each drawn one once to three times
-- a size, a rank, an element type, a size or an element type everywhere
(which keeps most functions valid), a float or integer literal, two
operands of an op, a keyword such as `causal` or a feature map, an
arithmetic op -- and runs the variant through a random rewrite pass, chain
of passes or lowering pipeline (linattn-lower-to-cpu and
linattn-lower-to-nvvm with the emulator's target, each with a few option
sets). Most variants do not verify, and many fail a pass: that is what they
are for. What must never happen is a crash (a signal, LLVM's stack dump or
fatal error), a hang, or a failure without a diagnostic; each such variant
is written to the work folder with the command that runs it.

With --run the variants are run instead: only sizes and element types
change, each everywhere in the function (so that it stays valid), and a
function whose arguments are all static float tensors runs through
linattn-run on random inputs, on the CPU and on the GPU emulator (which
stops at out-of-bounds accesses, races and kernels no GPU can launch). A
variant may still fail to compile with a diagnostic (an op without a GPU
kernel for its types, say); a crash, a hang, a stop of the emulator or a
silent failure is a defect. Results are not compared: cpu_fuzz.py and
gpu_fuzz.py check numbers.

Every variant is reproducible from the seed and its index. Without --seed a
fresh one is drawn and printed.

Usage: ir_mutation_fuzz.py --count=N --tools=DIR --workdir=DIR [--run]
                           [--seed=S [--index=I]] [--timeout=SECONDS]
"""

import argparse
import glob
import os
import random
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_ROOT = os.path.dirname(HERE)
SOURCES = ("Dialect/LinAttn/*.mlir", "Transforms/*.mlir",
           "Conversion/LinAttnToLinalg/*.mlir",
           "Conversion/LinAttnToCPU/*.mlir")

PASSES = [
    ["-canonicalize"], ["-linattn-reassociate"], ["-linattn-masked-to-scan"],
    ["-linattn-chunk-scan"], ["-linattn-decompose"], ["-linattn-raise"],
    ["-linattn-scan-to-steps"], ["-linattn-check-sizes"],
    ["-linattn-raise", "-linattn-reassociate", "-linattn-masked-to-scan",
     "-canonicalize"],
    ["-linattn-decompose", "-canonicalize", "-cse"],
    ["-pass-pipeline=builtin.module(linattn-chunk-scan{chunk-size=5})"],
    ["-pass-pipeline=builtin.module(func.func(linattn-decompose,"
     "convert-linattn-to-linalg))"],
]
CPU_OPTIONS = ["", "chunk-size=7", "kernels=false", "rewrite-forms=false",
               "num-threads=1 vector-width=4",
               "tokens-per-block=3 column-vectors=2",
               "parallelize-linalg=true fuse-elementwise=true"]
GPU_OPTIONS = ["", "tf32=true", "scan-kernel=recurrent",
               "wgmma-chunks=true chip=sm_90a", "tf32x3=true chip=sm_90a",
               "chip=sm_80 sequence-parallel-blocks=64", "device-buffers=true",
               "chunk-size=16 value-tile=16"]

SHAPED = re.compile(r"(tensor|memref|vector)<([0-9?x]+)x([a-z0-9]+)>")
FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


def functions():
    """(file name, text) of every split of the valid tests, comments out."""
    found = []
    for pattern in SOURCES:
        for path in sorted(glob.glob(os.path.join(TEST_ROOT, pattern))):
            if "invalid" in os.path.basename(path):
                continue
            with open(path) as f:
                text = f.read()
            for split in text.split("// -----"):
                lines = [l for l in split.splitlines()
                         if not l.strip().startswith("//")]
                body = "\n".join(lines)
                if "linattn." in body or "linalg." in body:
                    found.append((os.path.basename(path), body))
    return found


def pipelines(opt):
    """The runs to draw from: the GPU pipeline's only where `opt` has it (a
    build without the CUDA toolkit has not)."""
    runs = list(PASSES)
    runs += [[f"-pass-pipeline=builtin.module(linattn-lower-to-cpu{{{o}}})"]
             for o in CPU_OPTIONS]
    help_text = subprocess.run([opt, "--help"], capture_output=True,
                               text=True).stdout
    if "--linattn-lower-to-nvvm" in help_text:
        runs += [["-pass-pipeline=builtin.module(linattn-lower-to-nvvm"
                  f"{{emulate=true {o}}})"] for o in GPU_OPTIONS]
    return runs


def replace_match(text, match, group, new):
    return text[:match.start(group)] + new + text[match.end(group):]


def size_everywhere(rng, text, choices):
    """`text` with one of its static sizes replaced by one of `choices` in
    every shaped type, None where it has none."""
    sizes = sorted({d for m in SHAPED.finditer(text)
                    for d in m.group(2).split("x") if d != "?"})
    if not sizes:
        return None
    old, new = rng.choice(sizes), rng.choice(choices)
    return SHAPED.sub(
        lambda m: "%s<%sx%s>" % (m.group(1), "x".join(
            new if d == old else d for d in m.group(2).split("x")),
            m.group(3)), text)


def type_everywhere(rng, text):
    """`text` with one float type replaced by another everywhere."""
    old, new = rng.choice(FLOAT_TYPES), rng.choice(FLOAT_TYPES)
    return re.sub(r"\b%s\b" % old, new, text)


def mutate(rng, text):
    """`text` with one random mutation, None where the drawn kind finds
    nothing to change."""
    kind = rng.randrange(11)
    shaped = list(SHAPED.finditer(text))
    if kind == 0 and shaped:  # one size
        m = rng.choice(shaped)
        dims = m.group(2).split("x")
        dims[rng.randrange(len(dims))] = rng.choice(
            ["0", "1", "?", "3", "7", "65", str(rng.randint(1, 300))])
        return replace_match(text, m, 2, "x".join(dims))
    if kind == 1 and shaped:  # one rank
        m = rng.choice(shaped)
        dims = m.group(2).split("x")
        if len(dims) > 1 and rng.random() < 0.5:
            dims.pop(rng.randrange(len(dims)))
        else:
            dims.insert(rng.randrange(len(dims) + 1), rng.choice("12?"))
        return replace_match(text, m, 2, "x".join(dims))
    if kind == 2:  # one element type
        ms = list(re.finditer(r"\b(f16|bf16|f32|f64)\b", text))
        if ms:
            m = rng.choice(ms)
            return replace_match(text, m, 0, rng.choice(
                FLOAT_TYPES + ("i32", "i8", "f8E4M3FN", "index")))
    if kind in (3, 4):  # one size everywhere
        return size_everywhere(rng, text, ["0", "1", "2", "3", "5", "7", "13",
                                           "31", "33", "65", "127", "129",
                                           "?"])
    if kind == 5:  # one element type everywhere
        return type_everywhere(rng, text)
    if kind == 6:  # a float literal
        ms = list(re.finditer(r"-?\d+\.\d+(e[-+]?\d+)?", text))
        if ms:
            return replace_match(text, rng.choice(ms), 0, rng.choice(
                ["0.0", "-1.0", "1.0e+300", "0x7FC00000", "-0.0", "1.0e-45",
                 "0x7F800000"]))
    if kind == 7:  # an integer literal of a constant or an attribute
        ms = list(re.finditer(r"(?<![%\w#x<])\d+(?= *:)|(?<== )\d+\b", text))
        if ms:
            return replace_match(text, rng.choice(ms), 0, rng.choice(
                ["0", "-1", "1", "2", "3", "1000000", "9223372036854775807"]))
    if kind == 8:  # two operands of one op
        lines = text.splitlines()
        candidates = []
        for i, line in enumerate(lines):
            rhs = line.split(" = ", 1)[-1]
            names = sorted(set(re.findall(r"%[\w#]+", rhs)))
            if len(names) >= 2:
                candidates.append((i, names))
        if candidates:
            i, names = rng.choice(candidates)
            a, b = rng.sample(names, 2)
            lhs, sep, rhs = lines[i].rpartition(" = ")
            rhs = re.sub(r"%s\b|%s\b" % (re.escape(a), re.escape(b)),
                         lambda m: b if m.group(0) == a else a, rhs)
            lines[i] = lhs + sep + rhs
            return "\n".join(lines)
    if kind == 9:  # a keyword
        ms = list(re.finditer(
            r"\b(causal|reverse|elu|relu|identity|poly2|favor|forward)\b",
            text))
        if ms:
            return replace_match(text, rng.choice(ms), 0, rng.choice(
                ["", "relu", "identity", "causal", "reverse", "poly2"]))
    if kind == 10:  # an arithmetic op
        ms = list(re.finditer(r"arith\.(addf|mulf|subf|divf|maximumf)", text))
        if ms:
            return replace_match(text, rng.choice(ms), 1, rng.choice(
                ["addf", "mulf", "subf", "divf", "maximumf"]))
    return None


def variant(seed, index, sources, runs):
    """(source file, mutated text, linattn-opt arguments) of one variant."""
    rng = random.Random(seed * 1000003 + index)
    name, text = rng.choice(sources)
    mutated = text
    for _ in range(rng.randint(1, 3)):
        mutated = mutate(rng, mutated) or mutated
    return name, mutated, rng.choice(runs)


RUN_SIZES = ["1", "2", "3", "5", "7", "13", "17", "31", "33", "63", "65",
             "100", "127", "129", "200"]
STATIC_FLOAT_TENSOR = re.compile(r"tensor<(\d+x)*(f16|bf16|f32|f64)>")


def runnable(text):
    """Whether `text` is one public function whose arguments are all static
    float tensors, which linattn-run can draw."""
    functions = re.findall(r"func\.func (private )?@\w+\(([^)]*)\)", text)
    if len(functions) != 1 or functions[0][0]:
        return False
    types = re.findall(r"%\w+\s*:\s*([^,]+?)\s*(?=,\s*%|$)", functions[0][1])
    return bool(types) and all(STATIC_FLOAT_TENSOR.fullmatch(t)
                               for t in types)


def run_variant(seed, index, sources):
    """(source file, text) of a runnable variant (sizes and element types
    changed everywhere), None where the draw is not runnable."""
    rng = random.Random(seed * 1000003 + index)
    name, text = rng.choice(sources)
    for _ in range(rng.randint(0, 2)):
        resized = (size_everywhere(rng, text, RUN_SIZES)
                   if rng.random() < 0.7 else None)
        text = resized or type_everywhere(rng, text)
    return (name, text) if runnable(text) else None


def defect(proc):
    """Why `proc`'s end is a defect, None if it is not."""
    if proc.returncode < 0 or proc.returncode >= 128:
        return f"killed by signal {abs(proc.returncode) % 128}"
    # A sanitizer's report (a build with `make check-sanitizers`) counts as
    # a crash even where the sanitizer exits with a plain status.
    for mark in ("Stack dump", "LLVM ERROR", "PLEASE submit a bug report",
                 "Sanitizer", "runtime error:"):
        if mark in proc.stderr:
            return f"'{mark}' in its output"
    if proc.returncode != 0 and not re.search(r"error|^linattn-run: ",
                                              proc.stderr, re.MULTILINE):
        return f"exit status {proc.returncode} without an error message"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--index", type=int,
                        help="run only variant INDEX of the seed")
    parser.add_argument("--tools", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--run", action="store_true",
                        help="run valid variants on the CPU and the GPU "
                        "emulator instead of passes on any variant")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom(
    ).randrange(2**31)
    print(f"ir-fuzz: seed {seed}", flush=True)
    os.makedirs(args.workdir, exist_ok=True)
    opt = os.path.join(args.tools, "linattn-opt")
    sources, runs = functions(), pipelines(opt)
    if not sources:
        sys.exit("ir-fuzz: no test IR found under " + TEST_ROOT)
    runner = os.path.join(args.tools, "linattn-run")
    targets = [["--target=cpu"]]
    if any("linattn-lower-to-nvvm" in " ".join(r) for r in runs):
        targets.append(["--target=cuda", "--emulate-gpu"])
    indices = [args.index] if args.index is not None else range(args.count)
    defects = ran = 0
    for i in indices:
        path = os.path.join(args.workdir, f"variant-{seed}-{i}.mlir")
        if args.run:
            drawn = run_variant(seed, i, sources)
            if not drawn:
                continue
            name, text = drawn
            cmds = [[runner, path, f"--random-seed={i}", "--poison"] + target
                    for target in targets]
        else:
            name, text, run = variant(seed, i, sources, runs)
            cmds = [[opt, path] + run + ["-o", os.devnull]]
        ran += 1
        with open(path, "w") as f:
            f.write(f"// from {name}; {shlex.join(cmds[0][2:])}\n{text}\n")
        found = False
        for cmd in cmds:
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True,
                                      timeout=args.timeout)
                why = defect(proc)
            except subprocess.TimeoutExpired:
                why = f"still running after {args.timeout:g} s"
            if why:
                found = True
                last = proc.stderr.strip().splitlines()[-3:] if not \
                    why.startswith("still") else []
                print(f"DEFECT seed {seed} index {i} ({name}): {why}\n"
                      f"  {shlex.join(cmd)}" +
                      "".join(f"\n  | {line}" for line in last), flush=True)
        defects += found
        if not found:
            os.remove(path)
    print(f"ir-fuzz: {ran - defects} of {ran} variants handled "
          f"(seed {seed}{', run' if args.run else ''})")
    sys.exit(1 if defects else 0)


if __name__ == "__main__":
    main()
