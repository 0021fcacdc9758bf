#!/usr/bin/env bash
# The README's main job: takes the example through linattn-opt's passes and
# prints the IR before and after.
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

run=$build/bin/linattn-run
if [ -x "$run" ]; then
  echo
  echo "== linattn-run ${example#$root/} --random-seed=0 (linattn-lower-to-cpu, JIT) =="
  out=$build/demo
  mkdir -p "$out"
  "$run" "$example" --random-seed=0 --output-dir="$out" --repeat=5
  echo "outputs written to $out"
fi
