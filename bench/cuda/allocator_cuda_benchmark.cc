// alloc+free pairs on a GPU pool (BFCAllocator over cudaMalloc) next to raw cudaMalloc/
// cudaFree and cudaMallocAsync/cudaFreeAsync on a warm stream-ordered pool, in one run:
//   pair/<allocator>/<bytes>   ns per pair
// Every benchmark reports an error and skips without a CUDA device.

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "allocator/pools.h"
#include "bench/allocator_bench_util.h"

namespace mt {
namespace {

bool have_gpu() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return count > 0;
}

// The GPU pool in default mode: its first allocation reserves the whole 2 GiB limit.
Allocator* gpu_pool() {
  static Allocator* pool = [] {
    auto made =
        make_gpu_pool({.logical_index = 0, .physical_gpu = 0, .limit_bytes = int64_t{2} << 30});
    return made.ok() ? std::move(made).value().release() : nullptr;
  }();
  return pool;
}

void pair_pool(benchmark::State& state) {
  Allocator* pool = have_gpu() ? gpu_pool() : nullptr;
  if (pool == nullptr) return state.SkipWithError("no CUDA device");
  const size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = pool->allocate(bytes);
    benchmark::DoNotOptimize(p);
    pool->deallocate(p);
  }
  state.SetItemsProcessed(state.iterations());
}

void pair_cuda_malloc(benchmark::State& state) {
  if (!have_gpu()) return state.SkipWithError("no CUDA device");
  const size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) return state.SkipWithError("cudaMalloc failed");
    cudaFree(p);
  }
  state.SetItemsProcessed(state.iterations());
}

// cudaMallocAsync on the device's default pool with a release threshold that keeps freed
// memory in the pool (warm), enqueued on one stream; the loop syncs once at the end.
void pair_cuda_malloc_async(benchmark::State& state) {
  if (!have_gpu()) return state.SkipWithError("no CUDA device");
  static cudaStream_t stream = [] {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaMemPool_t mempool;
    cudaDeviceGetDefaultMemPool(&mempool, 0);
    uint64_t threshold = UINT64_MAX;
    cudaMemPoolSetAttribute(mempool, cudaMemPoolAttrReleaseThreshold, &threshold);
    return s;
  }();
  const size_t bytes = static_cast<size_t>(state.range(0));
  void* warm = nullptr;
  cudaMallocAsync(&warm, bytes, stream);
  cudaFreeAsync(warm, stream);
  cudaStreamSynchronize(stream);
  for (auto _ : state) {
    void* p = nullptr;
    cudaMallocAsync(&p, bytes, stream);
    cudaFreeAsync(p, stream);
  }
  if (cudaStreamSynchronize(stream) != cudaSuccess) state.SkipWithError("stream failed");
  state.SetItemsProcessed(state.iterations());
}

void register_all() {
  for (int64_t bytes : kPairBytes) {
    benchmark::RegisterBenchmark("pair/gpu_pool", pair_pool)->Arg(bytes);
    benchmark::RegisterBenchmark("pair/cudaMalloc", pair_cuda_malloc)->Arg(bytes);
    benchmark::RegisterBenchmark("pair/cudaMallocAsync", pair_cuda_malloc_async)->Arg(bytes);
  }
}

}  // namespace
}  // namespace mt

int main(int argc, char** argv) { return mt::run_benchmarks(argc, argv, mt::register_all); }
