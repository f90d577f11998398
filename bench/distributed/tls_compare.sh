#!/usr/bin/env bash
# What mutual TLS costs the remote eager figures: remote_benchmark over plaintext and with
# --mutual_tls, in alternating rounds on this machine, then each benchmark's best median of
# each transport side by side, with TLS's time over plaintext's. Each round runs every
# --bulk_connections setting of MT_TLS_CONNECTIONS, "1 0" by default: every tensor whole on
# one connection (as before large tensors went in parts), then the default (large tensors
# in parts over one connection per hardware thread, at most 8).
#   bench/distributed/tls_compare.sh DIR [ROUNDS]
# DIR is a build folder (its distributed/remote_benchmark) or a folder that holds
# remote_benchmark itself (the GPU bundle's .gpu/bin). Output: a header, then one line per
# benchmark and setting: name, connections ("auto" for 0), plaintext time and unit, TLS time
# and unit, TLS/plaintext.
set -euo pipefail
dir=${1:?usage: tls_compare.sh DIR [ROUNDS]}
rounds=${2:-3}
bin="$dir/distributed/remote_benchmark"
[[ -x $bin ]] || bin="$dir/remote_benchmark"
[[ -x $bin ]] || { echo "tls_compare: no remote_benchmark in $dir" >&2; exit 1; }
args=(--benchmark_repetitions=5 --benchmark_min_time=0.5 --benchmark_report_aggregates_only=true)
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
for round in $(seq "$rounds"); do
  for k in ${MT_TLS_CONNECTIONS:-1 0}; do
    for mode in plaintext mutual_tls; do
      flag=(--bulk_connections="$k")
      [[ $mode == mutual_tls ]] && flag+=(--mutual_tls)
      "$bin" "${flag[@]}" "${args[@]}" 2>"$err" |
        awk -v m="$mode" -v k="$([[ $k == 0 ]] && echo auto || echo "$k")" \
          '/_median/ {print m, $1, k, $2, $3}' >>"$out" ||
        { echo "tls_compare: $bin ${flag[*]} failed:" >&2; tail -5 "$err" >&2; exit 1; }
    done
  done
done
# The best (lowest) median time of each benchmark and setting per transport, and the ratio.
printf "%-36s %5s %14s %14s %9s\n" "benchmark (median, best round)" "conns" "plaintext" "mutual TLS" "TLS/plain"
awk '{ key = $2 " " $3; t = $4; unit[key] = $5
       if (!((m = $1 SUBSEP key) in best) || t < best[m]) best[m] = t; seen[key] = 1 }
     END { for (k in seen) { split(k, p, " ")
             printf "%-36s %5s %11.3f %-2s %11.3f %-2s %8.2fx\n", p[1], p[2], best["plaintext" SUBSEP k], unit[k],
                    best["mutual_tls" SUBSEP k], unit[k], best["mutual_tls" SUBSEP k] / best["plaintext" SUBSEP k] } }' "$out" | sort
