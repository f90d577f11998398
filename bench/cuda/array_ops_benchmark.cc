// GPU kernels of the array ops against a device-to-device cudaMemcpy of the same bytes
// (each writes what it reads once), timed in the same run with CUDA events (median of the
// repetitions): Transpose of 4096 x 4096 float32 and bfloat16 (the tiled path), ConcatV2
// of two 32 MiB halves along the last axis, GatherV2 of 64 MiB of 4 KiB rows in random
// order and BroadcastTo of one 16 KiB row to 64 MiB. The counter `vs_memcpy` is memcpy's
// time over ours: 1 is memcpy's bandwidth. Skips without a GPU.
//
//   build/default/bench/array_ops_benchmark --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/cuda/cuda_handles.h"
#include "kernels/cuda/gpu_state.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_def.h"

namespace mt::cuda {
namespace {

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
    absl::Status status = s.ok() ? register_cuda_kernels(g->registry) : s.status();
    if (!status.ok()) {
      g->error = std::string(status.message());
      return g;
    }
    g->stream = *std::move(s);
    g->state.stream = g->stream.get();
    cudaDeviceGetAttribute(&g->state.num_sms, cudaDevAttrMultiProcessorCount, 0);
    return g;
  }();
  return *gpu;
}

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

// Runs the kernel of `op` on `inputs` (device buffers of `shapes`) into an output of
// `out_shape`, once per iteration, then a memcpy of the output's bytes as many times;
// reports both medians, the GB/s moved (read + written) and vs_memcpy.
void run_op(benchmark::State& state, OpId op, DType dtype, std::vector<Shape> shapes,
            const OpAttrs& attrs, std::vector<DeviceBuffer>* extra_inputs = nullptr,
            DType index_dtype = DType::kInt32) {
  BenchGpu& gpu = bench_gpu();
  if (!gpu.error.empty()) return state.SkipWithError(("no GPU: " + gpu.error).c_str());
  std::vector<TensorMeta> metas;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const bool index = extra_inputs != nullptr && i == 1;
    metas.push_back({&shapes[i], index ? index_dtype : dtype});
  }
  absl::StatusOr<OutputMeta> meta = infer_output(op, metas, attrs);
  if (!meta.ok()) return state.SkipWithError(std::string(meta.status().message()).c_str());
  std::vector<DeviceBuffer> bufs;
  std::vector<TensorArg> args;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (extra_inputs != nullptr && i == 1) {
      args.push_back({(*extra_inputs)[0].get(), &shapes[i], index_dtype});
      continue;
    }
    bufs.push_back(*DeviceBuffer::create(shapes[i].num_elements() * dtype_size(dtype)));
    cudaMemsetAsync(bufs.back().get(), 1, shapes[i].num_elements() * dtype_size(dtype),
                    gpu.stream.get());
    args.push_back({bufs.back().get(), &shapes[i], dtype});
  }
  const size_t bytes = meta->shape.num_elements() * dtype_size(dtype);
  DeviceBuffer out = *DeviceBuffer::create(bytes), src = *DeviceBuffer::create(bytes),
               dst = *DeviceBuffer::create(bytes);
  const KernelContext ctx{args, {out.get(), &meta->shape, dtype}, &attrs, &gpu.state};
  KernelFn fn = gpu.registry.find(op, DeviceType::kGPU, dtype);
  bool failed = false;
  auto ours = [&] { failed |= !fn(ctx).ok(); };
  auto memcpy = [&] {
    cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, gpu.stream.get());
  };
  time_ms(gpu, ours);
  time_ms(gpu, memcpy);
  std::vector<double> ours_ms, base_ms;
  for (auto _ : state) {
    ours_ms.push_back(time_ms(gpu, ours));
    state.SetIterationTime(ours_ms.back() / 1e3);
  }
  for (size_t i = 0; i < ours_ms.size(); ++i) base_ms.push_back(time_ms(gpu, memcpy));
  if (failed) return state.SkipWithError("the kernel failed");
  state.counters["ours_ms"] = median(ours_ms);
  state.counters["memcpy_ms"] = median(base_ms);
  state.counters["GB/s"] = 2.0 * bytes / (median(ours_ms) * 1e6);
  state.counters["vs_memcpy"] = median(base_ms) / median(ours_ms);
}

void BM_Transpose4096(benchmark::State& state) {
  OpAttrs attrs;
  attrs.dims = {1, 0};
  const DType dtype = state.range(0) == 0 ? DType::kFloat32 : DType::kBFloat16;
  state.SetLabel(dtype_name(dtype));
  run_op(state, OpId::kTranspose, dtype, {Shape::make({4096, 4096}).value()}, attrs);
}
BENCHMARK(BM_Transpose4096)->Arg(0)->Arg(1)->UseManualTime()->Iterations(20);

void BM_Concat64MiB(benchmark::State& state) {
  OpAttrs attrs;
  attrs.axis = state.range(0);
  const Shape half = Shape::make({4096, 2048}).value();  // 32 MiB of float32 each
  run_op(state, OpId::kConcatV2, DType::kFloat32, {half, half}, attrs);
}
BENCHMARK(BM_Concat64MiB)->Arg(0)->Arg(1)->UseManualTime()->Iterations(20);

void BM_Gather64MiB(benchmark::State& state) {
  // 16384 rows of 1024 float32 (4 KiB), gathered in a random order.
  if (!bench_gpu().error.empty()) {
    return state.SkipWithError(("no GPU: " + bench_gpu().error).c_str());
  }
  constexpr int64_t kRows = 16384;
  std::vector<int32_t> order(kRows);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(1));
  std::vector<DeviceBuffer> idx;
  idx.push_back(*DeviceBuffer::create(kRows * sizeof(int32_t)));
  cudaMemcpy(idx[0].get(), order.data(), kRows * sizeof(int32_t), cudaMemcpyHostToDevice);
  run_op(state, OpId::kGatherV2, DType::kFloat32,
         {Shape::make({kRows, 1024}).value(), Shape::make({kRows}).value()}, OpAttrs(), &idx);
}
BENCHMARK(BM_Gather64MiB)->UseManualTime()->Iterations(20);

void BM_BroadcastTo64MiB(benchmark::State& state) {
  OpAttrs attrs;
  attrs.dims = {4096, 4096};
  run_op(state, OpId::kBroadcastTo, DType::kFloat32, {Shape::make({1, 4096}).value()}, attrs);
}
BENCHMARK(BM_BroadcastTo64MiB)->UseManualTime()->Iterations(20);

}  // namespace
}  // namespace mt::cuda

BENCHMARK_MAIN();
