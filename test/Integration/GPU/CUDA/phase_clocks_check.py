"""Checks the lines phase-clocks=true printed (argv[1]) and that the clocked
function's outputs (argv[3]) are the plain one's (argv[2]), bit for bit.
With --emulated the clock rate is not checked: on the GPU emulator a cycle
is an op the block executed and the ns are the host's."""

import collections
import re
import sys

import numpy as np

# The phases every line has, as PhaseClocks.h's `phaseName` prints them
# (bench/gpu/phase_clocks.py reads them off the lines).
PHASES = ["prologue", "issue", "wait", "map", "stage", "scores", "outputs",
          "update", "normalizer", "tokens", "epilogue"]


def main():
    emulated = "--emulated" in sys.argv[1:]
    paths = [a for a in sys.argv[1:] if a != "--emulated"]
    lines = [line for line in open(paths[0])
             if line.startswith("linattn-phase-clocks ")]
    assert lines, "no phase-clocks lines"
    blocks = collections.defaultdict(set)
    for line in lines:
        fields = dict(kv.split("=", 1) for kv in line.split()[2:])
        cycles, ns, chunks = (int(fields[k]) for k in ("cycles", "ns", "chunks"))
        phases = sum(int(fields[p]) for p in PHASES)
        # The last clock read follows the epilogue's mark by a few cycles.
        assert phases <= cycles <= phases + max(200, cycles // 100), line
        assert chunks > 0 and (emulated or 0.3 <= cycles / ns <= 3.5), line
        assert re.fullmatch(r"\d+,\d+,\d+", fields["block"]), line
        blocks[(line.split()[1], fields["grid"])].add(fields["block"])
    for (kernel, grid), seen in blocks.items():
        x, y, z = (int(n) for n in grid.split(","))
        assert len(seen) == x * y * z, f"{kernel}: {len(seen)} of {x * y * z} blocks"
    plain, clocked = np.load(paths[1]), np.load(paths[2])
    assert plain.shape == clocked.shape and plain.tobytes() == clocked.tobytes(), \
        "the clocked outputs differ"
    print(f"phase clocks ok: {len(lines)} blocks, outputs identical")


if __name__ == "__main__":
    main()
