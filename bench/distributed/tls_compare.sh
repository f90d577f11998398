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
# and unit, TLS/plaintext, and client/task CPU ms per iteration over plaintext and over TLS
# ("-" where the benchmark does not count them).
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
          '/_median/ { cpu = "-"; for (i = 4; i <= NF; i++) if ($i ~ /^client_cpu_ms=/) c = $i; else if ($i ~ /^task_cpu_ms=/) t = $i
                       if (c != "") { sub(/.*=/, "", c); sub(/.*=/, "", t); cpu = sprintf("%.1f/%.1f", c, t) }
                       print m, $1, k, $2, $3, cpu; c = t = "" }' >>"$out" ||
        { echo "tls_compare: $bin ${flag[*]} failed:" >&2; tail -5 "$err" >&2; exit 1; }
    done
  done
done
# The best (lowest) median time of each benchmark and setting per transport, and the ratio;
# then, for the 64 MiB transfers, the client's and the task's CPU milliseconds per iteration
# in that round (client/task), plaintext then TLS: which side's cores the time went to.
printf "%-36s %5s %14s %14s %9s %13s %13s\n" "benchmark (median, best round)" "conns" "plaintext" \
  "mutual TLS" "TLS/plain" "cpu ms plain" "cpu ms TLS"
awk '{ key = $2 " " $3; t = $4; unit[key] = $5
       if (!((m = $1 SUBSEP key) in best) || t < best[m]) { best[m] = t; cpu[m] = $6 }; seen[key] = 1 }
     END { for (k in seen) { split(k, p, " "); pl = "plaintext" SUBSEP k; tl = "mutual_tls" SUBSEP k
             printf "%-36s %5s %11.3f %-2s %11.3f %-2s %8.2fx %13s %13s\n", p[1], p[2], best[pl], unit[k],
                    best[tl], unit[k], best[tl] / best[pl], cpu[pl], cpu[tl] } }' "$out" | sort
