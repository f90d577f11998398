#!/usr/bin/env bash
# What mutual TLS costs the remote eager figures: remote_benchmark over plaintext and with
# --mutual_tls, in alternating rounds on this machine, then each benchmark's best median of
# each transport side by side, with TLS's time over plaintext's. Each round runs every
# --bulk_connections setting of MT_TLS_CONNECTIONS, "1 0" by default: every tensor whole on
# one connection (as before large tensors went in parts), then the default (large tensors
# in parts over one connection per hardware thread, at most 8).
#   bench/distributed/tls_compare.sh DIR [ROUNDS]
# DIR is a build folder (its distributed/remote_benchmark) or a folder that holds
# remote_benchmark itself (the GPU bundle's .gpu/bin). Optional variables:
#   MT_TLS_CONNECTIONS        the --bulk_connections settings, as above
#   MT_TLSBENCH_SERVER_FLAGS  flag sets for the task's server, separated by ';' (an empty
#                             set: the defaults), e.g. ";--num_cqs=4 --min_pollers=4": each
#                             round runs every set, and each set gets a table of its own
#   MT_TLSBENCH_ARGS          remote_benchmark's arguments for each run (default: 5
#                             repetitions of at least 0.5 s, every benchmark)
# Output, per flag set: a line "== task server flags: SET" ("(default)" for an empty set), a
# header, then one line per benchmark and setting: name, connections ("auto" for 0),
# plaintext time and unit, TLS time and unit, TLS/plaintext, and client/task CPU ms per
# iteration over plaintext and over TLS ("-" where the benchmark does not count them).
set -euo pipefail
dir=${1:?usage: tls_compare.sh DIR [ROUNDS]}
rounds=${2:-3}
bin="$dir/distributed/remote_benchmark"
[[ -x $bin ]] || bin="$dir/remote_benchmark"
[[ -x $bin ]] || { echo "tls_compare: no remote_benchmark in $dir" >&2; exit 1; }
read -r -a args <<<"${MT_TLSBENCH_ARGS:---benchmark_repetitions=5 --benchmark_min_time=0.5 --benchmark_report_aggregates_only=true}"
IFS=';' read -r -a sets <<<"${MT_TLSBENCH_SERVER_FLAGS:-}"
((${#sets[@]})) || sets=("")
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
for round in $(seq "$rounds"); do
  for s in "${!sets[@]}"; do
    read -r -a server <<<"${sets[s]}"
    for k in ${MT_TLS_CONNECTIONS:-1 0}; do
      for mode in plaintext mutual_tls; do
        flag=(--bulk_connections="$k" "${server[@]}")
        [[ $mode == mutual_tls ]] && flag+=(--mutual_tls)
        "$bin" "${flag[@]}" "${args[@]}" 2>"$err" |
          awk -v s="$s" -v m="$mode" -v k="$([[ $k == 0 ]] && echo auto || echo "$k")" \
            '/_median/ { cpu = "-"; for (i = 4; i <= NF; i++) if ($i ~ /^client_cpu_ms=/) c = $i; else if ($i ~ /^task_cpu_ms=/) t = $i
                         if (c != "") { sub(/.*=/, "", c); sub(/.*=/, "", t); cpu = sprintf("%.1f/%.1f", c, t) }
                         print s, m, $1, k, $2, $3, cpu; c = t = "" }' >>"$out" ||
          { echo "tls_compare: $bin ${flag[*]} failed:" >&2; tail -5 "$err" >&2; exit 1; }
        # A remote_benchmark older than the server flags would ignore them silently.
        if ((${#server[@]})) && ! grep -q task_sync_server "$err"; then
          echo "tls_compare: $bin does not take the server flags ${server[*]} (an older build?)" >&2
          exit 1
        fi
      done
    done
  done
done
# Per flag set, the best (lowest) median time of each benchmark and setting per transport,
# and the ratio; then, for the 64 MiB transfers, the client's and the task's CPU
# milliseconds per iteration in that round (client/task), plaintext then TLS: which side's
# cores the time went to.
for s in "${!sets[@]}"; do
  ((s == 0)) || echo
  label=$(echo ${sets[s]})  # the set's words, spaces trimmed
  echo "== task server flags: ${label:-(default)}"
  printf "%-36s %5s %14s %14s %9s %13s %13s\n" "benchmark (median, best round)" "conns" "plaintext" \
    "mutual TLS" "TLS/plain" "cpu ms plain" "cpu ms TLS"
  awk -v s="$s" '$1 != s { next }
       { key = $3 " " $4; t = $5; unit[key] = $6
         if (!((m = $2 SUBSEP key) in best) || t < best[m]) { best[m] = t; cpu[m] = $7 }; seen[key] = 1 }
       END { for (k in seen) { split(k, p, " "); pl = "plaintext" SUBSEP k; tl = "mutual_tls" SUBSEP k
               printf "%-36s %5s %11.3f %-2s %11.3f %-2s %8.2fx %13s %13s\n", p[1], p[2], best[pl], unit[k],
                      best[tl], unit[k], best[tl] / best[pl], cpu[pl], cpu[tl] } }' "$out" | sort
done
