"""Writes the .npy files of linattn-run-npy-errors.test into a folder: one
valid array and one file for each way a file can be malformed, each named
for what is wrong with it."""
import struct
import sys


def npy(path, header, payload=b"", version=1):
    """A .npy file with `header` (padded as numpy pads it) and `payload`."""
    text = header.encode()
    prefix = 10 if version == 1 else 12
    text += b" " * (63 - (prefix + len(text)) % 64) + b"\n"
    length = struct.pack("<H" if version == 1 else "<I", len(text))
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]) + length + text + payload)


def header(descr="<f4", fortran=False, shape="(2, 3)"):
    return (f"{{'descr': '{descr}', 'fortran_order': {fortran}, "
            f"'shape': {shape}, }}")


def main():
    d = sys.argv[1]
    floats = struct.pack("<6f", *range(6))
    npy(f"{d}/good.npy", header(), floats)
    npy(f"{d}/good-v2.npy", header(), floats, version=2)
    with open(f"{d}/not-npy.npy", "wb") as f:
        f.write(b"PK\x03\x04 a zip file, not an array")
    with open(f"{d}/truncated.npy", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\xff\x7f{'descr'")
    with open(f"{d}/truncated-v2.npy", "wb") as f:
        # Version 2 with the first 3 of its header length's 4 bytes.
        f.write(b"\x93NUMPY\x02\x00\xff\xff\xff")
    npy(f"{d}/int32.npy", header(descr="<i4"), floats)
    npy(f"{d}/big-endian.npy", header(descr=">f4"), floats)
    npy(f"{d}/fortran.npy", header(fortran=True), floats)
    npy(f"{d}/no-shape.npy", "{'descr': '<f4', 'fortran_order': False, }",
        floats)
    npy(f"{d}/unclosed-shape.npy", header(shape="(2, 3"), floats)
    npy(f"{d}/negative-dim.npy", header(shape="(-2, 3)"), floats)
    npy(f"{d}/huge-dim.npy", header(shape="(99999999999999999999, 3)"),
        floats)
    npy(f"{d}/short-payload.npy", header(), floats[:20])
    # 2^62 x 4 float32: 2^66 bytes, which wrap around to 0 in 64 bits.
    npy(f"{d}/wrapping-bytes.npy", header(shape="(1, 1, 4611686018427387904, 4)"))
    npy(f"{d}/wrapping-bytes-2.npy",
        header(shape="(4294967296, 4294967296, 2, 2)"))


if __name__ == "__main__":
    main()
