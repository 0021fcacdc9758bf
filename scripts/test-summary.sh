#!/usr/bin/env bash
# Prints lit's result counts from a check log as one line (lit pads the
# labels, "Passed     :", when it reports several kinds):
#   "tests: N passed, N failed, N skipped"
set -euo pipefail
log=$1
count() { sed -n "s/^ *$1 *: *\([0-9]*\).*/\1/p" "$log" | tail -n 1; }
passed=$(count Passed); failed=$(count Failed)
unsupported=$(count Unsupported); xfail=$(count "Expectedly Failed")
passed=$(( ${passed:-0} + ${xfail:-0} ))
echo "tests: ${passed} passed, ${failed:-0} failed, ${unsupported:-0} skipped"
[ "${failed:-0}" -eq 0 ] && [ "$passed" -gt 0 ]
