// The CUDA random fill (kernels/cuda/random_kernels.h) against a device-to-device cudaMemcpy
// at 64 MiB of output, in GB/s counting every byte read plus every byte written once (the
// fill only writes), with fraction_of_memcpy; the target for float32 uniform is 0.8.
// The fill uses GPU 0 directly, without the runtime; BM_RandomUniformOp times the op through
// the runtime on GPU:0 (mt::random::uniform, allocation and launch included), with the
// default [0, 1) (the fill alone) and with [-1, 2) (the fill plus the scaling pass of Note
// [Random ops]), against a device-to-device cudaMemcpy of the same bytes on the same stream.
//   build/default/bench/random_benchmark --benchmark_filter=RandomUniformOp
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "bench/cuda/gpu_bench_util.h"
#include "kernels/cuda/random_kernels.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/minitensor.h"

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

// mt::random::uniform of 64 MiB of float32 on GPU:0 through the runtime.
void BM_RandomUniformOp(benchmark::State& state, double minval, double maxval) {
  internal::CudaDevice* gpu = bench::gpu0(state);
  if (gpu == nullptr) return;
  DeviceScope scope("/GPU:0");
  const int64_t n = kBytes / 4;
  Tensor src = zeros({n}), dst = zeros({n});
  bench::StreamTimer timer(gpu->stream());
  auto op = [&] {
    Tensor t = random::uniform({n}, minval, maxval);
    benchmark::DoNotOptimize(t.impl());
  };
  auto copy = [&] {
    cudaMemcpyAsync(dst.impl()->data, src.impl()->data, kBytes, cudaMemcpyDeviceToDevice,
                    gpu->stream());
  };
  op();  // warm up: the allocator keeps the block for the next calls
  copy();
  cudaStreamSynchronize(gpu->stream());
  double op_us = 0, copy_us = 0;
  for (auto _ : state) {
    op_us = timer.us_per_call(20, op);
    copy_us = timer.us_per_call(20, copy);
    state.SetIterationTime(op_us * 1e-6);
  }
  state.counters["GBps"] = kBytes / op_us * 1e-3;
  state.counters["memcpy_GBps"] = 2.0 * kBytes / copy_us * 1e-3;
  state.counters["fraction_of_memcpy"] = (kBytes / op_us) / (2.0 * kBytes / copy_us);
}

BENCHMARK_CAPTURE(BM_RandomUniformOp, float32_0_1, 0.0, 1.0)->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_RandomUniformOp, float32_m1_2, -1.0, 2.0)->UseManualTime()->Iterations(3);

}  // namespace
}  // namespace mt

BENCHMARK_MAIN();
