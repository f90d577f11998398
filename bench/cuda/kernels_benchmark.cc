// GPU kernels against their baselines, measured in the same run with CUDA events (median
// of the repetitions): AddN of 8 x 64 MiB float32 against a device-to-device memcpy
// (bytes read + written, and the fraction of memcpy's rate AddN reaches), and MatMul
// through the kernel registry against raw cublasSgemm on the same handle and math mode
// (4096^3 FP32 and TF32; 256^3 called in a loop, per call). AddV2 and Sum sit beside the
// same memcpy, as memory-bound kernels. Skips without a GPU.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/cuda/cuda_handles.h"
#include "kernels/cuda/gpu_state.h"
#include "kernels/kernel_options.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_def.h"

namespace mt::cuda {
namespace {

// One stream, cuBLAS handle and scratch for the whole run, as a logical device has.
struct BenchGpu {
  std::string error;  // why the benchmarks cannot run; empty when they can
  Stream stream;
  CublasHandle cublas;
  DeviceBuffer scratch;  // kScratchBytes, then the reductions' tickets
  BlasLock blas;
  internal::Mutex scratch_mu;
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
    absl::StatusOr<CublasHandle> h =
        s.ok() ? CublasHandle::create(s->get()) : absl::StatusOr<CublasHandle>(s.status());
    absl::StatusOr<DeviceBuffer> b = DeviceBuffer::create(kScratchBytes + kTicketBytes);
    absl::Status status = register_cuda_kernels(g->registry);
    for (const absl::Status& st : {s.status(), h.status(), b.status(), status}) {
      if (!st.ok() && g->error.empty()) g->error = std::string(st.message());
    }
    if (!g->error.empty()) return g;
    g->stream = *std::move(s);
    g->cublas = *std::move(h);
    g->scratch = *std::move(b);
    g->state = {.physical_device = 0,
                .stream = g->stream.get(),
                .cublas = g->cublas.get(),
                .blas = &g->blas,
                .scratch = g->scratch.get(),
                .scratch_bytes = kScratchBytes,
                .scratch_mu = &g->scratch_mu};
    // The tickets start at zero on the stream, as a logical device's do.
    char* tickets = static_cast<char*>(g->scratch.get()) + kScratchBytes;
    if (cudaMemsetAsync(tickets, 0, kTicketBytes, g->stream.get()) == cudaSuccess) {
      g->state.reduce_tickets = reinterpret_cast<unsigned*>(tickets);
    }
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

// Returns a device buffer of `n` random floats in [-1, 1) (never zeros: they time faster).
DeviceBuffer random_floats(BenchGpu& /*gpu*/, size_t n) {
  std::vector<float> host(n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& x : host) x = dist(rng);
  DeviceBuffer d = *DeviceBuffer::create(n * sizeof(float));
  cudaMemcpy(d.get(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  return d;
}

// Times `ours` once per benchmark iteration and `baseline` as many times after, reports
// the median of each as counters, and returns their ratio baseline / ours.
double run_against(benchmark::State& state, BenchGpu& gpu, const std::function<void()>& ours,
                   const std::function<void()>& baseline) {
  time_ms(gpu, ours);  // warm up both
  time_ms(gpu, baseline);
  std::vector<double> ours_ms, base_ms;
  for (auto _ : state) {
    ours_ms.push_back(time_ms(gpu, ours));
    state.SetIterationTime(ours_ms.back() / 1e3);
  }
  for (size_t i = 0; i < ours_ms.size(); ++i) base_ms.push_back(time_ms(gpu, baseline));
  state.counters["ours_ms"] = median(ours_ms);
  state.counters["baseline_ms"] = median(base_ms);
  return median(base_ms) / median(ours_ms);
}

void BM_AddN8x64MiB(benchmark::State& state) {
  BenchGpu& gpu = bench_gpu();
  if (!gpu.error.empty()) return state.SkipWithError(("no GPU: " + gpu.error).c_str());
  constexpr size_t kElems = size_t{64} << 18, kBytes = kElems * sizeof(float);  // 64 MiB
  constexpr int kInputs = 8;
  std::vector<DeviceBuffer> in;
  for (int k = 0; k < kInputs; ++k) in.push_back(random_floats(gpu, kElems));
  DeviceBuffer out = *DeviceBuffer::create(kBytes);
  DeviceBuffer copy_src = random_floats(gpu, 4 * kElems),
               copy_dst = *DeviceBuffer::create(4 * kBytes);
  const Shape shape = Shape::make({static_cast<int64_t>(kElems)}).value();
  std::vector<TensorArg> args;
  for (const DeviceBuffer& b : in) args.push_back({b.get(), &shape, DType::kFloat32});
  const OpAttrs attrs;
  const KernelContext ctx{args, {out.get(), &shape, DType::kFloat32}, &attrs, &gpu.state};
  KernelFn add_n = gpu.registry.find(OpId::kAddN, DeviceType::kGPU, DType::kFloat32);
  bool failed = false;
  run_against(
      state, gpu, [&] { failed |= !add_n(ctx).ok(); },
      [&] {
        cudaMemcpyAsync(copy_dst.get(), copy_src.get(), 4 * kBytes, cudaMemcpyDeviceToDevice,
                        gpu.stream.get());
      });
  if (failed) return state.SkipWithError("AddN kernel failed");
  const double add_n_bytes = (kInputs + 1) * double(kBytes), copy_bytes = 2 * 4 * double(kBytes);
  const double add_n_rate = add_n_bytes / (state.counters["ours_ms"] / 1e3);
  const double copy_rate = copy_bytes / (state.counters["baseline_ms"] / 1e3);
  state.SetBytesProcessed(int64_t(add_n_bytes) * state.iterations());
  state.counters["add_n_GBps"] = add_n_rate / 1e9;
  state.counters["memcpy_GBps"] = copy_rate / 1e9;
  state.counters["fraction_of_memcpy"] = add_n_rate / copy_rate;
}
BENCHMARK(BM_AddN8x64MiB)
    ->UseManualTime()
    ->Iterations(20)
    ->Repetitions(3)
    ->Unit(benchmark::kMillisecond);

// Runs `op` on random float32 inputs of `shapes` against a memcpy of the largest input, and
// reports both rates (bytes read + written) and their ratio.
void bench_memory_bound(benchmark::State& state, OpId op, const std::vector<Shape>& shapes,
                        const OpAttrs& attrs) {
  BenchGpu& gpu = bench_gpu();
  if (!gpu.error.empty()) return state.SkipWithError(("no GPU: " + gpu.error).c_str());
  std::vector<DeviceBuffer> in;
  std::vector<TensorArg> args;
  std::vector<TensorMeta> metas;
  double bytes = 0, largest = 0;
  for (const Shape& s : shapes) {
    in.push_back(random_floats(gpu, s.num_elements()));
    args.push_back({in.back().get(), &s, DType::kFloat32});
    metas.push_back({&s, DType::kFloat32});
    bytes += s.num_elements() * 4.0;
    largest = std::max(largest, s.num_elements() * 4.0);
  }
  const OutputMeta meta = *infer_output(op, metas, attrs);
  bytes += meta.shape.num_elements() * 4.0;
  DeviceBuffer out = *DeviceBuffer::create(meta.shape.num_elements() * 4);
  DeviceBuffer copy = *DeviceBuffer::create(size_t(largest));
  const KernelContext ctx{args, {out.get(), &meta.shape, DType::kFloat32}, &attrs, &gpu.state};
  KernelFn fn = gpu.registry.find(op, DeviceType::kGPU, DType::kFloat32);
  bool failed = false;
  run_against(
      state, gpu, [&] { failed |= !fn(ctx).ok(); },
      [&] {
        cudaMemcpyAsync(copy.get(), in[0].get(), size_t(largest), cudaMemcpyDeviceToDevice,
                        gpu.stream.get());
      });
  if (failed) return state.SkipWithError("kernel failed");
  const double rate = bytes / (state.counters["ours_ms"] / 1e3);
  const double copy_rate = 2 * largest / (state.counters["baseline_ms"] / 1e3);
  state.counters["GBps"] = rate / 1e9;
  state.counters["memcpy_GBps"] = copy_rate / 1e9;
  state.counters["fraction_of_memcpy"] = rate / copy_rate;
}

// AddV2 of 64 Mi float32: equal shapes, then a row broadcast (8192, 8192) + (8192,).
void BM_AddV2(benchmark::State& state) {
  const int64_t n = 8192;
  const Shape a = Shape::make({n, n}).value();
  const Shape b = state.range(0) == 0 ? a : Shape::make({n}).value();
  bench_memory_bound(state, OpId::kAddV2, {a, b}, OpAttrs{});
}
BENCHMARK(BM_AddV2)
    ->ArgName("broadcast")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

// Sum of 64 Mi float32 viewed as (rows, 64 Mi / rows): over everything (axis -1), over
// rows' elements (axis 1) or down columns (axis 0).
void BM_Sum(benchmark::State& state) {
  const int64_t rows = state.range(0), axis = state.range(1), all = state.range(2);
  const Shape in = Shape::make({rows, (int64_t{64} << 20) / rows}).value();
  OpAttrs attrs;
  attrs.axes = {axis};
  attrs.reduce_all = all != 0;
  bench_memory_bound(state, OpId::kSum, {in}, attrs);
}
BENCHMARK(BM_Sum)
    ->ArgNames({"rows", "axis", "all"})
    ->Args({8192, 0, 1})
    ->Args({8192, 1, 0})
    ->Args({8192, 0, 0})
    ->Args({64, 1, 0})
    ->Args({1 << 20, 0, 0})
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

// MatMul n^3 float32 through the registry against raw cublasSgemm, `calls` per timing;
// state.range(1) turns TensorFloat-32 on.
void BM_MatMul(benchmark::State& state) {
  BenchGpu& gpu = bench_gpu();
  if (!gpu.error.empty()) return state.SkipWithError(("no GPU: " + gpu.error).c_str());
  const int64_t n = state.range(0);
  const bool tf32 = state.range(1) != 0;
  const int calls = n <= 512 ? 100 : 1;
  internal::set_tf32_enabled(tf32);
  DeviceBuffer a = random_floats(gpu, n * n), b = random_floats(gpu, n * n);
  DeviceBuffer c = *DeviceBuffer::create(n * n * sizeof(float));
  const Shape shape = Shape::make({n, n}).value();
  const TensorArg args[2] = {{a.get(), &shape, DType::kFloat32},
                             {b.get(), &shape, DType::kFloat32}};
  const OpAttrs attrs;
  const KernelContext ctx{args, {c.get(), &shape, DType::kFloat32}, &attrs, &gpu.state};
  KernelFn matmul = gpu.registry.find(OpId::kMatMul, DeviceType::kGPU, DType::kFloat32);
  const float one = 1, zero = 0;
  bool failed = false;
  const double ratio = run_against(
      state, gpu,
      [&] {
        for (int i = 0; i < calls; ++i) failed |= !matmul(ctx).ok();
      },
      [&] {
        cublasSetMathMode(gpu.cublas.get(),
                          tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
        for (int i = 0; i < calls; ++i) {
          cublasSgemm(gpu.cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                      static_cast<const float*>(b.get()), n, static_cast<const float*>(a.get()), n,
                      &zero, static_cast<float*>(c.get()), n);
        }
      });
  internal::set_tf32_enabled(false);
  if (failed) return state.SkipWithError("MatMul kernel failed");
  const double flops = 2.0 * n * n * n * calls;
  state.counters["TFLOPs"] = flops / (state.counters["ours_ms"] / 1e3) / 1e12;
  state.counters["cublas_TFLOPs"] = flops / (state.counters["baseline_ms"] / 1e3) / 1e12;
  state.counters["us_per_call"] = state.counters["ours_ms"] * 1e3 / calls;
  state.counters["fraction_of_cublas"] = ratio;
}
BENCHMARK(BM_MatMul)
    ->ArgNames({"n", "tf32"})
    ->Args({4096, 0})
    ->Args({4096, 1})
    ->Args({256, 0})
    ->UseManualTime()
    ->Iterations(10)
    ->Repetitions(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mt::cuda

BENCHMARK_MAIN();
