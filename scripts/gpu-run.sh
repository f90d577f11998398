#!/usr/bin/env bash
# Runs on the GPU machine from the repository root (see scripts/gpu-check.sh). Optional
# arguments: the steps to run (tests faults sanitizer racecheck examples distributed
# benchmarks cpubench halfbench python fuzz, and soak soak-start soak-collect cardfill
# convbench ckptbench ringbench gpt2bench trainbench strategybench ddpbench tlsbench
# functionbench replicabench placementbench batch1probe scalarprobe basecompare); default
# the steps before `soak`. `tlsbench` runs
# bench/distributed/tls_compare.sh on the bundle's remote_benchmark (MT_TLSBENCH_ROUNDS
# rounds, default 3): plaintext beside mutual TLS, large tensors in parts, for each of three
# settings of the task's gRPC queues and pollers (MT_TLSBENCH_SERVER_FLAGS; set but empty:
# gRPC's default alone; MT_TLS_CONNECTIONS and MT_TLSBENCH_ARGS pass through), then
# tls_floor (the same round trip over raw sockets and raw TLS, no RPC). `fuzz` runs
# the differential fuzzer against
# the CPU for MT_DIFF_FUZZ_SECONDS (default 90) on every GPU, then as long on two logical
# GPUs of GPU 0. `soak` runs 16 threads of mixed ops on two logical GPUs for MT_SOAK_SECONDS
# (default 60). `cardfill` fills GPU 0 from a second process and tries the default pool,
# growth mode and a fixed limit on what is left.
#
# A soak longer than one device call (10 minutes, unpacking included) runs in two calls:
#   call 1: bash .gpu/gpu-run.sh soak-start tests examples   (MT_SOAK_SECONDS, default 600)
#   call 2: bash .gpu/gpu-run.sh soak-collect                (within 30 s of call 1's end,
#                                                             while the machine is warm)
# soak-start copies runtime_test and its libraries to /tmp/mt-soak, starts the soak there in
# its own process session at nice 10 and returns at once; soak-collect waits for it (at
# most MT_SOAK_COLLECT_WAIT s, default 540) and prints what `soak` prints. Meanwhile the
# soak holds 8 GiB of GPU 0 and 16 busy threads: steps beside it run slower, benchmark
# figures taken beside it are not comparable, and `cardfill` (which fills GPU 0) would
# starve it.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
# (soak-collect alone needs no programs: the soak runs from its own copy.)
if [ -f .gpu/bin.tar.xz ] && [ ! -d .gpu/bin ] && [ "$*" != soak-collect ]; then
  xz -dc .gpu/bin.tar.xz | tar -C .gpu -xf -
fi
# gRPC needs libssl.so.3, libcrypto.so.3 and libz.so.1, the CPU kernels libgomp.so.1: the
# bundled ones only if missing.
for lib in libssl.so.3 libcrypto.so.3 libz.so.1 libgomp.so.1; do
  if ! ldconfig -p | grep -qF "$lib"; then
    export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$PWD/.gpu/lib-fallback"
    break
  fi
