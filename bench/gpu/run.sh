#!/bin/sh
# The GPU benchmark in one command, on a machine with an NVIDIA GPU, after
# `make build`: bench/gpu/run.sh [--quick] [--dry-run] [--repeat=N]
# Writes bench/results/<device>-<date>.{json,md}. See bench/gpu/README.md.
set -e
here=$(cd "$(dirname "$0")" && pwd)
exec "${PYTHON:-python3}" "$here/bench.py" "$@"
