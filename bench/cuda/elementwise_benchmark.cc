// The element-wise GPU kernels of issue 19 against a device-to-device cudaMemcpy of the same
// bytes (read + written), timed with CUDA events in the same run (median of the iterations):
// Sqrt (unary) and Maximum (binary) on 64 MiB inputs of float32 and bfloat16. The counter
// fraction_of_memcpy is the kernel's rate over memcpy's (the target is >= 0.85). Skips
// without a GPU.
//
//   build/default/bench/elementwise_benchmark --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/cuda/cuda_handles.h"
#include "core/half.h"
#include "kernels/cuda/gpu_state.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_def.h"

namespace mt::cuda {
namespace {

// One stream for the whole run; the element-wise kernels need nothing else.
struct BenchGpu {
  std::string error;  // why the benchmarks cannot run; empty when they can
  Stream stream;
  GpuState state;
  KernelRegistry registry;
};

BenchGpu& bench_gpu() {
  static BenchGpu* gpu = [] {
    auto* g = new BenchGpu;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      g->error = e != cudaSuccess ? cudaGetErrorString(e) : "no GPU visible";
      return g;
    }
    absl::StatusOr<Stream> s = Stream::create();
    const absl::Status status = s.ok() ? register_cuda_kernels(g->registry) : s.status();
    if (!status.ok()) {
      g->error = std::string(status.message());
      return g;
    }
    g->stream = *std::move(s);
    g->state = {.physical_device = 0, .stream = g->stream.get()};
    cudaDeviceGetAttribute(&g->state.num_sms, cudaDevAttrMultiProcessorCount, 0);
    return g;
  }();
  return *gpu;
}

// Returns the milliseconds `enqueue` takes on the stream, timed with events.
double time_ms(BenchGpu& gpu, const std::function<void()>& enqueue) {
  static Event start = *Event::create(), stop = *Event::create();
  cudaEventRecord(start.get(), gpu.stream.get());
  enqueue();
  cudaEventRecord(stop.get(), gpu.stream.get());
  cudaEventSynchronize(stop.get());
  float ms = 0;
  cudaEventElapsedTime(&ms, start.get(), stop.get());
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Returns a device buffer of `n` random values of `dtype` (float32 or bfloat16) in [0.5, 2):
// positive, so that Sqrt does its real work.
DeviceBuffer random_values(DType dtype, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.5f, 2.f);
  const size_t bytes = n * dtype_size(dtype);
  std::vector<char> host(bytes);
  for (size_t i = 0; i < n; ++i) {
    const float x = dist(rng);
    if (dtype == DType::kBFloat16) {
      reinterpret_cast<bfloat16*>(host.data())[i] = bfloat16(x);
    } else {
      reinterpret_cast<float*>(host.data())[i] = x;
    }
  }
  DeviceBuffer d = *DeviceBuffer::create(bytes);
  cudaMemcpy(d.get(), host.data(), bytes, cudaMemcpyHostToDevice);
  return d;
}

// Runs `op` on `arity` inputs of 64 MiB each against a memcpy that reads and writes as many
// bytes as the op (inputs + output), and reports both rates and their ratio.
void bench_op(benchmark::State& state, OpId op, int arity, DType dtype) {
  BenchGpu& gpu = bench_gpu();
  if (!gpu.error.empty()) return state.SkipWithError(("no GPU: " + gpu.error).c_str());
  constexpr size_t kBytes = size_t{64} << 20;
  const size_t n = kBytes / dtype_size(dtype);
  const Shape shape = Shape::make({static_cast<int64_t>(n)}).value();
  std::vector<DeviceBuffer> in;
  std::vector<TensorArg> args;
  for (int k = 0; k < arity; ++k) {
    in.push_back(random_values(dtype, n, 42 + k));
    args.push_back({in.back().get(), &shape, dtype});
  }
  DeviceBuffer out = *DeviceBuffer::create(kBytes);
  const size_t moved = (arity + 1) * kBytes;  // read + written by the op
  DeviceBuffer copy_src = *DeviceBuffer::create(moved / 2),
               copy_dst = *DeviceBuffer::create(moved / 2);
  cudaMemset(copy_src.get(), 0, moved / 2);
  const OpAttrs attrs;
  const KernelContext ctx{args, {out.get(), &shape, dtype}, &attrs, &gpu.state};
  const KernelFn fn = gpu.registry.find(op, DeviceType::kGPU, dtype);
  if (fn == nullptr) return state.SkipWithError("no GPU kernel");
  bool failed = false;
  auto ours = [&] { failed |= !fn(ctx).ok(); };
  auto baseline = [&] {
    cudaMemcpyAsync(copy_dst.get(), copy_src.get(), moved / 2, cudaMemcpyDeviceToDevice,
                    gpu.stream.get());
  };
  time_ms(gpu, ours);  // warm up both
  time_ms(gpu, baseline);
  std::vector<double> ours_ms, base_ms;
  for (auto _ : state) {
    ours_ms.push_back(time_ms(gpu, ours));
    state.SetIterationTime(ours_ms.back() / 1e3);
  }
  for (size_t i = 0; i < ours_ms.size(); ++i) base_ms.push_back(time_ms(gpu, baseline));
  if (failed) return state.SkipWithError("kernel failed");
  const double rate = moved / (median(ours_ms) / 1e3), copy_rate = moved / (median(base_ms) / 1e3);
  state.SetBytesProcessed(int64_t(moved) * state.iterations());
  state.counters["ours_ms"] = median(ours_ms);
  state.counters["memcpy_ms"] = median(base_ms);
  state.counters["GBps"] = rate / 1e9;
  state.counters["memcpy_GBps"] = copy_rate / 1e9;
  state.counters["fraction_of_memcpy"] = rate / copy_rate;
}

void BM_Sqrt(benchmark::State& state) {
  bench_op(state, OpId::kSqrt, 1, static_cast<DType>(state.range(0)));
}
void BM_Maximum(benchmark::State& state) {
  bench_op(state, OpId::kMaximum, 2, static_cast<DType>(state.range(0)));
}
void BM_Pow(benchmark::State& state) {  // kCostly: compute-heavier, still near memory speed
  bench_op(state, OpId::kPow, 2, static_cast<DType>(state.range(0)));
}

// The argument is the DType: 0 float32, 5 bfloat16.
constexpr int kFloat32 = static_cast<int>(DType::kFloat32);
constexpr int kBFloat16 = static_cast<int>(DType::kBFloat16);
BENCHMARK(BM_Sqrt)
    ->ArgName("dtype")
    ->Arg(kFloat32)
    ->Arg(kBFloat16)
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Maximum)
    ->ArgName("dtype")
    ->Arg(kFloat32)
    ->Arg(kBFloat16)
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pow)
    ->ArgName("dtype")
    ->Arg(kFloat32)
    ->Arg(kBFloat16)
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mt::cuda

BENCHMARK_MAIN();
