// The CUDA random fill (kernels/cuda/random_kernels.h) against a device-to-device cudaMemcpy
// at 64 MiB of output, in GB/s counting every byte read plus every byte written once (the
// fill only writes), with fraction_of_memcpy; the target for float32 uniform is 0.8.
// Uses GPU 0 directly, without the runtime.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/random_kernels.h"

namespace mt {
namespace {

constexpr int64_t kBytes = int64_t{64} << 20;

// Returns the mean microseconds per call of `reps` calls of `body` on `stream`.
template <typename Body>
double us_per_call(cudaStream_t stream, int reps, Body&& body) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  body();  // warm up
  cudaEventRecord(start, stream);
  for (int i = 0; i < reps; ++i) body();
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms * 1e3 / reps;
}

void BM_RandomFill(benchmark::State& state, RandomDistribution dist, DType dtype) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    state.SkipWithError("needs a GPU: none is visible");
    return;
  }
  void *a = nullptr, *b = nullptr;
  cudaMalloc(&a, kBytes);
  cudaMalloc(&b, kBytes);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  const int64_t n = kBytes / dtype_size(dtype);
  const PhiloxSeed seed = stateless_philox_seed(1, 2);
  double fill_us = 0, copy_us = 0;
  for (auto _ : state) {
    fill_us = us_per_call(stream, 50, [&] {
      if (!cuda::launch_random_fill(dist, dtype, seed, a, n, stream).ok())
        state.SkipWithError("launch");
    });
    copy_us = us_per_call(stream, 50,
                          [&] { cudaMemcpyAsync(b, a, kBytes, cudaMemcpyDeviceToDevice, stream); });
    state.SetIterationTime(fill_us * 1e-6);
  }
  state.counters["GBps"] = kBytes / fill_us * 1e-3;
  state.counters["memcpy_GBps"] = 2.0 * kBytes / copy_us * 1e-3;
  state.counters["fraction_of_memcpy"] = (kBytes / fill_us) / (2.0 * kBytes / copy_us);
  cudaStreamDestroy(stream);
  cudaFree(a);
  cudaFree(b);
}

BENCHMARK_CAPTURE(BM_RandomFill, uniform_float32, RandomDistribution::kUniform, DType::kFloat32)
    ->UseManualTime()
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_RandomFill, uniform_bfloat16, RandomDistribution::kUniform, DType::kBFloat16)
    ->UseManualTime()
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_RandomFill, uniform_float64, RandomDistribution::kUniform, DType::kFloat64)
    ->UseManualTime()
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_RandomFill, normal_float32, RandomDistribution::kNormal, DType::kFloat32)
    ->UseManualTime()
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_RandomFill, normal_float64, RandomDistribution::kNormal, DType::kFloat64)
    ->UseManualTime()
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_RandomFill, truncated_normal_float32, RandomDistribution::kTruncatedNormal,
                  DType::kFloat32)
    ->UseManualTime()
    ->Iterations(3);

}  // namespace
}  // namespace mt

BENCHMARK_MAIN();
