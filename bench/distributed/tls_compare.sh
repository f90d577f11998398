#!/usr/bin/env bash
# What mutual TLS costs the remote eager figures: remote_benchmark over plaintext and with
# --mutual_tls, in alternating rounds on this machine, then each benchmark's best median of
# each transport side by side, with TLS's time over plaintext's.
#   bench/distributed/tls_compare.sh BUILD_DIR [ROUNDS]
set -euo pipefail
build=${1:?usage: tls_compare.sh BUILD_DIR [ROUNDS]}
rounds=${2:-3}
args=(--benchmark_repetitions=5 --benchmark_min_time=0.5s --benchmark_report_aggregates_only=true)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in $(seq "$rounds"); do
  for mode in plaintext mutual_tls; do
    flag=()
    [[ $mode == mutual_tls ]] && flag=(--mutual_tls)
    "$build/distributed/remote_benchmark" "${flag[@]}" "${args[@]}" 2>/dev/null |
      awk -v m="$mode" '/_median/ {print m, $1, $2, $3}' >>"$out"
  done
done
# The best (lowest) median time of each benchmark per transport, and the ratio.
printf "%-36s %14s %14s %8s\n" "benchmark (median, best round)" "plaintext" "mutual TLS" "TLS/plain"
awk '{ key = $2; t = $3; unit[key] = $4
       if (!((m = $1 SUBSEP key) in best) || t < best[m]) best[m] = t; seen[key] = 1 }
     END { for (k in seen) printf "%-36s %11.3f %-2s %11.3f %-2s %7.2fx\n", k, best["plaintext" SUBSEP k], unit[k],
                                  best["mutual_tls" SUBSEP k], unit[k], best["mutual_tls" SUBSEP k] / best["plaintext" SUBSEP k] }' "$out" | sort
