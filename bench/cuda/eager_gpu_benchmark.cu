// The eager path on GPU:0 against raw CUDA in the same run: mt::add of two 1-element
// tensors against an empty kernel launch (host time per op, back to back); mt::matmul at
// 4096^3 (FP32 and TF32) and 256^3 in a loop against raw cublasSgemm with the same math
// mode; mt::add_n of 8 x 64 MiB against a device-to-device memcpy; a CPU tensor copied to
// the GPU against cudaMemcpyAsync from pinned memory. Device times use CUDA events on the
// device's own stream. Skips without a GPU.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "bench/cuda/gpu_bench_util.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/eager/context.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/minitensor.h"

namespace mt {
namespace {

__global__ void empty_kernel() {}

using bench::gpu0;

// Times `body` with events on `stream`; reports the time per iteration as manual time.
void time_on_stream(benchmark::State& state, cudaStream_t stream, int reps,
                    const std::function<void()>& body) {
  bench::StreamTimer timer(stream);
  body();  // warm up
  cudaStreamSynchronize(stream);
  for (auto _ : state) state.SetIterationTime(timer.us_per_call(reps, body) / 1e6);
}

void BM_Baseline_EmptyKernelLaunch(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  for (auto _ : state) empty_kernel<<<1, 1, 0, gpu->stream()>>>();
  cudaStreamSynchronize(gpu->stream());
}
BENCHMARK(BM_Baseline_EmptyKernelLaunch);

void BM_AddScalarTensors_Gpu_EndToEnd(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  DeviceScope scope("/GPU:0");
  Tensor a = constant({1.f}), b = constant({2.f});
  for (auto _ : state) {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  cudaStreamSynchronize(gpu->stream());
}
BENCHMARK(BM_AddScalarTensors_Gpu_EndToEnd);

void matmul_pair(benchmark::State& state, bool raw) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  const int n = static_cast<int>(state.range(0));
  const bool tf32 = state.range(1) != 0;
  config::enable_tensor_float_32_execution(tf32);
  DeviceScope scope("/GPU:0");
  Tensor a = fill({n, n}, 0.5), b = fill({n, n}, 0.25);
  cudaStream_t stream = gpu->stream();
  cuda::GpuState* gpu_state = static_cast<cuda::GpuState*>(gpu->kernel_state());
  cublasHandle_t handle = gpu_state->cublas;
  std::vector<Tensor> keep;
  const int reps = n >= 2048 ? 5 : 100;
  const float one = 1, zero = 0;
  Tensor c = zeros({n, n});
  // The raw loop sets the math mode once, as a caller owning the handle would (the eager
  // kernel also sets it only when it changes).
  if (raw) {
    internal::MutexLock lock(&gpu_state->blas->mu);
    gpu_state->blas->math_mode = tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
    cublasSetMathMode(handle, gpu_state->blas->math_mode);
  }
  auto body = [&] {
    if (raw) {
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                  static_cast<const float*>(b.impl()->data), n,
                  static_cast<const float*>(a.impl()->data), n, &zero,
                  static_cast<float*>(c.impl()->data), n);
    } else {
      Tensor out = matmul(a, b);
      benchmark::DoNotOptimize(out.impl());
    }
  };
  time_on_stream(state, stream, reps, body);
  state.counters["TFLOP/s"] = benchmark::Counter(
      2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  config::enable_tensor_float_32_execution(false);
}
void BM_Baseline_RawSgemm(benchmark::State& state) { matmul_pair(state, true); }
void BM_MatMul_Eager(benchmark::State& state) { matmul_pair(state, false); }
BENCHMARK(BM_Baseline_RawSgemm)->Args({4096, 0})->Args({4096, 1})->Args({256, 0})->UseManualTime();
BENCHMARK(BM_MatMul_Eager)->Args({4096, 0})->Args({4096, 1})->Args({256, 0})->UseManualTime();

constexpr int64_t kAddNElements = int64_t{16} << 20;  // 64 MiB of float32

void BM_Baseline_MemcpyD2D_64MiB(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  DeviceScope scope("/GPU:0");
  Tensor src = ones({kAddNElements}), dst = zeros({kAddNElements});
  const size_t bytes = kAddNElements * 4;
  time_on_stream(state, gpu->stream(), 10, [&] {
    cudaMemcpyAsync(dst.impl()->data, src.impl()->data, bytes, cudaMemcpyDeviceToDevice,
                    gpu->stream());
  });
  state.SetBytesProcessed(state.iterations() * 2 * bytes);  // read + written
}
BENCHMARK(BM_Baseline_MemcpyD2D_64MiB)->UseManualTime();

void BM_AddN_8x64MiB_Eager(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  DeviceScope scope("/GPU:0");
  std::vector<Tensor> inputs;
  for (int i = 0; i < 8; ++i) inputs.push_back(fill({kAddNElements}, i));
  time_on_stream(state, gpu->stream(), 10, [&] {
    Tensor s = add_n(inputs);
    benchmark::DoNotOptimize(s.impl());
  });
  state.SetBytesProcessed(state.iterations() * 9 * kAddNElements * 4);  // 8 read + 1 written
}
BENCHMARK(BM_AddN_8x64MiB_Eager)->UseManualTime();

void BM_Baseline_HostToDevicePinned_64MiB(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  const size_t bytes = kAddNElements * 4;
  void* host = nullptr;
  cudaHostAlloc(&host, bytes, cudaHostAllocPortable);
  DeviceScope scope("/GPU:0");
  Tensor dst = zeros({kAddNElements});
  time_on_stream(state, gpu->stream(), 5, [&] {
    cudaMemcpyAsync(dst.impl()->data, host, bytes, cudaMemcpyHostToDevice, gpu->stream());
  });
  state.SetBytesProcessed(state.iterations() * bytes);
  cudaFreeHost(host);
}
BENCHMARK(BM_Baseline_HostToDevicePinned_64MiB)->UseManualTime();

void BM_CpuTensorToGpu_64MiB_Eager(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  Tensor host;
  {
    DeviceScope cpu("/CPU:0");
    host = ones({kAddNElements});
  }
  DeviceScope scope("/GPU:0");
  time_on_stream(state, gpu->stream(), 5, [&] {
    Tensor t = identity(host);
    benchmark::DoNotOptimize(t.impl());
  });
  state.SetBytesProcessed(state.iterations() * kAddNElements * 4);
}
BENCHMARK(BM_CpuTensorToGpu_64MiB_Eager)->UseManualTime();

}  // namespace
}  // namespace mt

BENCHMARK_MAIN();
