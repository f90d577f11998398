#!/usr/bin/env bash
# The GPU check, in two halves:
#   scripts/gpu-check.sh bundle   (here) builds for sm_90 and fills .gpu/ with the test,
#                                  example and benchmark binaries plus the shared libraries
#                                  the GPU machine lacks (absl, benchmark, and gRPC,
#                                  protobuf and their dependencies for distributed/);
#   bash .gpu/gpu-run.sh          (there, through the device tool with carry [".gpu"]) runs
#                                  the tests, compute-sanitizer memcheck over the GPU tests,
#                                  the examples and the benchmarks, writes logs under $OUT
#                                  and prints one summary table.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-bundle}" in
  bundle)
    scripts/install-deps.sh
    cmake --preset gpu-sm90 >/dev/null
    cmake --build --preset gpu-sm90 -j "$(nproc)"
    rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
    build=build/gpu-sm90
    find "$build"/tests "$build"/examples "$build"/bench -maxdepth 1 -type f -perm -u+x \
      -exec cp -t .gpu/bin/ {} +
    # distributed/ (when gRPC was found): the task server and the two-process example.
    for p in mt-server remote_guide_example; do
      if [ -x "$build/distributed/$p" ]; then cp "$build/distributed/$p" .gpu/bin/; fi
    done
    strip --strip-unneeded .gpu/bin/*
    for b in .gpu/bin/*; do
      ldd "$b" | awk '/=> \/lib\/x86_64-linux-gnu\/lib(absl|benchmark|gtest|gmock|grpc|gpr|protobuf|upb|address_sorting|re2|cares)/{print $3}'
    done | sort -u | xargs -r -I{} cp -L {} .gpu/lib/
    # gRPC's OpenSSL and zlib: used there only when the machine has none (gpu-run.sh).
    mkdir -p .gpu/lib-fallback
    for b in .gpu/bin/*; do
      ldd "$b" | awk '/=> \/lib\/x86_64-linux-gnu\/lib(ssl|crypto|z)\.so/{print $3}'
    done | sort -u | xargs -r -I{} cp -L {} .gpu/lib-fallback/
    cp scripts/gpu-run.sh .gpu/gpu-run.sh
    # Sources the GPU machine compiles: the libtorch peer of the CPU benchmark.
    mkdir -p .gpu/src/bench/peer .gpu/src/scripts
    cp bench/cpu_bench_util.h .gpu/src/bench/
    cp bench/peer/torch_cpu_peer.cc .gpu/src/bench/peer/
    cp scripts/cpu-bench-table.py .gpu/src/scripts/
    du -sh .gpu
    echo "now run on the GPU machine: bash .gpu/gpu-run.sh  (carry: [\".gpu\"])"
    ;;
  *) echo "usage: scripts/gpu-check.sh [bundle]" >&2; exit 2 ;;
esac
