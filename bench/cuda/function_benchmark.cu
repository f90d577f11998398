// mt::Function against its floor in the same run (issue 22's table): a chain of 100
// one-element adds, per op, run eagerly, replayed by a Function (one CUDA graph launch), as
// 100 raw kernel launches, and as a raw CUDA graph of 100 kernels (the floor the replay is
// judged by), both of a one-thread add and of the runtime's own AddV2 kernel; the same chain on the
// CPU, eagerly and replayed; the time to trace and capture a 1,000-op function; and the pool
// allocations of one replay. Host wall time of kReps chains then one wait for the device: the time
// per op is the iteration's time divided by kReps * kChain = 20,000 (scripts/gpu-run.sh divides).
// Skips without a GPU.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <chrono>
#include <vector>

#include "bench/cuda/gpu_bench_util.h"
#include "kernels/cuda/gpu_state.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/eager/context.h"
#include "runtime/minitensor.h"

namespace mt {
namespace {

using bench::gpu0;
using Clock = std::chrono::steady_clock;

constexpr int kChain = 100;
constexpr int kReps = 200;

__global__ void add_one(const float* a, const float* b, float* c) { c[0] = a[0] + b[0]; }

// The chain: x + y, 100 times.
std::vector<Tensor> chain(absl::Span<const Tensor> args) {
  Tensor x = args[0];
  for (int i = 0; i < kChain; ++i) x = add(x, args[1]);
  return {x};
}

// Runs `body` (one chain) kReps times per iteration and waits with `wait`.
template <typename Body, typename Wait>
void time_chains(benchmark::State& state, Body&& body, Wait&& wait) {
  for (int i = 0; i < 3; ++i) body();
  wait();
  for (auto _ : state) {
    const auto start = Clock::now();
    for (int i = 0; i < kReps; ++i) body();
    wait();
    const std::chrono::duration<double> s = Clock::now() - start;
    state.SetIterationTime(s.count());
  }
}

void BM_Chain100_Gpu_Eager(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  DeviceScope scope("/GPU:0");
  const Tensor args[] = {constant({1.f}), constant({0.5f})};
  Tensor out;
  time_chains(
      state, [&] { out = chain(args)[0]; }, [&] { gpu->synchronize().IgnoreError(); });
  state.SetLabel("200 chains");
}
BENCHMARK(BM_Chain100_Gpu_Eager)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_Chain100_Gpu_FunctionReplay(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  DeviceScope scope("/GPU:0");
  const Tensor args[] = {constant({1.f}), constant({0.5f})};
  Function f(chain, "chain");
  const auto start = Clock::now();
  Tensor out = f(args)[0];
  gpu->synchronize().IgnoreError();
  const std::chrono::duration<double, std::milli> first = Clock::now() - start;
  time_chains(
      state, [&] { out = f(args)[0]; }, [&] { gpu->synchronize().IgnoreError(); });
  const int64_t before = gpu->allocator().stats().num_allocs;
  out = f(args)[0];
  state.counters["pool_allocs_per_replay"] =
      static_cast<double>(gpu->allocator().stats().num_allocs - before);
  state.counters["first_call_ms"] = first.count();
  state.SetLabel(f.replay_kind() + ", 200 chains");
}
BENCHMARK(BM_Chain100_Gpu_FunctionReplay)->UseManualTime()->Unit(benchmark::kMillisecond);

// Baseline: the chain's 100 kernels launched one by one (the eager floor).
void BM_Baseline_Chain100_RawLaunches(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  float* buf = nullptr;
  cudaMalloc(&buf, (kChain + 2) * sizeof(float));
  cudaStream_t stream = gpu->stream();
  auto body = [&] {
    for (int i = 0; i < kChain; ++i)
      add_one<<<1, 1, 0, stream>>>(buf + i, buf + kChain + 1, buf + i + 1);
  };
  time_chains(state, body, [&] { cudaStreamSynchronize(stream); });
  cudaFree(buf);
  state.SetLabel("200 chains");
}
BENCHMARK(BM_Baseline_Chain100_RawLaunches)->UseManualTime()->Unit(benchmark::kMillisecond);

// Times a raw CUDA graph of the chain: `launch(side, buf, i)` enqueues kernel i (reading
// buf[i] and buf[101], writing buf[i + 1]) on the capture stream `side`; the graph is
// launched once per chain on GPU:0's stream.
template <typename Launch>
void time_raw_graph(benchmark::State& state, internal::CudaDevice* gpu, Launch&& launch) {
  float* buf = nullptr;
  cudaMalloc(&buf, (kChain + 2) * sizeof(float));
  cudaStream_t side = nullptr;
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < kChain; ++i) launch(side, buf, i);
  cudaStreamEndCapture(side, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  cudaStream_t stream = gpu->stream();
  time_chains(
      state, [&] { cudaGraphLaunch(exec, stream); }, [&] { cudaStreamSynchronize(stream); });
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(side);
  cudaFree(buf);
  state.SetLabel("200 chains");
}

// Baseline: a raw CUDA graph of the same 100 kernels, launched once per chain (the floor a
// replay is judged by).
void BM_Baseline_Chain100_RawGraph(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  time_raw_graph(state, gpu, [](cudaStream_t side, float* buf, int i) {
    add_one<<<1, 1, 0, side>>>(buf + i, buf + kChain + 1, buf + i + 1);
  });
}
BENCHMARK(BM_Baseline_Chain100_RawGraph)->UseManualTime()->Unit(benchmark::kMillisecond);

// Baseline: a raw CUDA graph of the runtime's own AddV2 kernel called 100 times (the kernels
// a replay launches, without the replay around them: binding, outputs).
void BM_Baseline_Chain100_RawGraphOfRuntimeKernels(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  internal::Runtime* rt = internal::Context::get().runtime().value();
  KernelFn add_kernel = rt->registry().find(OpId::kAddV2, DeviceType::kGPU, DType::kFloat32);
  cuda::GpuState capture_state = *static_cast<cuda::GpuState*>(gpu->kernel_state());
  const Shape shape = Shape::make({1}).value();
  time_raw_graph(state, gpu, [&](cudaStream_t side, float* buf, int i) {
    capture_state.stream = side;
    const TensorArg in[] = {{buf + i, &shape, DType::kFloat32},
                            {buf + kChain + 1, &shape, DType::kFloat32}};
    const MutableTensorArg out{buf + i + 1, &shape, DType::kFloat32};
    OpAttrs attrs;
    const KernelContext kc{in, out, &attrs, &capture_state, absl::MakeConstSpan(&out, 1)};
    add_kernel(kc).IgnoreError();
  });
}
BENCHMARK(BM_Baseline_Chain100_RawGraphOfRuntimeKernels)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void chain_on_cpu(benchmark::State& state, bool replay) {
  DeviceScope scope("/CPU:0");
  const Tensor args[] = {constant({1.f}), constant({0.5f})};
  Function f(chain, "chain");
  Tensor out;
  time_chains(
      state, [&] { out = replay ? f(args)[0] : chain(args)[0]; }, [] {});
  state.SetLabel(replay ? f.replay_kind() + ", 200 chains" : "200 chains");
}
void BM_Chain100_Cpu_Eager(benchmark::State& state) { chain_on_cpu(state, false); }
void BM_Chain100_Cpu_FunctionReplay(benchmark::State& state) { chain_on_cpu(state, true); }
BENCHMARK(BM_Chain100_Cpu_Eager)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Chain100_Cpu_FunctionReplay)->UseManualTime()->Unit(benchmark::kMillisecond);

// The first call of a 1,000-op function (500 adds and 500 multiplies on small tensors):
// the eager run, the recording, the plan and, on the GPU, the capture; beside the eager
// run alone.
void trace_1000(benchmark::State& state, const char* device, bool traced) {
  if (std::string(device) == "/GPU:0" && gpu0(state) == nullptr) return;
  DeviceScope scope(device);
  const Tensor args[] = {fill({16}, 1.0), fill({16}, 0.999)};
  auto body = [](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    Tensor x = a[0];
    for (int i = 0; i < 500; ++i) x = mul(add(x, a[1]), a[1]);
    return {x};
  };
  std::string kind;
  for (auto _ : state) {
    const auto start = Clock::now();
    if (traced) {
      Function f(body, "thousand");
      benchmark::DoNotOptimize(f(args)[0].impl());
      kind = f.replay_kind();
    } else {
      benchmark::DoNotOptimize(body(args)[0].impl());
    }
    const std::chrono::duration<double> s = Clock::now() - start;
    state.SetIterationTime(s.count());
  }
  state.SetLabel(traced ? "first call, " + kind : "eager run");
}
void BM_Trace1000Ops_Gpu(benchmark::State& state) { trace_1000(state, "/GPU:0", true); }
void BM_Eager1000Ops_Gpu(benchmark::State& state) { trace_1000(state, "/GPU:0", false); }
void BM_Trace1000Ops_Cpu(benchmark::State& state) { trace_1000(state, "/CPU:0", true); }
BENCHMARK(BM_Trace1000Ops_Gpu)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Eager1000Ops_Gpu)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Trace1000Ops_Cpu)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mt

BENCHMARK_MAIN();
