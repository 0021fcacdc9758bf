#!/usr/bin/env bash
# The relocatable bundle: what bench/gpu/run.sh and the GPU test suites need on
# a machine with an NVIDIA GPU, its driver, the CUDA toolkit and Python with
# PyTorch, but no LLVM 22 and no network. `make bundle` runs
#
#   scripts/bundle.sh [BUILD_DIR]
#
# after the build and writes BUILD_DIR/linattn-bundle/ and
# BUILD_DIR/linattn-bundle.tar.xz:
#
#   bin/linattn-run, bin/linattn-compile   linked statically against MLIR and
#                                          LLVM (cmake/LinAttnBundle.cmake)
#   bin/FileCheck, bin/not, bin/count      LLVM 22's, for lit
#   bin/lit, lit/                          LLVM 22's lit
#   lib/libLinAttnCAPI.so                  the C API for the Python package,
#                                          MLIR and LLVM linked in statically
#   lib/                                   linattn's CUDA and mock runtimes,
#                                          memrefCopy, the caching host
#                                          allocator, LLVM's OpenMP runtime,
#                                          the Python package's native calls
#   lib/stubs/libz3.so.4                   an empty library: FileCheck, not
#                                          and count name Z3 but use none of it
#   peers/                                 the benchmark's peers from PyPI
#                                          (flash-linear-attention and fla-core
#                                          wheels, fast-transformers' sdist),
#                                          when PyPI is reachable
#   MANIFEST                               versions and sizes
#
# bench/gpu/device.sh unpacks and uses it on the GPU machine. The tools have no
# MLIR runner utilities (libmlir_c_runner_utils needs libMLIR.so), only
# linattn's memrefCopy (liblinattn_runner_utils.so): host code that calls the
# print functions fails to link there, by name.
set -euo pipefail

build=${1:-build}
llvm=${LLVM_DIR:-/usr/lib/llvm-22}
python=${PYTHON:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

cmake --build "$build"
cmake --build "$build" --target linattn-bundle-tools

dest=$build/linattn-bundle
rm -rf "$dest" "$build/linattn-bundle.tar.xz"
mkdir -p "$dest/bin" "$dest/lib/stubs" "$dest/peers"

cp "$build/bundle/bin/linattn-run" "$build/bundle/bin/linattn-compile" \
   "$dest/bin/"
for tool in FileCheck not count; do
  cp "$llvm/bin/$tool" "$dest/bin/"
done
for lib in "$build"/bundle/lib/libLinAttnCAPI.so \
           "$build"/lib/liblinattn_cuda_runtime.so \
           "$build"/lib/liblinattn_mock_gpu_runtime.so \
           "$build"/lib/liblinattn_runner_utils.so \
           "$build"/lib/liblinattn_host_allocator.so \
           "$build"/lib/_linattn_call.abi3.so; do
  [[ -f "$lib" ]] && cp "$lib" "$dest/lib/"
done
if [[ -f "$llvm/lib/libomp.so.5" ]]; then
  cp -L "$llvm/lib/libomp.so.5" "$dest/lib/"
fi

# An empty libz3.so.4 for the LLVM utilities, used only where no Z3 is
# installed (device.sh checks); refuse if they ever use a Z3 symbol.
if nm -D --undefined-only "$dest"/bin/{FileCheck,not,count} | grep -q 'Z3_'; then
  echo "bundle: LLVM's FileCheck, not or count use Z3; cannot stub it" >&2
  exit 1
fi
"${CC:-$llvm/bin/clang}" -shared -nostdlib -x c /dev/null \
  -Wl,-soname,libz3.so.4 -o "$dest/lib/stubs/libz3.so.4"

# lit, with a launcher that finds it beside itself.
cp -r "$llvm/utils/lit/lit" "$dest/lit"
find "$dest/lit" -name __pycache__ -prune -exec rm -rf {} +
cat >"$dest/bin/lit" <<'EOF'
#!/usr/bin/env python3
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lit.main import main

main()
EOF
chmod +x "$dest/bin/lit"

# The peers, as pip would install them offline. fast-transformers ships only
# an sdist whose setup.py needs torch, so `pip download` cannot fetch it: the
# file comes from PyPI's JSON API.
peers_ok=1
"$python" -m pip download -q --no-deps -d "$dest/peers" \
  flash-linear-attention fla-core || peers_ok=0
"$python" - "$dest/peers" <<'EOF' || peers_ok=0
import hashlib, json, os, sys, urllib.request
meta = json.load(urllib.request.urlopen(
    "https://pypi.org/pypi/pytorch-fast-transformers/json", timeout=60))
sdist = next(u for u in meta["urls"] if u["packagetype"] == "sdist")
path = os.path.join(sys.argv[1], sdist["filename"])
urllib.request.urlretrieve(sdist["url"], path)
if hashlib.sha256(open(path, "rb").read()).hexdigest() != sdist["digests"]["sha256"]:
    sys.exit(f"bundle: {path}: sha256 mismatch")
EOF
if [[ $peers_ok == 0 ]]; then
  echo "bundle: PyPI not reachable: the bundle has no peers (bench skips them)" >&2
fi

{
  echo "linattn $(git describe --always --dirty 2>/dev/null || echo unknown)"
  echo "built on $(uname -m), $("$llvm/bin/llvm-config" --version 2>/dev/null | sed 's/^/LLVM /')"
  (cd "$dest" && find . -type f ! -path './lit/*' -printf '%P %s\n' | sort)
} >"$dest/MANIFEST"

# xz with the x86 filter and a dictionary that spans the tar: the tools and
# libLinAttnCAPI.so each hold most of MLIR and LLVM, and the later copies
# compress against the first (one stream: a few minutes and about 5.5 GB of
# memory; unpacking needs 512 MiB).
tar -C "$build" -cf - linattn-bundle |
  xz -T1 --x86 --lzma2=preset=9,dict=512MiB >"$build/linattn-bundle.tar.xz"
echo "bundle: $build/linattn-bundle.tar.xz ($(du -h "$build/linattn-bundle.tar.xz" | cut -f1))"
