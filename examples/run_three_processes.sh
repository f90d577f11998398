#!/usr/bin/env bash
# Seed 002: two programs with per_process_gpu_memory_fraction = 0.4 run side by side, each
# holding 40% of every card; a third, started while they hold it, does not fit
# (3 x 0.4 > 1) and fails cleanly with an OOM error. Prints each program's output, then
# how each exited.
#
#   examples/run_three_processes.sh [DIR]   # DIR holds memory_fraction; default
#                                           # build/default/examples
set -uo pipefail
bin="${1:-build/default/examples}/memory_fraction"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/in1" "$tmp/in2"

# Waits until the program with pid $1 has written "holding" to file $2, or has exited.
wait_until_holding() {
  for _ in $(seq 1200); do
    grep -q holding "$2" && return 0
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  echo "timed out waiting for $2" >&2
}

# Each holder keeps its memory until its stdin, a pipe held open here, closes.
"$bin" "process 1" --hold <"$tmp/in1" >"$tmp/out1" &
pid1=$!
exec 3>"$tmp/in1"
wait_until_holding "$pid1" "$tmp/out1"

"$bin" "process 2" --hold <"$tmp/in2" >"$tmp/out2" &
pid2=$!
exec 4>"$tmp/in2"
wait_until_holding "$pid2" "$tmp/out2"

"$bin" "process 3" >"$tmp/out3"
status3=$?

exec 3>&- 4>&-
wait "$pid1"
status1=$?
wait "$pid2"
status2=$?

cat "$tmp/out1" "$tmp/out2" "$tmp/out3"
echo "process 1 exited with status $status1"
echo "process 2 exited with status $status2"
echo "process 3 exited with status $status3"
