"""Installs the linattn package together with a copy of libLinAttnCAPI.so.

The library is taken from, first match wins: the file named by
``LINATTN_LIBRARY``; ``$LINATTN_BUILD_DIR/lib``; ``<repository>/build/lib``
(what ``make build`` produces). It lands in ``linattn/_lib/``, where the
installed package finds it at run time; it links to Debian's LLVM/MLIR 22
libraries in /usr/lib/llvm-22/lib through its RUNPATH. The GPU runtimes
the ``cuda`` and ``gpu-emulator`` backends load and the native call module
(``_linattn_call.abi3.so``) are copied beside it from the same directory,
those that were built.
"""

import os
import pathlib
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = pathlib.Path(__file__).resolve().parent
LIBRARY = "libLinAttnCAPI.so"
# Copied beside it when they were built: the GPU runtimes and the native call
# module (the ctypes path serves when it is missing).
EXTRAS = ("liblinattn_cuda_runtime.so", "liblinattn_gpu_emulator.so",
          "_linattn_call.abi3.so")


def find_built_library() -> pathlib.Path:
    env = os.environ.get("LINATTN_LIBRARY")
    if env:
        candidates = [pathlib.Path(env)]
    else:
        build = os.environ.get("LINATTN_BUILD_DIR")
        candidates = ([pathlib.Path(build) / "lib" / LIBRARY] if build else
                      [HERE.parent / "build" / "lib" / LIBRARY])
    for path in candidates:
        if path.is_file():
            return path
    raise SystemExit(
        f"linattn: cannot find {LIBRARY} (looked at "
        + ", ".join(str(p) for p in candidates)
        + "). Build it first with `make build` (or `make demo`) at the "
        "repository root, or point LINATTN_BUILD_DIR at your build directory "
        "or LINATTN_LIBRARY at the library.")


class BuildPyWithLibrary(build_py):
    """Copies libLinAttnCAPI.so, the GPU runtimes and the native call module
    into the package being built."""

    def run(self) -> None:
        super().run()
        source = find_built_library()
        target = pathlib.Path(self.build_lib) / "linattn" / "_lib" / LIBRARY
        target.parent.mkdir(parents=True, exist_ok=True)
        for path in [source] + [source.parent / name for name in EXTRAS]:
            if path.is_file():
                shutil.copy2(path, target.parent / path.name)
                self.announce(f"copied {path} to {target.parent}", level=2)


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tag it for this platform."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildPyWithLibrary}, distclass=BinaryDistribution)
