#pragma once
// What the host and GPU allocator benchmarks share, so that their pair/<allocator>/<bytes>
// rows line up: the block sizes of those rows, and the main of a benchmark that registers
// its cases at run time.
//
//   for (int64_t bytes : kPairBytes) benchmark::RegisterBenchmark("pair/x", pair_x)->Arg(bytes);
//   int main(int argc, char** argv) { return mt::run_benchmarks(argc, argv, mt::register_all); }

#include <benchmark/benchmark.h>

#include <cstdint>

namespace mt {

// The sizes of one allocate + deallocate pair: 256 B, 64 KiB, 1 MiB and 64 MiB.
inline constexpr int64_t kPairBytes[] = {256, int64_t{64} << 10, int64_t{1} << 20,
                                         int64_t{64} << 20};

// Calls `register_all`, then runs the benchmarks that Google Benchmark's flags in `argv`
// select; returns main's exit code.
inline int run_benchmarks(int argc, char** argv, void (*register_all)()) {
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace mt
