"""Runs linattn-opt's linattn-lower-to-nvvm over INPUTS for every chip of
CHIPS with every option set of OPTION_SETS (the inputs taken in turn) and
prints one line per run: `ok`, `error: <first diagnostic>` or `CRASH`
(a signal, or an LLVM fatal error such as instruction selection failing).
Exits 1 when a run crashed. Usage: option_sweep.py LINATTN_OPT INPUT..."""

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

CHIPS = ("sm_75", "sm_80", "sm_90", "sm_100")
OPTION_SETS = (
    "",
    "tf32=true async-copies=true",
    "tf32x3=true value-tile=32",
    "wgmma=true scores-in-registers=true",
    "wgmma=true wgmma-outputs=true",
    "value-tile=128 prefetch-chunks=1 row-tile-warps=2",
    "scan-kernel=recurrent linear-kernel=scalar",
)


def run(opt, path, options):
    result = subprocess.run(
        [opt, path, f"--linattn-lower-to-nvvm={options} format=isa", "-o",
         "/dev/null"], capture_output=True, text=True)
    if result.returncode < 0 or "LLVM ERROR" in result.stderr \
            or "Stack dump" in result.stderr:
        return "CRASH"
    if result.returncode:
        first = next((line for line in result.stderr.splitlines()
                      if "error:" in line), "no diagnostic")
        return "error: " + first.split("error:", 1)[1].strip()
    return "ok"


def main():
    opt, inputs = sys.argv[1], sys.argv[2:]
    runs = []
    for i, chip in enumerate(CHIPS):
        for j, options in enumerate(OPTION_SETS):
            path = inputs[(i + j) % len(inputs)]
            runs.append((path, f"chip={chip} {options}".strip()))
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda r: run(opt, *r), runs))
    for (path, options), result in zip(runs, results):
        print(f"{path.rsplit('/', 1)[-1]} {{{options}}}: {result}")
    crashed = results.count("CRASH")
    print(f"{len(runs)} runs, {crashed} crashed")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