done
[ -x .gpu/bin/mt-server ] && ldd .gpu/bin/mt-server | grep -F "not found"
# MirroredStrategy opens libnccl.so.2 with dlopen: the machine's CUDA toolkit has none, its
# PyTorch bundles one (docs/distribute.md).
nccl_lib=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0] + '/lib')" 2>/dev/null)
[ -n "$nccl_lib" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$nccl_lib"
# Conv2D and its backprops open libcudnn.so.9 the same way (kernels/cuda/cudnn/): PyTorch's.
cudnn_lib=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
[ -n "$cudnn_lib" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$cudnn_lib" MT_EXPECT_CUDNN=1
# Logs go to one folder, packed into $OUT/gpu-logs.tgz at the end (the device tool
# brings back at most 8 files).
out=/tmp/mt-gpu-logs
rm -rf "$out" && mkdir -p "$out"
steps="${*:-tests faults sanitizer racecheck examples distributed benchmarks cpubench halfbench python fuzz}"
summary=()
# GpuFaultInjectionTest hung on an H100 (2026-11-23): release_unused_memory did not restart
# region doubling, so CPU:0's pinned pool asked cudaHostAlloc for ever larger regions (fixed;
# Note [Growth] in allocator/bfc_allocator.h). The `faults` step runs each of its tests alone
# under a watchdog that names the last step of a hang; the other steps leave the suite out.
hangs='GpuFaultInjectionTest.*'
# The soak and card-fill tests run only in their own steps.
own_steps='GpuSoakTest.*:GpuCardFillTest.*'
# Runs a test program with a time limit (a hang is recorded as rc=124, not waited for).
limit() { timeout --kill-after=5 "${MT_TEST_TIMEOUT:-240}" "$@"; }
# Each result is printed at once too, so that a run cut short still shows what it reached.
record() {
  summary+=("$(printf '%-34s %s' "$1" "$2")")
  echo "${summary[-1]}"
}

# The detached soak's folder: outside the working tree, which the next call replaces.
soak_dir=/tmp/mt-soak
# Records the soak's result from its log $1 and exit status $2: the summary line, the
# memory series, malloc's statistics and the RSS growth (tests/runtime/soak_memory.h).
soak_summary() {
  record "soak GPU" "rc=$2 $(grep -aE '^\[  (PASSED|FAILED|SKIPPED)' "$1" | head -1)"
  grep -a '^\[soak\] \(t=\|malloc\)' "$1"
  grep -a -A5 '^\[soak\] GPU' "$1"
  record "soak GPU line" "$(grep -a '^\[soak\] GPU' "$1")"
  record "soak GPU RSS" "$(grep -a '^\[soak\] RSS growth' "$1")"
  grep -aE -B2 -A8 'Failure|^\[watchdog\]' "$1" | head -40
}

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader \
  | tee "$out/gpus.txt"

# Summarises the trace of examples/trace_placement (ops per device, ops timed by CUDA
# events) and screenshots its report when a Chromium is installed.
trace_report() {
  local t="$out/trace/trace.json"
  [ -f "$t" ] || return 0
  record "trace ops timed on the device" "$(grep -o '"timing":"device"' "$t" | wc -l)"
  for tid in $(grep -o '"cat":"op","ph":"X","pid":1,"tid":[0-9]*' "$t" | sed 's/.*://' | sort -u); do
    record "trace ops on track $tid" "$(grep -c "\"cat\":\"op\",\"ph\":\"X\",\"pid\":1,\"tid\":$tid," "$t")"
  done
  record "trace copies" "$(grep -c '"cat":"copy"' "$t")"
  local browser
  browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
  if [ -n "$browser" ]; then
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
      --user-data-dir=/tmp/mt-chromium --window-size=1200,1600 \
      --screenshot="$out/trace/report.png" "file://$out/trace/report.html" >/dev/null 2>&1
    record "trace report screenshot" "rc=$?"
  else
    record "trace report screenshot" "no chromium here: render $out/trace/report.html elsewhere"
  fi
}

for step in $steps; do
  step_start=$SECONDS
  case "$step" in
    tests)
      for t in .gpu/bin/*_test; do
        name=$(basename "$t")
        # The fuzz tests' fixed short run here; MT_DIFF_FUZZ_SECONDS is for the `fuzz` step.
        limit env -u MT_DIFF_FUZZ_SECONDS "$t" --gtest_brief=1 \
          --gtest_filter="-$hangs:$own_steps" >"$out/$name.log" 2>&1
        rc=$?
        line=$(grep -E '^\[  (PASSED|FAILED)  \]|tests? ran' "$out/$name.log" | tr '\n' ' ')
        # gtest's summary line: "[  SKIPPED ] 3 tests." (absent when none skipped).
        skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?\.$/\1/p' "$out/$name.log")
        record "$name" "rc=$rc $line skipped=${skipped:-0}"
      done ;;
    faults)
      for test in $(.gpu/bin/runtime_test --gtest_list_tests --gtest_filter="$hangs" |
                    awk '/^[^ ]/{suite=$1} /^  /{print suite $1}'); do
        MT_TEST_WATCHDOG_SECONDS=100 MT_TEST_TIMEOUT=120 limit .gpu/bin/runtime_test \
          --gtest_filter="$test" >"$out/fault-$test.log" 2>&1
        record "$test" "rc=$? $(grep -aE '^\[  (PASSED|FAILED|SKIPPED)|^\[watchdog\]' "$out/fault-$test.log" | head -1)"
      done
      grep -a -A2 '^\[watchdog\]' "$out"/fault-*.log
      record "fault injection GPU" "$(grep -ah '^\[fault injection\] GPU' "$out"/fault-*.log)" ;;
    soak)
      # One summary line: threads, seconds, chains, ops and mismatches, each pool's reserved
      # bytes before -> after, RSS before -> after.
      secs="${MT_SOAK_SECONDS:-60}"
      MT_SOAK_SECONDS="$secs" MT_TEST_TIMEOUT=$((${secs%.*} + 50)) limit .gpu/bin/runtime_test \
        --gtest_filter='GpuSoakTest.*' >"$out/soak.log" 2>&1
      soak_summary "$out/soak.log" $? ;;
    soak-start)
      if [ -f "$soak_dir/pid" ] && [ ! -f "$soak_dir/rc" ] && kill -0 "$(cat "$soak_dir/pid")" 2>/dev/null; then
        record "soak GPU start" "one is running already (pid $(cat "$soak_dir/pid")): not started"
        continue
      fi
      secs="${MT_SOAK_SECONDS:-600}"
      rm -rf "$soak_dir" && mkdir -p "$soak_dir/bin"
      cp .gpu/bin/runtime_test "$soak_dir/bin/" && cp -r .gpu/lib "$soak_dir/lib" &&
        { [ ! -d .gpu/lib-fallback ] || cp -r .gpu/lib-fallback "$soak_dir/lib-fallback"; }
      echo "$(date +%s) $secs" >"$soak_dir/started"
      # The inner shell writes its pid, then the test's exit status once it ends; the time
      # limit leaves room for the warm-up and the checks after the run.
      LD_LIBRARY_PATH="${LD_LIBRARY_PATH//$PWD\/.gpu/$soak_dir}" MT_SOAK_SECONDS="$secs" \
        setsid nohup nice -n 10 bash -c 'cd "$1" && echo $$ >pid &&
          timeout --kill-after=5 "$2" bin/runtime_test --gtest_filter="GpuSoakTest.*" >soak.log 2>&1
          echo $? >rc.tmp && mv rc.tmp rc' soak "$soak_dir" $((${secs%.*} + 120)) \
        </dev/null >/dev/null 2>&1 &
      for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$soak_dir/pid" ] && break; sleep 0.2; done
      record "soak GPU start" "pid $(cat "$soak_dir/pid" 2>/dev/null || echo none) MT_SOAK_SECONDS=$secs log $soak_dir/soak.log" ;;
    soak-collect)
      if [ ! -f "$soak_dir/started" ]; then
        record "soak GPU" "no soak was started on this machine (a fresh one?): run soak-start first"
        continue
      fi
      read -r t0 secs <"$soak_dir/started"
      end=$((SECONDS + ${MT_SOAK_COLLECT_WAIT:-540}))
      while [ ! -f "$soak_dir/rc" ] && [ "$SECONDS" -lt "$end" ] &&
            kill -0 "$(cat "$soak_dir/pid" 2>/dev/null)" 2>/dev/null; do
        sleep 2
      done
      cp "$soak_dir/soak.log" "$out/soak.log" 2>/dev/null
      if [ -f "$soak_dir/rc" ]; then
        soak_summary "$soak_dir/soak.log" "$(cat "$soak_dir/rc")"
      else
        grep -a '^\[soak\] t=' "$soak_dir/soak.log" 2>/dev/null | tail -3
        if kill -0 "$(cat "$soak_dir/pid" 2>/dev/null)" 2>/dev/null; then
          record "soak GPU" "still running, $(($(date +%s) - t0)) s of MT_SOAK_SECONDS=$secs: collect again"
        else
          record "soak GPU" "gone without an exit status after $(($(date +%s) - t0)) s (killed?)"
        fi
      fi ;;
    cardfill)
      MT_TEST_TIMEOUT=500 limit .gpu/bin/runtime_test \
        --gtest_filter='GpuCardFillTest.DefaultGrowthAndAFixedLimitFitOrFailWithAClearOom' \
        >"$out/cardfill.log" 2>&1
      record "card fill" "rc=$? $(grep -aE '^\[  (PASSED|FAILED|SKIPPED)' "$out/cardfill.log" | head -1)"
      while IFS= read -r l; do record "card fill line" "$l"; done < <(grep -a '^\[card fill\]' "$out/cardfill.log") ;;
    sanitizer)
      # The differential fuzzer's chains are slow under the sanitizers: fewer of them.
      export MT_DIFF_FUZZ_PROGRAMS=30
      # The test programs that call CUDA; the others never load it.
      filter="*Gpu*:*Cuda*:*GPU*:*Conformance*:-$hangs:$own_steps"
      for t in .gpu/bin/allocator_test .gpu/bin/kernels_test .gpu/bin/runtime_test; do
        name=$(basename "$t")
        limit compute-sanitizer --tool memcheck --error-exitcode 9 "$t" --gtest_brief=1 \
          --gtest_filter="$filter" >"$out/memcheck-$name.log" 2>&1
        record "memcheck $name" "rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck-$name.log" | tail -1)"
      done ;;
    racecheck)
      for t in .gpu/bin/kernels_test .gpu/bin/runtime_test; do
        name=$(basename "$t")
        limit compute-sanitizer --tool racecheck --error-exitcode 9 "$t" --gtest_brief=1 \
          --gtest_filter="*Gpu*:*Conformance*:-$hangs:$own_steps" >"$out/racecheck-$name.log" 2>&1
        record "racecheck $name" "rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/racecheck-$name.log" | tail -1)"
      done ;;
    examples)
      for e in .gpu/bin/*; do
        # The placement suite and tls_floor are benchmarks: placementbench and tlsbench run them.
        case "$e" in *_test|*_benchmark|*_probe|*/mt-server|*/placement_suite|*/tls_floor) continue ;; esac
        name=$(basename "$e")
        args=()
        # trace_placement writes trace.json and report.html into the folder it is given.
        [ "$name" = trace_placement ] && mkdir -p "$out/trace" && args=("$out/trace")
        "$e" "${args[@]}" >"$out/example-$name.log" 2>&1
        record "example $name" "rc=$?"
      done
      trace_report ;;
    cpubench)
      # The CPU kernels at 1 thread and every core beside libtorch's (built here against
      # the machine's PyTorch), then the kernel tests at each lower ISA level.
      cores=$(nproc)
      for isa in baseline avx2; do
        MT_CPU_ISA=$isa .gpu/bin/kernels_test --gtest_brief=1 >"$out/kernels-$isa.log" 2>&1
        record "kernels_test MT_CPU_ISA=$isa" "rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/kernels-$isa.log" | tr '\n' ' ')"
      done
      TORCH=$(python3 -c "import torch.utils.cpp_extension as c; print(' '.join('-I'+p for p in c.include_paths()))")
      TLIB=$(python3 -c "import torch.utils.cpp_extension as c; print(c.library_paths()[0])")
      ABI=$(python3 -c "import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))")
      g++ -O2 -std=c++17 -D_GLIBCXX_USE_CXX11_ABI="$ABI" $TORCH -I.gpu/src .gpu/src/bench/peer/torch_cpu_peer.cc \
        -L"$TLIB" -Wl,-rpath,"$TLIB" -ltorch -ltorch_cpu -lc10 -lbenchmark -lpthread \
        -o /tmp/torch_cpu_peer >"$out/peer-build.log" 2>&1
      record "build torch_cpu_peer" "rc=$?"
      # MT_CPUBENCH_ROUNDS rounds (3), each program in turn, so that both sides meet the same noise of a
      # shared machine; the table compares each side's best round and lists every round's ratio.
      # MT_CPUBENCH_FILTER (a --benchmark_filter regex) runs only some benchmarks on both sides.
      rounds=$(seq 1 "${MT_CPUBENCH_ROUNDS:-3}")
      bench_filter=()
      [ -n "${MT_CPUBENCH_FILTER:-}" ] && bench_filter=(--benchmark_filter="$MT_CPUBENCH_FILTER")
      for round in $rounds; do
        for t in 1 "$cores"; do
          .gpu/bin/cpu_kernels_benchmark --threads="$t" --benchmark_min_time=0.3 "${bench_filter[@]}" \
            --benchmark_out="$out/cpu-mt-$t-$round.json" --benchmark_out_format=json \
            >"$out/cpu-mt-$t-$round.log" 2>&1
          record "cpu_kernels_benchmark threads=$t round $round" "rc=$?"
          /tmp/torch_cpu_peer --threads="$t" --benchmark_min_time=0.3 "${bench_filter[@]}" \
            --benchmark_out="$out/cpu-torch-$t-$round.json" --benchmark_out_format=json \
            >"$out/cpu-torch-$t-$round.log" 2>&1
          record "torch_cpu_peer threads=$t round $round" "rc=$?"
        done
      done
      pairs=()
      for t in 1 "$cores"; do
        ours=$(for r in $rounds; do printf '%s,' "$out/cpu-mt-$t-$r.json"; done)
        theirs=$(for r in $rounds; do printf '%s,' "$out/cpu-torch-$t-$r.json"; done)
        pairs+=("$t:${ours%,}:${theirs%,}")
      done
      python3 .gpu/src/scripts/cpu-bench-table.py "${pairs[@]}" | tee "$out/cpu-table.md" ;;
    halfbench)
      # bfloat16 and float16 on the GPU: minitensor beside raw cuBLAS and memcpy in one run
      # (the fraction_of_* counters are the targets of the half-precision issue), then
      # libtorch's at::mm, add and sum as a second baseline (built here against its CUDA).
      # The SM clock and power are sampled throughout: a card held below its boost clock by
      # its power limit cannot reach the datasheet's peak, whatever the library.
      nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
        --format=csv,noheader,nounits -i 0 -lms 250 >"$out/half-clocks.csv" 2>/dev/null &
      smi=$!
      b=.gpu/bin/half_precision_benchmark
      "$b" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        >"$out/half-mt.log" 2>&1
      record "half_precision_benchmark" "rc=$?"
      # cuBLAS's own ceiling: cublasGemmEx's default beside the best cuBLASLt candidate.
      .gpu/bin/cublaslt_search_benchmark >"$out/half-lt.log" 2>&1
      record "cublaslt_search_benchmark" "rc=$?"
      while read -r line; do
        record "lt $(echo "$line" | awk '{print $1}')" "$(echo "$line" | grep -oE '(best_[a-z_]+|gemmex_[a-z_]+|gemmex_TFLOPs|best_lt_TFLOPs|candidates)=[0-9.]+[kMG]?' | tr '\n' ' ')"
      done < <(grep -E '^BM_CublasLtSearch' "$out/half-lt.log")
      kill "$smi" 2>/dev/null
      record "half clocks (MHz sm min/median/max, max.sm, W max, limit)" "$(awk -F', *' '$1+0 > 0 {print $1, $2, $3, $4}' "$out/half-clocks.csv" | sort -n | awk '{c[NR]=$1; m=$2; if ($3 > w) w=$3; l=$4} END {if (NR) print c[1], c[int((NR+1)/2)], c[NR], m, w, l}')"
      while read -r line; do
        name=$(echo "$line" | awk '{print $1}')
        record "mt $name" "$(echo "$line" | grep -oE '(fraction_of_[a-z]+|[A-Za-z_]*(TFLOPs|GBps))=[0-9.]+[kMG]?' | tr '\n' ' ')"
      done < <(grep -E '^BM_.*_median' "$out/half-mt.log")
      TORCH=$(python3 -c "import torch.utils.cpp_extension as c; print(' '.join('-I'+p for p in c.include_paths()))")
      TLIB=$(python3 -c "import torch.utils.cpp_extension as c; print(c.library_paths()[0])")
      ABI=$(python3 -c "import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))")
      # --no-as-needed: nothing names libtorch_cuda's symbols, but loading it registers CUDA.
      g++ -O2 -std=c++17 -D_GLIBCXX_USE_CXX11_ABI="$ABI" $TORCH .gpu/src/bench/peer/torch_gpu_peer.cc \
        -L"$TLIB" -Wl,-rpath,"$TLIB" -Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed \
        -ltorch -ltorch_cpu -lc10 -lbenchmark -lpthread -o /tmp/torch_gpu_peer >"$out/gpu-peer-build.log" 2>&1
      record "build torch_gpu_peer" "rc=$?"
      /tmp/torch_gpu_peer --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        >"$out/half-torch.log" 2>&1
      record "torch_gpu_peer" "rc=$?"
      while read -r line; do
        record "torch $(echo "$line" | awk '{print $1}')" "$(echo "$line" | grep -oE '(TFLOPs|GBps)=[0-9.]+[kMG]?' | tr '\n' ' ')"
      done < <(grep -E '^BM_.*_median' "$out/half-torch.log") ;;
    distributed)
      # A remote task's GPU used from a client process: two mt-server tasks forked by the
      # example, MatMul on task 1's GPU, TensorFlow's placement lines.
      e=.gpu/bin/remote_guide_example
      if [ -x "$e" ]; then
        "$e" /job:worker/task:1/device:GPU:0 >"$out/distributed-gpu.log" 2>&1
        rc=$?
        cat "$out/distributed-gpu.log"
        want='Executing op MatMul in device /job:worker/replica:0/task:1/device:GPU:0'
        grep -qF "$want" "$out/distributed-gpu.log" && found=yes || found=no
        record "distributed remote GPU matmul" "rc=$rc log-line=$found"
      else
        record "distributed remote GPU matmul" "not built (no gRPC)"
      fi ;;
    tlsbench)
      # What mutual TLS costs remote ops (issue 23), client and task on this machine's cores,
      # for each setting of the task's sync server (MT_TLSBENCH_SERVER_FLAGS, ';'-separated):
      # gRPC's default (1 queue, 1-2 pollers), 4 queues of 4 pollers (16, about one per core
      # here) and 8 of 8 (64, well past the cores). One table per setting, a line per
      # benchmark; large tensors in parts (auto: one connection per hardware thread, at most
      # 8). To stay near 2 minutes: the add with read and the 64 MiB transfers only, 3
      # repetitions of at least 0.3 s per run (tls_compare.sh's defaults take several times
      # as long).
      if [ -x .gpu/bin/remote_benchmark ]; then
        tls_sets="${MT_TLSBENCH_SERVER_FLAGS-;--num_cqs=4 --min_pollers=4;--num_cqs=8 --min_pollers=8}"
        MT_TLSBENCH_SERVER_FLAGS="$tls_sets" MT_TLS_CONNECTIONS="${MT_TLS_CONNECTIONS:-0}" \
          MT_TLSBENCH_ARGS="${MT_TLSBENCH_ARGS:---benchmark_filter=BM_RemoteAddAndRead|BM_RoundTrip64MiB|BM_Upload64MiB|BM_Read64MiB --benchmark_repetitions=3 --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true}" \
          timeout --kill-after=5 "${MT_TLSBENCH_TIMEOUT:-240}" \
          bash bench/distributed/tls_compare.sh .gpu/bin "${MT_TLSBENCH_ROUNDS:-3}" \
          >"$out/tlsbench.log" 2>&1
        record "tlsbench" "rc=$? cores=$(nproc) rounds=${MT_TLSBENCH_ROUNDS:-3} server flag sets: '${tls_sets}'"
        cat "$out/tlsbench.log"
        tls_label="(default)"
        while read -r line; do
          case "$line" in
            "== task server flags: "*) tls_label=${line#== task server flags: } ;;
            *)
              read -r name conns plain pu tls tu ratio cpu_plain cpu_tls <<<"$line"
              record "tls ${name%%/*} conns=$conns" "[$tls_label] plaintext $plain $pu  mutual TLS $tls $tu  TLS/plain $ratio  client/task cpu ms plain $cpu_plain TLS $cpu_tls" ;;
          esac
        done < <(grep -E '^(BM_|== )' "$out/tlsbench.log")
      else
        record "tlsbench" "no .gpu/bin/remote_benchmark (built without gRPC, or an older bundle)"
      fi
      # The floor: the same 64 MiB round trip over raw loopback sockets and raw TLS, no RPC.
      if [ -x .gpu/bin/tls_floor ]; then
        timeout 120 .gpu/bin/tls_floor >"$out/tls-floor.log" 2>&1
        record "tls floor" "rc=$?"
        cat "$out/tls-floor.log"
        while read -r kind conns rest; do
          record "tls floor $kind conns=$conns" "$rest"
        done < <(grep -E '^(reused|fresh) ' "$out/tls-floor.log")
      fi ;;
    fuzz)
      MT_DIFF_FUZZ_SECONDS="${MT_DIFF_FUZZ_SECONDS:-90}" .gpu/bin/runtime_test \
        --gtest_filter='GpuDifferentialFuzz*' >"$out/differential-fuzz.log" 2>&1
      record "differential fuzz" "rc=$? $(grep -a '^\[differential fuzz\]' "$out/differential-fuzz.log" | tr '\n' ' ')" ;;
    basecompare)
      # The per-op figures beside a baseline build's (scripts/gpu-check.sh base BUILD packs
      # it into .gpu/base.tar.xz): each benchmark alternates base, this build, base, this
      # build, so that both see the same machine state. Figures: median of each run.
      if [ -f .gpu/base.tar.xz ]; then
        mkdir -p .gpu/base && xz -dc .gpu/base.tar.xz | tar -C .gpu/base -xf -
        # MT_BASECOMPARE (benchmark programs' names, spaces between) keeps those alone;
        # MT_BASECOMPARE_ROUNDS sets the rounds (default 2).
        for spec in "runtime_benchmark:BM_AddScalarTensors_EndToEnd$|BM_Baseline_RawFunctionCall" \
                    "eager_gpu_benchmark:AddScalar|EmptyKernelLaunch" \
                    "function_benchmark:Chain100_(Gpu|Cpu)_(Eager|FunctionReplay)|RawGraph/" \
                    "cost_policy_benchmark:." "train_step_benchmark:model:0|Function"; do
          name=${spec%%:*}
          if [ -n "${MT_BASECOMPARE:-}" ] && [[ " $MT_BASECOMPARE " != *" $name "* ]]; then
            continue
          fi
          for round in $(seq "${MT_BASECOMPARE_ROUNDS:-2}"); do
            for which in base new; do
              bin=.gpu/bin/$name
              [ "$which" = base ] && bin=.gpu/base/$name
              [ -x "$bin" ] || continue
              echo "--- $name ($which, round $round)"
              "$bin" --benchmark_filter="${spec#*:}" --benchmark_min_time=0.2 \
                --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 \
                | grep -E '_median|^BM_.*[0-9] (ns|us|ms)' | tee -a "$out/basecompare-$which.log"
            done
          done
        done
        record "base comparison" "see basecompare-*.log"
      else
        record "base comparison" "no .gpu/base.tar.xz"
      fi ;;
    benchmarks)
      for b in .gpu/bin/*_benchmark; do
        name=$(basename "$b")
        # the cpubench, halfbench, strategybench and convbench steps run these
        case "$name" in
          cpu_kernels_benchmark|half_precision_benchmark|mirrored_strategy_benchmark|conv_benchmark) continue ;;
        esac
        "$b" --benchmark_min_time=0.2 >"$out/$name.log" 2>&1
        record "$name" "rc=$?"
        grep -E '^(BM_|Benchmark)' "$out/$name.log"
      done ;;
    python)
      # The cp312 wheel and pytest, installed into a temporary folder; the suite covers the
      # Python examples (against examples/expected/) and DLPack with torch on the GPU.
      # .gpu/python, when present, is the package built by scripts/py312-extension.sh; the
      # wheels are then pytest's alone.
      py=/tmp/mt-python
      rm -rf "$py"
      python3 -m pip install -q --no-index --no-deps --target "$py" .gpu/wheels/*.whl \
        >"$out/python-install.log" 2>&1
      rc=$?
      [ -d .gpu/python ] && cp -r .gpu/python/minitensor "$py/"
      for so in "$py"/minitensor/_minitensor*.so.xz; do [ -f "$so" ] && xz -d "$so"; done
      record "python install" "rc=$rc $(python3 --version 2>&1)$([ -d .gpu/python ] && echo ' (package folder)')"
      PYTHONPATH="$py" python3 -m pytest -v -rs -p no:cacheprovider tests/python \
        >"$out/python-pytest.log" 2>&1
      record "python pytest" "rc=$? $(tail -1 "$out/python-pytest.log")"
      record "python torch GPU DLPack" "$(grep -oE 'test_torch_gpu_shares[^ ]* [A-Z]+' \
        "$out/python-pytest.log" | awk '{print $2}')"
      record "python examples" "$(grep -cE 'test_example.*PASSED' "$out/python-pytest.log") passed, $(grep -cE 'test_example.*(FAILED|SKIPPED)' "$out/python-pytest.log") failed or skipped"
      PYTHONPATH="$py" python3 bench/python_overhead.py --bin .gpu/bin >"$out/python-bench.log" 2>&1
      record "python overhead benchmark" "rc=$?"
      cat "$out/python-bench.log" ;;
    convbench)
      # Convolutions (issue 38): the three passes beside raw cuDNN with the same algorithm,
      # then ConvNet training steps beside PyTorch eager in the same run, on the GPU (float32
      # with TF32 convolutions as PyTorch's default, and bfloat16) and on every CPU core;
      # after the python step, which installs the package into /tmp/mt-python.
      .gpu/bin/conv_benchmark --benchmark_counters_tabular=true >"$out/conv_benchmark.log" 2>&1
      record "conv_benchmark" "rc=$?"
      grep -E '^(BM_|Benchmark)' "$out/conv_benchmark.log"
      for args in "--model cifar" "--model cifar --dtype bfloat16" "--model small" \
                  "--model cifar --device CPU:0 --threads $(nproc) --steps 5 --warmup 2" \
                  "--model small --device CPU:0 --threads $(nproc)"; do
        PYTHONPATH=/tmp/mt-python timeout 300 python3 bench/convnet_train_step.py $args \
          >>"$out/convnet.log" 2>&1
        record "convnet $args" "rc=$? $(tail -2 "$out/convnet.log" | tr -s ' ' | tr '\n' ' ')"
      done
      cat "$out/convnet.log" ;;
    ckptbench)
      # Checkpoints of a 1 GiB model on GPU:0 (issue 39): save and restore beside raw
      # writes and reads of the disk and torch.save/torch.load in the same run; after the
      # python step, which installs the package into /tmp/mt-python.
      PYTHONPATH=/tmp/mt-python timeout 300 python3 bench/checkpoint_benchmark.py \
        --device GPU:0 --dir /tmp >"$out/checkpoint.log" 2>&1
      record "checkpoint_benchmark GPU:0" "rc=$?"
      cat "$out/checkpoint.log" ;;
    ringbench)
      # MultiWorkerMirroredStrategy's CPU ring all-reduce between worker processes on
      # loopback (issue 40), beside a raw TCP ring and PyTorch's gloo in the same run; after
      # the python step.
      PYTHONPATH=/tmp/mt-python timeout 300 python3 bench/distributed/ring_all_reduce_benchmark.py \
        --workers 2 4 --mib 4 64 --repeats 5 >"$out/ring.log" 2>&1
      record "ring_all_reduce_benchmark" "rc=$?"
      cat "$out/ring.log" ;;
    gpt2bench)
      # A GPT-2 124M training step (issue 41), float32 and bfloat16, minitensor eager and
      # mt.function beside PyTorch eager and torch.compile; after the python step.
      for dtype in float32 bfloat16; do
        PYTHONPATH=/tmp/mt-python timeout 420 python3 bench/gpt2_train_step.py --dtype "$dtype" \
          >"$out/gpt2-$dtype.log" 2>&1
        record "gpt2_train_step $dtype" "rc=$?"
        cat "$out/gpt2-$dtype.log"
      done ;;
    trainbench)
      # A training step beside PyTorch eager (issue 20), on the GPU and the CPU; after the
      # python step, which installs the package into /tmp/mt-python. Then the same step from
      # C++ beside libtorch's (bench/peer/torch_train_peer.cc, built here against its CUDA).
      for device in GPU CPU; do
        PYTHONPATH=/tmp/mt-python python3 bench/python_train_step.py --device "$device" \
          >"$out/train-step-$device.log" 2>&1
        record "python train step $device" "rc=$?"
        cat "$out/train-step-$device.log"
      done
      TORCH=$(python3 -c "import torch.utils.cpp_extension as c; print(' '.join('-I'+p for p in c.include_paths()))")
      TLIB=$(python3 -c "import torch.utils.cpp_extension as c; print(c.library_paths()[0])")
      ABI=$(python3 -c "import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))")
      g++ -O2 -std=c++17 -D_GLIBCXX_USE_CXX11_ABI="$ABI" $TORCH .gpu/src/bench/peer/torch_train_peer.cc \
        -L"$TLIB" -Wl,-rpath,"$TLIB" -Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed \
        -ltorch -ltorch_cpu -lc10 -lbenchmark -lpthread -o /tmp/torch_train_peer \
        >"$out/train-peer-build.log" 2>&1
      record "build torch_train_peer" "rc=$?"
      .gpu/bin/train_step_benchmark --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        >"$out/train-step-cc.log" 2>&1
      record "train_step_benchmark" "rc=$?"
      /tmp/torch_train_peer --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        >"$out/train-step-torch.log" 2>&1
      record "torch_train_peer" "rc=$?"
      # ms per step, medians: minitensor, libtorch, and libtorch's time over ours.
      while read -r name ours; do
        theirs=$(awk -v n="$name" '$1 == n {print $2}' "$out/train-step-torch.log")
        label=$(awk -v n="$name" '$1 == n {print $(NF-2), $(NF-1), $NF}' "$out/train-step-cc.log")
        record "C++ $name ($label)" "minitensor ${ours} ms  libtorch ${theirs:-?} ms  speedup $(awk -v a="$ours" -v b="$theirs" 'BEGIN {if (a > 0 && b > 0) printf "%.2fx", b / a; else print "?"}')"
      done < <(awk '/_median/ {print $1, $2}' "$out/train-step-cc.log") ;;
    ddpbench)
      # PyTorch DDP (NCCL, its defaults, TF32 off) on train_step_benchmark's wide MLP step,
      # the peer of MirroredStrategy (bench/peer/ddp_train_peer.py): global batch 4096 on 1
      # GPU (plain model and DDP) and split over 2 GPUs; ms per step, medians of 3 x 20 steps.
      gpus=$(nvidia-smi -L | wc -l)
      for n in 1 2; do
        if [ "$gpus" -lt "$n" ]; then
          record "ddp torchrun gpus=$n" "skipped: $gpus GPU here"
          continue
        fi
        # torchrun as a module of the python3 that has torch.
        MT_TEST_TIMEOUT=150 limit python3 -m torch.distributed.run --standalone \
          --nproc_per_node="$n" bench/peer/ddp_train_peer.py --dtype float32 bfloat16 \
          --steps 20 --warmup 5 --repeats 3 >"$out/ddp-$n.log" 2>&1
        record "ddp torchrun gpus=$n" "rc=$? $(grep -m1 '^# torch' "$out/ddp-$n.log" | cut -d, -f1-3)"
        grep -E '^(# )?(plain|ddp) ' "$out/ddp-$n.log"
      done
      # The ms_per_step of mode $1, dtype $2 on $3 GPUs, from the lines the script prints.
      ddp_ms() {
        awk -v m="$1" -v d="$2" -v g="gpus=$3" '$1 == m && $2 == "wide" && $3 == d && $4 == g {
          for (i = 5; i <= NF; i++) if (sub(/^ms_per_step=/, "", $i)) print $i }' "$out"/ddp-*.log
      }
      for dtype in float32 bfloat16; do
        plain=$(ddp_ms plain "$dtype" 1) one=$(ddp_ms ddp "$dtype" 1) two=$(ddp_ms ddp "$dtype" 2)
        record "ddp wide $dtype ms/step" "plain 1 GPU ${plain:-?}  DDP 1 GPU ${one:-?}  DDP 2 GPUs ${two:-?}"
        # The same global batch on each side: examples/s of 2 GPUs over 1 GPU's is the ratio of times.
        record "ddp wide $dtype 2-vs-1 scaling" "$(awk -v p="$plain" -v a="$one" -v b="$two" 'BEGIN {
          if (b > 0 && p > 0 && a > 0) printf "%.2fx over plain, %.2fx over DDP on 1 GPU (ideal 2x)", p / b, a / b
          else print "? (no 2-GPU figure)" }')"
      done ;;
    functionbench)
      # mt.function (issue 22): the 100-add chain per op (eager, replayed, raw launches, raw
      # CUDA graph: the floor), tracing 1,000 ops, the small training step as one function
      # beside the eager step; then the same from Python beside PyTorch (eager, CUDAGraph,
      # torch.compile reduce-overhead) when the python step has installed the package.
      part_start=$SECONDS
      .gpu/bin/function_benchmark --benchmark_repetitions=3 --benchmark_min_time=0.2 \
        --benchmark_report_aggregates_only=true >"$out/function-bench.log" 2>&1
      record "function_benchmark" "rc=$? $((SECONDS - part_start)) s"
      grep -E '_median|ERROR' "$out/function-bench.log"
      med() { awk -v n="$1" '$1 == n "/manual_time_median" {print $2}' "$out/function-bench.log"; }
      # A chain benchmark's iteration is 200 chains of 100 ops, in ms: us per op = ms / 20.
      per_op() { awk -v n="$1" '$1 == n "/manual_time_median" {printf "%.3f", $2 / 20}' "$out/function-bench.log"; }
      graph=$(per_op BM_Baseline_Chain100_RawGraph) replay=$(per_op BM_Chain100_Gpu_FunctionReplay)
      ours=$(per_op BM_Baseline_Chain100_RawGraphOfRuntimeKernels)
      record "chain per op GPU (us)" "eager $(per_op BM_Chain100_Gpu_Eager)  replay $replay  raw launches $(per_op BM_Baseline_Chain100_RawLaunches)  raw graph $graph  raw graph of AddV2 $ours"
      record "replay / raw graph" "$(awk -v a="$replay" -v b="$graph" -v c="$ours" 'BEGIN {if (a > 0 && b > 0 && c > 0) printf "%.3fx of one-thread adds, %.3fx of the same AddV2 kernels (target <= 1.1x)", a / b, a / c; else print "?"}')"
      record "chain per op CPU (us)" "eager $(per_op BM_Chain100_Cpu_Eager)  replay $(per_op BM_Chain100_Cpu_FunctionReplay)"
      record "trace 1000 ops (ms)" "GPU $(med BM_Trace1000Ops_Gpu) (eager run alone $(med BM_Eager1000Ops_Gpu))  CPU $(med BM_Trace1000Ops_Cpu)"
      record "pool allocs per replay" "$(grep -m1 -oE 'pool_allocs_per_replay=[0-9.]+' "$out/function-bench.log")"
      # Its manual time is per step of 50-step iterations: a short minimum time keeps the
      # real time per repetition near a second.
      part_start=$SECONDS
      .gpu/bin/train_step_benchmark --benchmark_filter='BM_TrainStep/cpu:[01]/model:0/|BM_TrainStepFunction/' \
        --benchmark_repetitions=3 --benchmark_min_time=0.02 --benchmark_report_aggregates_only=true \
        >"$out/function-train.log" 2>&1
      record "train_step_benchmark (function)" "rc=$? $((SECONDS - part_start)) s"
      grep -E '_median|ERROR' "$out/function-train.log"
      for cpu in 0 1; do
        eager=$(awk -v n="BM_TrainStep/cpu:$cpu/model:0/manual_time_median" '$1 == n {print $2}' "$out/function-train.log")
        fn=$(awk -v n="BM_TrainStepFunction/cpu:$cpu/manual_time_median" '$1 == n {print $2}' "$out/function-train.log")
        first=$(grep -m1 "BM_TrainStepFunction/cpu:$cpu" "$out/function-train.log" | grep -oE 'first_call_ms=[0-9.]+[a-z]*')
        record "C++ small step cpu=$cpu (ms)" "eager $eager  function $fn  $first"
      done
      if [ -d /tmp/mt-python ]; then
        part_start=$SECONDS
        MT_TEST_TIMEOUT=200 limit env PYTHONPATH=/tmp/mt-python python3 bench/peer/function_peer.py \
          >"$out/function-peer.log" 2>&1
        record "function_peer.py" "rc=$? $((SECONDS - part_start)) s"
        grep -vE '^\{' "$out/function-peer.log"
      else
        record "function_peer.py" "skipped: run the python step first"
      fi ;;
    strategybench)
      # MirroredStrategy (issue 21): all-reduce beside raw ncclAllReduce in the same run
      # (busbw = bytes/time * 2(n-1)/n), and the wide MLP data-parallel on 1 and 2 GPUs.
      n=$(nvidia-smi -L | wc -l)
      .gpu/bin/mirrored_strategy_benchmark --benchmark_repetitions=3 \
        --benchmark_report_aggregates_only=true >"$out/strategy-bench.log" 2>&1
      record "mirrored_strategy_benchmark" "rc=$? gpus=$n"
      grep -E '_median|ERROR' "$out/strategy-bench.log"
      for bytes in 1048576 4194304 16777216 67108864 268435456 1073741824; do
        raw=$(awk -v b="$bytes" '$1 == "BM_AllReduce/bytes:" b "/impl:0/manual_time_median" {print $2}' "$out/strategy-bench.log")
        ours=$(awk -v b="$bytes" '$1 == "BM_AllReduce/bytes:" b "/impl:1/manual_time_median" {print $2}' "$out/strategy-bench.log")
        record "all-reduce $((bytes >> 20)) MiB busbw" "$(awk -v b="$bytes" -v r="$raw" -v o="$ours" -v n="$n" 'BEGIN {
          if (r > 0 && o > 0) printf "raw %.1f GB/s  strategy %.1f GB/s  ratio %.2fx", b/(r*1e-6)*2*(n-1)/n/1e9, b/(o*1e-6)*2*(n-1)/n/1e9, r/o; else print "?" }')"
      done
      for dtype in 0 1; do
        one=$(awk -v d="$dtype" '$1 == "BM_WideStep/gpus:1/bf16:" d "/manual_time_median" {print $2}' "$out/strategy-bench.log")
        two=$(awk -v d="$dtype" '$1 == "BM_WideStep/gpus:2/bf16:" d "/manual_time_median" {print $2}' "$out/strategy-bench.log")
        record "wide step bf16=$dtype 1 vs 2 GPUs" "$(awk -v a="$one" -v b="$two" 'BEGIN {
          if (a > 0 && b > 0) printf "%.2f ms  %.2f ms  scaling %.2fx", a, b, a/b; else print "?" }')"
      done ;;
    placementbench)
      # The placement suite (issue 24): each workload under always-GPU, TensorFlow's rules,
      # all-CPU and the cost policy, ms per step, one table (bench/placement_suite/).
      part_start=$SECONDS
      MT_TEST_TIMEOUT=300 limit .gpu/bin/placement_suite >"$out/placement-suite.log" 2>&1
      record "placement_suite" "rc=$? $((SECONDS - part_start)) s"
      cat "$out/placement-suite.log"
      # One logged step of the small workloads under the cost policy: where each op went, why.
      for w in scalar_bookkeeping scalar_bookkeeping_256 mlp_batch1 mlp_batch1024 preprocess_then_matmul train_step; do
        echo "-- cost placement of one $w step"
        MT_TEST_TIMEOUT=60 limit .gpu/bin/placement_suite --child --workload="$w" --policy=cost \
          --steps=1 --log_step=1 2>&1 | grep -E '^(RESULT|Executing op)' | sed 's|/job:localhost/replica:0/task:0/device:||'
      done
      # A second run that starts from the first one's history (save_placement_history, then
      # load_placement_history): ms per step of each, which should not differ by much.
      for w in mlp_batch1 mlp_batch1024 train_step; do
        first=$(MT_TEST_TIMEOUT=60 limit .gpu/bin/placement_suite --child --workload="$w" --policy=cost \
          --history="$out/history-$w" 2>/dev/null | sed -n 's/^RESULT //p')
        MT_TEST_TIMEOUT=60 limit .gpu/bin/placement_suite --child --workload="$w" --policy=cost \
          --load_history="$out/history-$w.timed" --log_step=1 >"$out/second-$w.log" 2>&1
        second=$(sed -n 's/^RESULT //p' "$out/second-$w.log")
        record "history $w" "first run ${first:-?} ms a step, second from its history ${second:-?} ms"
        # The second run's logged step: where its ops went.
        [ "$w" != train_step ] && grep '^Executing op' "$out/second-$w.log" | grep -v Reshape |
          sed 's|/job:localhost/replica:0/task:0/device:||'
      done ;;
    batch1probe)
      # The batch-1 MLP's CPU work after other work (bench/placement_suite/cpu_context_probe.cc),
      # then the cost policy's history of that workload in three processes: what its
      # estimates of each product were after the timed steps.
      limit .gpu/bin/cpu_context_probe --runs=2000 2>&1 | tee "$out/cpu-context-probe.log"
      record "cpu_context_probe" "rc=${PIPESTATUS[0]}"
      for run in 1 2 3; do
        echo "-- the cost policy's history of the batch-1 MLP, process $run: $(timeout 60 \
          .gpu/bin/placement_suite --child --workload=mlp_batch1 --policy=cost \
          --history="$out/history-batch1-$run" 2>&1 | grep '^RESULT')"
        grep -E 'MatMul|Relu' "$out/history-batch1-$run.timed"
      done ;;
    scalarprobe)
      # What GPU work costs the host: a launch, the driver calls of a copy, raw cuBLAS and
      # cuBLASLt products beside mt::matmul (bench/cuda/gpu_host_cost_probe.cu); then the
      # scalar bookkeeping's step statement by statement, host time and the device of each
      # result (bench/placement_suite/scalar_step_probe.cc): always-GPU, then the cost
      # policy, at n = 512 and 256.
      limit .gpu/bin/gpu_host_cost_probe 2>&1 | tee "$out/gpu-host-cost-probe.log"
      record "gpu_host_cost_probe" "rc=${PIPESTATUS[0]}"
      for n in 512 256; do
        TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING=0 limit .gpu/bin/scalar_step_probe --policy=gpu \
          --n=$n 2>&1 | tee -a "$out/scalar-step-probe.log"
        limit .gpu/bin/scalar_step_probe --policy=cost --n=$n 2>&1 | tee -a "$out/scalar-step-probe.log"
      done
      record "scalar_step_probe" "rc=${PIPESTATUS[0]}" ;;
    replicabench)
      # mt.function inside MirroredStrategy.run (issue 22): the small MLP's step per replica,
      # eager or replaying each replica's own graph, on two GPUs and on one.
      .gpu/bin/mirrored_strategy_benchmark --benchmark_filter=BM_SmallStepReplicas \
        --benchmark_repetitions=3 --benchmark_min_time=0.05 \
        --benchmark_report_aggregates_only=true >"$out/replica-bench.log" 2>&1
      record "replica small step" "rc=$?"
      grep -E '_median|ERROR' "$out/replica-bench.log"
      for one in 0 1; do
        e=$(awk -v o="$one" '$1 == "BM_SmallStepReplicas/function:0/one_gpu:" o "/manual_time_median" {print $2}' "$out/replica-bench.log")
        f=$(awk -v o="$one" '$1 == "BM_SmallStepReplicas/function:1/one_gpu:" o "/manual_time_median" {print $2}' "$out/replica-bench.log")
        record "small step one_gpu=$one (us)" "$(awk -v a="$e" -v b="$f" 'BEGIN {
          if (a > 0 && b > 0) printf "eager %.1f  function %.1f  speed-up %.2fx", a, b, a/b; else print "?" }')"
      done ;;
  esac
  record "step $step" "$((SECONDS - step_start)) s"
done

[ -n "${OUT:-}" ] && tar czf "$OUT/gpu-logs.tgz" -C /tmp mt-gpu-logs
echo
echo "== summary =="
printf '%s\n' "${summary[@]}"
