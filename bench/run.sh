#!/usr/bin/env bash
# The CPU benchmark's one command (make bench): makes sure matplotlib is there
# for the plot, then runs bench/run.py (causal attention),
# bench/linear_form.py (non-causal), bench/backward.py (the backward pass) and
# bench/token_major.py ([B, N, H, D] tensors) on the build directory.
#   bench/run.sh [BUILD_DIR] [options of both, e.g. --quick]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
shift || true
python=${PYTHON:-python3}
if ! "$python" -c "import matplotlib" 2>/dev/null; then
  echo "bench: pip installing matplotlib for $python (for the plot)"
  "$python" -m pip install -q matplotlib 2>/dev/null ||
    "$python" -m pip install -q --break-system-packages matplotlib ||
    echo "bench: no matplotlib: the results will have no plot"
fi
"$python" "$here/run.py" --build-dir "$build" "$@"
"$python" "$here/linear_form.py" --build-dir "$build" "$@"
"$python" "$here/backward.py" --build-dir "$build" "$@"
exec "$python" "$here/token_major.py" --build-dir "$build" "$@"
