#!/usr/bin/env bash
# The README's main job: takes the example through linattn-opt's passes and
# prints the IR before and after, then compiles it with linattn-lower-to-cpu,
# runs it, and prints its error against a float64 reference and its time
# against causal softmax attention.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
example=$root/examples/causal_attention.mlir
opt=$build/bin/linattn-opt
pipeline="builtin.module(linattn-decompose,linattn-masked-to-scan,canonicalize)"

echo "== ${example#$root/} =="
"$opt" "$example"
echo
echo "== after linattn-opt --pass-pipeline='$pipeline' =="
"$opt" "$example" --pass-pipeline="$pipeline"

echo
echo "== compiled with linattn-lower-to-cpu and run on seeded inputs =="
python3 "$root/scripts/demo_report.py" "$build" "$example"
