#!/usr/bin/env bash
# Seed 002: CUDA_VISIBLE_DEVICES reorders the GPUs. Three copies of cuda_visible_devices,
# each taking 60% of its GPU:0: program 1 in the default order holds card 0; program 2,
# with the visible cards in reverse order (1,0 on a two-GPU machine), fits beside it
# because its GPU:0 is another card; program 3, in the default order again, does not fit.
# On a one-GPU machine the reversed order is the same card, so program 2 fails too.
#
#   examples/run_reordered_programs.sh [DIR]   # DIR holds cuda_visible_devices; default
#                                              # build/default/examples
set -uo pipefail
bin="${1:-build/default/examples}/cuda_visible_devices"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/in1"

# The visible cards (CUDA_VISIBLE_DEVICES, else 0..n-1), reversed: "1,0" for two.
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
  order="$CUDA_VISIBLE_DEVICES"
else
  order=$(seq -s, 0 $(($("$bin" --count) - 1)))
fi
reversed=$(tr ',' '\n' <<<"$order" | tac | paste -sd, -)

# Program 1 keeps its memory until its stdin, a pipe held open here, closes.
"$bin" "program 1 (default order)" --hold <"$tmp/in1" >"$tmp/out1" &
pid1=$!
exec 3>"$tmp/in1"
for _ in $(seq 1200); do
  grep -q holding "$tmp/out1" && break
  kill -0 "$pid1" 2>/dev/null || break
  sleep 0.1
done

CUDA_VISIBLE_DEVICES="$reversed" "$bin" "program 2 (reversed order)" >"$tmp/out2"
status2=$?
"$bin" "program 3 (default order)" >"$tmp/out3"
status3=$?

exec 3>&-
wait "$pid1"
status1=$?

cat "$tmp/out1" "$tmp/out2" "$tmp/out3"
echo "program 1 exited with status $status1"
echo "program 2 exited with status $status2"
echo "program 3 exited with status $status3"
