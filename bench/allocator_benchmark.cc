// BFCAllocator (host sub-allocator) next to malloc/free in the same run:
//   pair/<allocator>/<bytes>   one allocate + deallocate of the same size (ns per pair)
//   mixed/<allocator>          1,000 live blocks of mixed sizes, one freed out of order and
//                              one allocated per iteration (ns per pair)
//   threads/<allocator>        pairs of small mixed sizes on 1, 2, 4, 8 threads at once;
//                              items_per_second is the total, to read throughput scaling
// Targets (issue): pair <= 50 ns on one thread, mixed <= 150 ns, 8 threads >= 4x one thread
// on 16 cores.

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "allocator/bfc_allocator.h"
#include "bench/allocator_bench_util.h"

namespace mt {
namespace {

BFCAllocator& shared_pool() {
  static BFCAllocator* pool = new BFCAllocator({.name = "CPU_0_bfc"}, make_host_sub_allocator());
  return *pool;
}

struct Bfc {
  static void* allocate(size_t bytes) { return shared_pool().allocate(bytes); }
  static void deallocate(void* p) { shared_pool().deallocate(p); }
};

struct Malloc {
  static void* allocate(size_t bytes) { return std::malloc(bytes); }
  static void deallocate(void* p) { std::free(p); }
};

template <typename A>
void pair(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = A::allocate(bytes);
    benchmark::DoNotOptimize(p);
    A::deallocate(p);
  }
  state.SetItemsProcessed(state.iterations());
}

// A fixed random script so both allocators see the same sizes and the same free order.
struct MixedScript {
  static constexpr int kLive = 1000;
  static constexpr int kSteps = 1 << 16;
  std::vector<size_t> sizes;  // log-uniform in [64 B, 256 KiB]
  std::vector<int> slots;     // which live block each step frees

  MixedScript() : sizes(kSteps), slots(kSteps) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> log_size(6.0, 18.0);
    std::uniform_int_distribution<int> slot(0, kLive - 1);
    for (int i = 0; i < kSteps; ++i) {
      sizes[i] = static_cast<size_t>(std::exp2(log_size(rng)));
      slots[i] = slot(rng);
    }
  }
};

template <typename A>
void mixed(benchmark::State& state) {
  static const MixedScript script;
  std::vector<void*> live(MixedScript::kLive);
  for (int i = 0; i < MixedScript::kLive; ++i) live[i] = A::allocate(script.sizes[i]);
  size_t step = 0;
  for (auto _ : state) {
    const size_t i = step++ & (MixedScript::kSteps - 1);
    void*& slot = live[script.slots[i]];
    A::deallocate(slot);
    slot = A::allocate(script.sizes[i]);
    benchmark::DoNotOptimize(slot);
  }
  for (void* p : live) A::deallocate(p);
  state.SetItemsProcessed(state.iterations());
}

template <typename A>
void threads(benchmark::State& state) {
  static constexpr size_t kSizes[] = {256, 1024, 4096, 16384};
  size_t i = 0;
  for (auto _ : state) {
    void* p = A::allocate(kSizes[i++ & 3]);
    benchmark::DoNotOptimize(p);
    A::deallocate(p);
  }
  state.SetItemsProcessed(state.iterations());
}

void register_all() {
  for (int64_t bytes : kPairBytes) {
    benchmark::RegisterBenchmark("pair/bfc", pair<Bfc>)->Arg(bytes);
    benchmark::RegisterBenchmark("pair/malloc", pair<Malloc>)->Arg(bytes);
  }
  benchmark::RegisterBenchmark("mixed/bfc", mixed<Bfc>);
  benchmark::RegisterBenchmark("mixed/malloc", mixed<Malloc>);
  for (int n : {1, 2, 4, 8}) {
    benchmark::RegisterBenchmark("threads/bfc", threads<Bfc>)->Threads(n)->UseRealTime();
    benchmark::RegisterBenchmark("threads/malloc", threads<Malloc>)->Threads(n)->UseRealTime();
  }
}

}  // namespace
}  // namespace mt

int main(int argc, char** argv) { return mt::run_benchmarks(argc, argv, mt::register_all); }
