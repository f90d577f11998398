// bfloat16 and float16 on GPU:0 against raw CUDA in the same run, timed with CUDA events
// on the device's stream, each iteration timing ours then the baseline (medians):
// - mt::matmul at 256, 4096 and 8192 against cublasGemmEx with the same settings (2-byte
//   inputs and output, CUBLAS_COMPUTE_32F, default math (tensor cores) with reduced-precision
//   reductions disallowed, as kernels/cuda/matmul_kernels.cu runs it) on the same handle,
//   in TFLOP/s, with fraction_of_cublas and fraction_of_peak (the card's dense bf16/fp16
//   peak from NVIDIA's datasheets, by device name; 0 when the card is not in the table);
// - mt::add_n of 8 x 64 MiB bfloat16 and mt::reduce_sum over 64 MiB bfloat16 against a
//   device-to-device cudaMemcpy, all in GB/s counting every byte read plus every byte
//   written once, with fraction_of_memcpy. The memcpy beside AddN moves as many bytes as
//   AddN does (288 MiB copied: 576 MiB read + written); the one beside the sum copies its
//   64 MiB input.
// Skips without a GPU. scripts/gpu-run.sh (step `halfbench`) runs it beside libtorch.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/cuda/gpu_bench_util.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/eager/context.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/minitensor.h"

