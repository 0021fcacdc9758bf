"""Prints, for every function of `cuobjdump --dump-sass`, the instructions of
its main loop: the range from a backward branch's target to the branch that
holds the most HMMA instructions (the widest such range where none has
any). Checks can then ask what the loop does, every iteration, apart from
what runs once per block (prologue, epilogue).

  cuobjdump --dump-sass k.cubin | sass_loop.py

Output: "Function : NAME", then "loop 0xSTART-0xEND" and the loop's
instructions (address and text), or "no loop".
"""

import re
import sys

FUNCTION = re.compile(r"^\s*Function : (\S+)")
INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH = re.compile(r"\bBRA (?:`\()?0x([0-9a-f]+)")


def functions(lines):
    name, body = None, []
    for line in lines:
        m = FUNCTION.match(line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
            continue
        m = INSTRUCTION.match(line)
        if m and name:
            body.append((int(m.group(1), 16), m.group(2)))
    if name:
        yield name, body


def main_loop(body):
    best = None
    for address, text in body:
        b = BRANCH.search(text)
        if not b or int(b.group(1), 16) > address:
            continue
        start = int(b.group(1), 16)
        loop = [(a, t) for a, t in body if start <= a <= address]
        key = (sum("HMMA" in t for _, t in loop), len(loop))
        if best is None or key > best[0]:
            best = (key, start, address, loop)
    return best


def main():
    for name, body in functions(sys.stdin.read().splitlines()):
        print(f"Function : {name}")
        best = main_loop(body)
        if not best:
            print("no loop")
            continue
        _, start, end, loop = best
        print(f"loop {start:#x}-{end:#x}")
        for address, text in loop:
            print(f"  {address:#06x} {text}")


if __name__ == "__main__":
    main()
