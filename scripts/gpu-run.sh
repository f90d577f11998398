#!/usr/bin/env bash
# Runs on the GPU machine from the repository root (see scripts/gpu-check.sh). Optional
# arguments: the steps to run (tests sanitizer racecheck examples distributed benchmarks
# cpubench);
# default all.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
# gRPC needs libssl.so.3, libcrypto.so.3 and libz.so.1: the bundled ones only if missing.
for lib in libssl.so.3 libcrypto.so.3 libz.so.1; do
  if ! ldconfig -p | grep -qF "$lib"; then
    export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$PWD/.gpu/lib-fallback"
    break
  fi
done
[ -x .gpu/bin/mt-server ] && ldd .gpu/bin/mt-server | grep -F "not found"
# Logs go to one folder, packed into $OUT/gpu-logs.tgz at the end (the device tool
# brings back at most 8 files).
out=/tmp/mt-gpu-logs
rm -rf "$out" && mkdir -p "$out"
steps="${*:-tests sanitizer racecheck examples distributed benchmarks cpubench}"
summary=()
# Each result is printed at once too, so that a run cut short still shows what it reached.
record() {
  summary+=("$(printf '%-34s %s' "$1" "$2")")
  echo "${summary[-1]}"
}

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader \
  | tee "$out/gpus.txt"

for step in $steps; do
  case "$step" in
    tests)
      for t in .gpu/bin/*_test; do
        name=$(basename "$t")
        "$t" --gtest_brief=1 >"$out/$name.log" 2>&1
        rc=$?
        line=$(grep -E '^\[  (PASSED|FAILED)  \]|tests? ran' "$out/$name.log" | tr '\n' ' ')
        # gtest's summary line: "[  SKIPPED ] 3 tests." (absent when none skipped).
        skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?\.$/\1/p' "$out/$name.log")
        record "$name" "rc=$rc $line skipped=${skipped:-0}"
      done ;;
    sanitizer)
      # The test programs that call CUDA; the others never load it.
      filter='*Gpu*:*Cuda*:*GPU*:*Conformance*'
      for t in .gpu/bin/allocator_test .gpu/bin/kernels_test .gpu/bin/runtime_test; do
        name=$(basename "$t")
        compute-sanitizer --tool memcheck --error-exitcode 9 "$t" --gtest_brief=1 \
          --gtest_filter="$filter" >"$out/memcheck-$name.log" 2>&1
        record "memcheck $name" "rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck-$name.log" | tail -1)"
      done ;;
    racecheck)
      for t in .gpu/bin/kernels_test .gpu/bin/runtime_test; do
        name=$(basename "$t")
        compute-sanitizer --tool racecheck --error-exitcode 9 "$t" --gtest_brief=1 \
          --gtest_filter='*Gpu*:*Conformance*' >"$out/racecheck-$name.log" 2>&1
        record "racecheck $name" "rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/racecheck-$name.log" | tail -1)"
      done ;;
    examples)
      for e in .gpu/bin/*; do
        case "$e" in *_test|*_benchmark|*/mt-server) continue ;; esac
        name=$(basename "$e")
        "$e" >"$out/example-$name.log" 2>&1
        record "example $name" "rc=$?"
      done ;;
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
      pairs=()
      for t in 1 "$cores"; do
        .gpu/bin/cpu_kernels_benchmark --threads="$t" --benchmark_min_time=0.3 \
          --benchmark_out="$out/cpu-mt-$t.json" --benchmark_out_format=json >"$out/cpu-mt-$t.log" 2>&1
        record "cpu_kernels_benchmark threads=$t" "rc=$?"
        /tmp/torch_cpu_peer --threads="$t" --benchmark_min_time=0.3 \
          --benchmark_out="$out/cpu-torch-$t.json" --benchmark_out_format=json >"$out/cpu-torch-$t.log" 2>&1
        record "torch_cpu_peer threads=$t" "rc=$?"
        pairs+=("$t:$out/cpu-mt-$t.json:$out/cpu-torch-$t.json")
      done
      python3 .gpu/src/scripts/cpu-bench-table.py "${pairs[@]}" | tee "$out/cpu-table.md" ;;
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
    benchmarks)
      for b in .gpu/bin/*_benchmark; do
        name=$(basename "$b")
        [ "$name" = cpu_kernels_benchmark ] && continue  # the cpubench step runs it
        "$b" --benchmark_min_time=0.2 >"$out/$name.log" 2>&1
        record "$name" "rc=$?"
        grep -E '^(BM_|Benchmark)' "$out/$name.log"
      done ;;
  esac
done

[ -n "${OUT:-}" ] && tar czf "$OUT/gpu-logs.tgz" -C /tmp mt-gpu-logs
echo
echo "== summary =="
printf '%s\n' "${summary[@]}"