namespace mt {
namespace {

using bench::dense_peak_tflops;
using bench::gpu0;
using bench::median;

constexpr int64_t kHalfElements = int64_t{32} << 20;  // 64 MiB of a 2-byte dtype

// Times `reps` calls of `ours`, then of `baseline`, with events on `stream` in every
// iteration; reports ours as the manual time and sets the counters ours_us and
// baseline_us (median microseconds per call).
void time_pair(benchmark::State& state, cudaStream_t stream, int reps,
               const std::function<void()>& ours, const std::function<void()>& baseline) {
  bench::StreamTimer timer(stream);
  timer.us_per_call(reps, ours);  // warm up both (cuBLAS heuristics, the memory pool)
  timer.us_per_call(reps, baseline);
  std::vector<double> ours_us, base_us;
  for (auto _ : state) {
    ours_us.push_back(timer.us_per_call(reps, ours));
    state.SetIterationTime(ours_us.back() / 1e6);
    base_us.push_back(timer.us_per_call(reps, baseline));
  }
  state.counters["ours_us"] = median(ours_us);
  state.counters["baseline_us"] = median(base_us);
}

// Returns a tensor of `shape` and `dtype` on the current device (GPU:0) with values uniform
// in [-1, 1) (not constant: constant data draws less power and times faster on tensor
// cores).
Tensor random_tensor(std::vector<int64_t> shape, DType dtype, unsigned seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> values(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& x : values) x = dist(rng);
  return constant(values, shape, dtype);
}

// The cuBLAS type of a 2-byte dtype.
cudaDataType_t cuda_type(DType dtype) {
  return dtype == DType::kBFloat16 ? CUDA_R_16BF : CUDA_R_16F;
}

// Args: dtype (0 bfloat16, 1 float16) and n, for n x n times n x n.
void BM_MatMulHalf(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  const DType dtype = state.range(0) == 0 ? DType::kBFloat16 : DType::kFloat16;
  const int n = static_cast<int>(state.range(1));
  DeviceScope scope("/GPU:0");
  Tensor a = random_tensor({n, n}, dtype, 1), b = random_tensor({n, n}, dtype, 2);
  Tensor c = zeros({n, n}, dtype);
  if (a.device() != c.device() || c.device().find("GPU") == std::string::npos) {
    return state.SkipWithError(("operands not on the GPU: " + a.device()).c_str());
  }
  auto* gpu_state = static_cast<cuda::GpuState*>(gpu->kernel_state());
  {  // both sides run in MatMul's mode for 2-byte dtypes (set once, as the kernel does)
    const auto mode = static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                                CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    internal::MutexLock lock(&gpu_state->blas->mu);
    gpu_state->blas->math_mode = mode;
    cublasSetMathMode(gpu_state->cublas, mode);
  }
  const float one = 1, zero = 0;
  const cudaDataType_t type = cuda_type(dtype);
  bool raw_failed = false;
  time_pair(
      state, gpu->stream(), n <= 512 ? 200 : 10,
      [&] {
        Tensor out = matmul(a, b);
        benchmark::DoNotOptimize(out.impl());
      },
      [&] {  // row-major C = A B as column-major C^T = B^T A^T
        raw_failed |=
            cublasGemmEx(gpu_state->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b.impl()->data,
                         type, n, a.impl()->data, type, n, &zero, c.impl()->data, type, n,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS;
      });
  if (raw_failed) return state.SkipWithError("cublasGemmEx failed");
  std::string name;
  const double peak = dense_peak_tflops(&name);
  const double tflop = 2.0 * n * n * n / 1e12;
  const double ours = tflop / (state.counters["ours_us"] / 1e6);
  const double raw = tflop / (state.counters["baseline_us"] / 1e6);
  state.SetLabel(std::string(dtype_name(dtype)) + " " + name);
  state.counters["TFLOPs"] = ours;
  state.counters["cublas_TFLOPs"] = raw;
  state.counters["peak_TFLOPs"] = peak;
  state.counters["fraction_of_cublas"] = ours / raw;
  state.counters["fraction_of_peak"] = peak > 0 ? ours / peak : 0;
}
BENCHMARK(BM_MatMulHalf)
    ->ArgNames({"dtype", "n"})
    ->ArgsProduct({{0, 1}, {256, 4096, 8192}})
    ->UseManualTime()
    ->Iterations(10)
    ->Unit(benchmark::kMicrosecond);

// Sets GBps, memcpy_GBps and fraction_of_memcpy from the bytes each side moves.
void set_rates(benchmark::State& state, double ours_bytes, double copy_bytes) {
  const double ours = ours_bytes / state.counters["ours_us"] / 1e3;
  const double copy = copy_bytes / state.counters["baseline_us"] / 1e3;
  state.counters["GBps"] = ours;
  state.counters["memcpy_GBps"] = copy;
  state.counters["fraction_of_memcpy"] = ours / copy;
}

void BM_AddN8x64MiBBFloat16(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  constexpr int kInputs = 8;
  constexpr double kBytes = (kInputs + 1) * kHalfElements * 2.0;  // 8 read, 1 written
  DeviceScope scope("/GPU:0");
  std::vector<Tensor> in;
  for (int k = 0; k < kInputs; ++k)
    in.push_back(random_tensor({kHalfElements}, DType::kBFloat16, k));
  const size_t copy_bytes = size_t(kBytes / 2);  // as many bytes moved as AddN moves
  Tensor from = zeros({int64_t(copy_bytes / 4)}, DType::kInt32);
  Tensor to = zeros({int64_t(copy_bytes / 4)}, DType::kInt32);
  time_pair(
      state, gpu->stream(), 5,
      [&] {
        Tensor s = add_n(in);
        benchmark::DoNotOptimize(s.impl());
      },
      [&] {
        cudaMemcpyAsync(to.impl()->data, from.impl()->data, copy_bytes, cudaMemcpyDeviceToDevice,
                        gpu->stream());
      });
  set_rates(state, kBytes, 2.0 * copy_bytes);
}
BENCHMARK(BM_AddN8x64MiBBFloat16)->UseManualTime()->Iterations(20)->Unit(benchmark::kMicrosecond);

// Sum of all 32 Mi bfloat16 elements (accumulated in float32) to one bfloat16.
void BM_ReduceSum64MiBBFloat16(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  DeviceScope scope("/GPU:0");
  Tensor x = random_tensor({kHalfElements}, DType::kBFloat16, 1);
  Tensor copy = zeros({kHalfElements}, DType::kBFloat16);
  const size_t bytes = kHalfElements * 2;
  time_pair(
      state, gpu->stream(), 10,
      [&] {
        Tensor s = reduce_sum(x);
        benchmark::DoNotOptimize(s.impl());
      },
      [&] {
        cudaMemcpyAsync(copy.impl()->data, x.impl()->data, bytes, cudaMemcpyDeviceToDevice,
                        gpu->stream());
      });
  set_rates(state, bytes + 2.0, 2.0 * bytes);
}
BENCHMARK(BM_ReduceSum64MiBBFloat16)
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mt

BENCHMARK_MAIN();
