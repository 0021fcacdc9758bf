"""Prints what a `gpu.binary` op of an MLIR module embeds.

  gpu_binary.py --ptx  < module.mlir   the PTX of `format=isa`
  gpu_binary.py --elf  < module.mlir   a summary of the cubin of `format=bin`:
                                       ELF class and machine, the SM it is
                                       for, and its kernel symbols
  gpu_binary.py --cubin < module.mlir  the cubin itself, for cuobjdump
  gpu_binary.py --text < module.mlir   the MLIR text of `emulate=true`

MLIR prints the object as a string with \\XX escapes for other bytes.
"""

import re
import struct
import sys


def object_bytes(text, key):
    m = re.search(key + r' = "((?:[^"\\]|\\.)*)"', text, re.S)
    if not m:
        sys.exit(f"gpu_binary.py: no {key} in a gpu.object")
    out = bytearray()
    s = m.group(1)
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            nxt = s[i + 1]
            if nxt in "\\\"":
                out.append(ord(nxt))
                i += 2
            elif nxt == "n":
                out.append(10)
                i += 2
            elif nxt == "t":
                out.append(9)
                i += 2
            else:
                out.append(int(s[i + 1:i + 3], 16))
                i += 3
        else:
            out.extend(c.encode("utf-8"))
            i += 1
    return bytes(out)


def elf_summary(data):
    if data[:4] != b"\x7fELF":
        sys.exit("gpu_binary.py: not an ELF file")
    is64 = data[4] == 2
    if not is64:
        sys.exit("gpu_binary.py: not a 64-bit ELF file")
    (e_type, e_machine, _, _, _, e_shoff, e_flags, _, _, _, e_shentsize,
     e_shnum, e_shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
    print(f"ELF64 machine {e_machine}{' (CUDA)' if e_machine == 190 else ''}")
    # The SM is in bits 8-15 of e_flags in the cubins of CUDA 12 and later.
    print(f"sm_{(e_flags >> 8) & 0xff}")
    sections = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        (name, stype, _, _, soff, size, link, _, _, entsize) = struct.unpack_from(
            "<IIQQQQIIQQ", data, off)
        sections.append((name, stype, soff, size, link, entsize))

    def string(table, index):
        start = table[2] + index
        end = data.index(b"\0", start)
        return data[start:end].decode()

    for name, stype, soff, size, link, entsize in sections:
        if stype != 2:  # SHT_SYMTAB
            continue
        names = sections[link]
        for j in range(size // entsize):
            st_name, st_info = struct.unpack_from("<IB", data, soff + j * entsize)
            symbol = string(names, st_name)
            if st_info & 0xf == 2 and not symbol.startswith("$"):  # STT_FUNC
                print(f"kernel {symbol}")


def main():
    text = sys.stdin.read()
    if sys.argv[1:] == ["--ptx"]:
        sys.stdout.write(object_bytes(text, "assembly").decode())
    elif sys.argv[1:] == ["--text"]:
        sys.stdout.write(object_bytes(text, "bin").decode())
    elif sys.argv[1:] == ["--elf"]:
        elf_summary(object_bytes(text, "bin"))
    elif sys.argv[1:] == ["--cubin"]:
        sys.stdout.buffer.write(object_bytes(text, "bin"))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
