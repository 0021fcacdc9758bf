#!/usr/bin/env bash
# linattn on a GPU machine that has the NVIDIA driver, the CUDA toolkit and
# Python with PyTorch but no LLVM 22 and no network, from the relocatable
# bundle (scripts/bundle.sh, `make bundle` on a machine with LLVM 22). From the
# repository root, with the bundle at build/linattn-bundle.tar.xz
# (LINATTN_BUNDLE_TARBALL overrides):
#
#   bench/gpu/device.sh info                  the machine, the toolchain, the bundle
#   bench/gpu/device.sh test [LIT ARGS]       the GPU test suites (test/Integration/GPU/CUDA),
#                                             then the Python package's suite
#   bench/gpu/device.sh lit [LIT ARGS]        the GPU test suites alone (e.g.
#                                             --filter=mma-rounding: seconds)
#   bench/gpu/device.sh pytest [PYTEST ARGS]  the Python package's suite (python/tests) on
#                                             the bundle's libLinAttnCAPI.so: backend="cuda"
#   bench/gpu/device.sh bench [BENCH ARGS]    bench/gpu/bench.py with the bundle's tools
#   bench/gpu/device.sh peers [BENCH ARGS]    only builds what bench with these arguments
#                                             would (its linattn libraries, fast-transformers'
#                                             causal product; no GPU work: in the background
#                                             of another step)
#   bench/gpu/device.sh tune [TUNE ARGS]      bench/gpu/tune.py with the bundle's tools
#   bench/gpu/device.sh profile [ARGS]        bench/gpu/ncu_profile.py (Nsight Compute) with
#                                             the bundle's tools
#   bench/gpu/device.sh phases [ARGS]         bench/gpu/phase_clocks.py (the scans' cycles
#                                             per phase) with the bundle's tools
#
# Every step first unpacks the bundle into build/device (once per tarball) and
# installs the peers it carries there (pip, offline, --target). Logs and
# results go to $OUT when it is set (the GPU machine's output folder), else to
# build/device and bench/results.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python=${PYTHON:-python3}
tarball=${LINATTN_BUNDLE_TARBALL:-build/linattn-bundle.tar.xz}
dev=$root/build/device
out=${OUT:-$dev}

setup() {
  [[ -f "$tarball" ]] || { echo "device.sh: no bundle at $tarball (make bundle)" >&2; exit 1; }
  local stamp
  stamp=$(stat -c %s-%Y "$tarball")
  if [[ "$(cat "$dev/stamp" 2>/dev/null)" != "$stamp" ]]; then
    rm -rf "$dev"
    mkdir -p "$dev"
    "$python" - "$tarball" "$dev" <<'PY'
import sys, tarfile
safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **safe)
PY
    shopt -s nullglob
    local wheels=("$dev"/linattn-bundle/peers/*.whl)
    if ((${#wheels[@]})); then
      PIP_ROOT_USER_ACTION=ignore "$python" -m pip install -q --no-index --no-deps \
        --target "$dev/site" "${wheels[@]}"
    fi
    echo "$stamp" >"$dev/stamp"
  fi
  export LINATTN_BUNDLE=$dev/linattn-bundle
  export PATH=$LINATTN_BUNDLE/bin:$PATH
  export PYTHONPATH=$dev/site${PYTHONPATH:+:$PYTHONPATH}
  # LLVM's FileCheck, not and count name libz3 without using it.
  if ! ldconfig -p 2>/dev/null | grep -q 'libz3\.so\.4 '; then
    export LD_LIBRARY_PATH=$LINATTN_BUNDLE/lib/stubs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  mkdir -p "$out"
}

lit_suite() {
  "$python" bench/gpu/bundle_lit.py -v "$@" test/Integration/GPU/CUDA 2>&1 |
    tee "$out/device-lit.log"
}

# The package from this tree over the bundle's self-contained library, which
# finds the GPU runtimes, the runner utilities and libomp beside it. Where
# pytest-xdist is installed the cases run in $LINATTN_PYTEST_WORKERS
# processes (default 8), each with its own compile cache and CUDA context:
# one at a time, the CUDA backend's cases took more than six minutes on an
# H200.
python_suite() {
  local workers=()
  if "$python" -c 'import xdist' 2>/dev/null; then
    workers=(-n "${LINATTN_PYTEST_WORKERS:-8}")
  fi
  LINATTN_LIBRARY=$LINATTN_BUNDLE/lib/libLinAttnCAPI.so \
    PYTHONPATH=$root/python:$PYTHONPATH \
    "$python" -m pytest -q -rs -p no:cacheprovider "${workers[@]}" "$@" python/tests 2>&1 |
    tee "$out/device-pytest.log"
}

step=${1:-info}
shift || true
setup
case $step in
  info)
    {
      cat "$LINATTN_BUNDLE/MANIFEST"
      nvidia-smi -L || true
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
        --format=csv || true
      command -v ptxas && ptxas --version | tail -1 || echo "ptxas: not on PATH"
      command -v ncu && ncu --version | tail -1 || echo "ncu: not on PATH"
      "${CXX:-c++}" --version | head -1 || true
      "$python" - <<'PY'
import importlib, sys
print("python", sys.version.split()[0])
for mod in ("numpy", "torch", "triton", "fla", "fast_transformers"):
    try:
        m = importlib.import_module(mod)
        print(mod, getattr(m, "__version__", "?"))
    except Exception as e:  # noqa: BLE001
        print(mod, "missing:", type(e).__name__, e)
PY
      ls "$LINATTN_BUNDLE"/peers/pytorch-fast-transformers-*.tar.gz 2>/dev/null |
        sed 's|^|fast_transformers: bench builds its causal product from |' || true
      ldd "$LINATTN_BUNDLE/bin/linattn-run" "$LINATTN_BUNDLE/bin/FileCheck" \
        "$LINATTN_BUNDLE/lib/libLinAttnCAPI.so" | grep -i 'not found' || true
      "$LINATTN_BUNDLE/bin/linattn-run" --version | head -3
    } 2>&1 | tee "$out/device-info.txt"
    ;;
  test)
    status=0
    lit_suite "$@" || status=$?
    python_suite || status=$?
    exit $status
    ;;
  lit)
    lit_suite "$@"
    ;;
  pytest)
    python_suite "$@"
    ;;
  bench | peers)
    sdist=$(ls "$LINATTN_BUNDLE"/peers/pytorch-fast-transformers-*.tar.gz 2>/dev/null | head -1)
    what=(--out "${OUT:-bench/results}")
    [[ $step == peers ]] && what=(--build-peers)
    "$python" bench/gpu/bench.py --tools "$LINATTN_BUNDLE/bin" \
      --build-dir "$dev/bench" ${sdist:+--fast-transformers-sdist "$sdist"} \
      "${what[@]}" "$@"
    ;;
  tune)
    "$python" bench/gpu/tune.py --tools "$LINATTN_BUNDLE/bin" --out "${OUT:-bench/results}" "$@"
    ;;
  profile)
    "$python" bench/gpu/ncu_profile.py --tools "$LINATTN_BUNDLE/bin" --out "${OUT:-bench/results}" "$@"
    ;;
  phases)
    "$python" bench/gpu/phase_clocks.py --tools "$LINATTN_BUNDLE/bin" --out "${OUT:-bench/results}" "$@"
    ;;
  *)
    echo "device.sh: unknown step $step (info, test, lit, pytest, bench, peers, tune, profile or phases)" >&2
    exit 2
    ;;
esac
