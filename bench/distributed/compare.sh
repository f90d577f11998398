#!/usr/bin/env bash
# Runs the remote eager benchmarks of minitensor and TensorFlow in alternating rounds on
# this machine, and prints each figure (median per round) side by side.
#   bench/distributed/compare.sh BUILD_DIR [ROUNDS] [BASELINE_BINARY]
# TensorFlow comes from a virtual environment of its own ($TF_PYTHON, default
# /tmp/tfvenv/bin/python; see tf_remote_benchmark.py). BASELINE_BINARY, if given, is a
# remote_benchmark built from an earlier commit, run in the same rounds.
set -euo pipefail
build=${1:?usage: compare.sh BUILD_DIR [ROUNDS] [BASELINE_BINARY]}
rounds=${2:-3}
baseline=${3:-}
tf_python=${TF_PYTHON:-/tmp/tfvenv/bin/python}
here=$(cd "$(dirname "$0")" && pwd)
mt_args=(--benchmark_repetitions=5 --benchmark_min_time=0.5s --benchmark_report_aggregates_only=true)
for round in $(seq "$rounds"); do
  echo "== round $round"
  "$tf_python" "$here/tf_remote_benchmark.py" 2>/dev/null | grep '^TF'
  "$build/distributed/remote_benchmark" "${mt_args[@]}" 2>/dev/null | grep '_median' |
    sed 's/^/MT /'
  if [[ -n "$baseline" ]]; then
    "$baseline" "${mt_args[@]}" 2>/dev/null | grep '_median' | sed 's/^/BASE /'
  fi
done
