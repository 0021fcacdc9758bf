#!/usr/bin/env bash
# Installs what linattn needs to build and test on Debian 12 (bookworm):
# LLVM/MLIR 22 and its tools, clang/lld 22, OpenMP, CMake, Ninja, ccache,
# Python's headers (the package's native call module) and the Python packages
# the tests use (with LINATTN_SANITIZERS=1 also clang's sanitizer runtimes).
# Idempotent: installs only what is missing.
# The CUDA toolkit is optional and not installed here (see README); when it
# is there and lacks cuobjdump, NVIDIA's cuobjdump and nvdisasm wheels are.
set -euo pipefail

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  clang-22 lld-22 libomp-22-dev
  cmake ninja-build ccache
  python3 python3-dev python3-pip python3-venv
)
# `make check-sanitizers` (LINATTN_SANITIZERS=1): clang's sanitizer runtimes.
if [ "${LINATTN_SANITIZERS:-0}" = 1 ]; then
  APT_PACKAGES+=(libclang-rt-22-dev)
fi
PIP_PACKAGES=(numpy pytest)

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_if_needed apt-get update -q
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

python=${PYTHON:-python3}
for pkg in "${PIP_PACKAGES[@]}"; do
  if ! "$python" -c "import $pkg" 2>/dev/null; then
    echo "install-deps: pip installing $pkg for $python"
    # Debian's own python3 marks its site-packages as externally managed.
    "$python" -m pip install -q "$pkg" 2>/dev/null ||
      "$python" -m pip install -q --break-system-packages "$pkg"
  fi
done

# cuobjdump (and the nvdisasm it runs), for the SASS tests and
# bench/gpu/static_report.py: the CUDA toolkit does not always ship them;
# NVIDIA's wheels of the toolkit's major version do, under nvidia/*/bin.
cuda_bin=${CUDA_PATH:-/usr/local/cuda}/bin
find_cuobjdump='import glob, sys
try:
    import nvidia
except ImportError:
    sys.exit(1)
sys.exit(0 if any(glob.glob(p + "/*/bin/cuobjdump") for p in nvidia.__path__) else 1)'
if [ -x "$cuda_bin/ptxas" ] && [ ! -x "$cuda_bin/cuobjdump" ] &&
   ! "$python" -c "$find_cuobjdump" 2>/dev/null; then
  cuda_major=$("$cuda_bin/ptxas" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  pin=${cuda_major:+==${cuda_major}.*}
  cuda_wheels=("nvidia-cuda-cuobjdump$pin" "nvidia-cuda-nvdisasm$pin")
  echo "install-deps: pip installing ${cuda_wheels[*]} for $python"
  "$python" -m pip install -q "${cuda_wheels[@]}" 2>/dev/null ||
    "$python" -m pip install -q --break-system-packages "${cuda_wheels[@]}"
fi

echo "install-deps: all dependencies present"
