// The per-op overheads of the eager path, each beside a baseline measured in the same run:
// a cached placement decision, a device-scope push and pop, and mt::add of two 1-element
// float tensors end to end (with no trace recording, while one records, and the two
// alternated in batches for recording's cost per op) next to a direct call of the same
// CPU kernel.
#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdint>

#include "kernels/kernel_registry.h"
#include "runtime/eager/execute.h"
#include "runtime/eager/scope_stack.h"
#include "runtime/minitensor.h"
#include "runtime/trace/trace.h"

namespace mt {
namespace {

// Baseline: an out-of-line function call that does trivial work.
__attribute__((noinline)) int raw_call(int x) { return x + 1; }

void BM_Baseline_RawFunctionCall(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) benchmark::DoNotOptimize(x = raw_call(x));
}
BENCHMARK(BM_Baseline_RawFunctionCall);

void place_loop(benchmark::State& state) {
  internal::Context& ctx = internal::Context::get();
  internal::Runtime* rt = ctx.runtime().value();
  for (auto _ : state) {
    benchmark::DoNotOptimize(internal::place(ctx, *rt, OpId::kAddV2, DType::kFloat32));
  }
}

void BM_PlacementCached_NoScope(benchmark::State& state) { place_loop(state); }
BENCHMARK(BM_PlacementCached_NoScope);

void BM_PlacementCached_InScope(benchmark::State& state) {
  DeviceScope scope("/job:localhost/replica:0/task:0/device:CPU:0");
  place_loop(state);
}
BENCHMARK(BM_PlacementCached_InScope);

void BM_ScopePushPop_Spec(benchmark::State& state) {
  DeviceSpec spec = parse_device_name("/CPU:0").value();
  for (auto _ : state) {
    DeviceScope scope(spec);
    benchmark::DoNotOptimize(internal::scope_stack().top());
  }
}
BENCHMARK(BM_ScopePushPop_Spec);

void BM_ScopePushPop_String(benchmark::State& state) {
  for (auto _ : state) {
    DeviceScope scope("/CPU:0");
    benchmark::DoNotOptimize(internal::scope_stack().top());
  }
}
BENCHMARK(BM_ScopePushPop_String);

void BM_AddScalarTensors_EndToEnd(benchmark::State& state) {
  DeviceScope cpu("/CPU:0");  // the CPU path, also where a GPU exists
  Tensor a = constant({1.f});
  Tensor b = constant({2.f});
  for (auto _ : state) {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
}
BENCHMARK(BM_AddScalarTensors_EndToEnd);

// The same add while a trace records (runtime/trace/trace.h). The recording restarts every 2^16
// ops, outside the timing, so that it never reaches its event limit.
void BM_AddScalarTensors_EndToEnd_Recording(benchmark::State& state) {
  DeviceScope cpu("/CPU:0");
  Tensor a = constant({1.f});
  Tensor b = constant({2.f});
  trace::start();
  int64_t ops = 0;
  for (auto _ : state) {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c.impl());
    if ((++ops & 0xffff) == 0) {
      state.PauseTiming();
      trace::stop();
      trace::start();
      state.ResumeTiming();
    }
  }
  trace::stop();
}
BENCHMARK(BM_AddScalarTensors_EndToEnd_Recording);

// Returns the CPU time this thread has used, in nanoseconds: the machine may be shared, and
// other processes' time must not count.
int64_t thread_cpu_ns() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// Returns the thread CPU time of `n` end-to-end adds, in nanoseconds.
int64_t time_adds(const Tensor& a, const Tensor& b, int n) {
  const int64_t begin = thread_cpu_ns();
  for (int i = 0; i < n; ++i) {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  return thread_cpu_ns() - begin;
}

// What recording costs per op: batches of 2^16 adds with no recording and while one records,
// alternated so that both meet the same machine, each timed by the thread's CPU clock
// (start() and stop() fall between the batches, untimed). Counters: ns per op off and on,
// and their difference.
void BM_AddScalarTensors_RecordingOverhead(benchmark::State& state) {
  constexpr int kBatch = 1 << 16;
  DeviceScope cpu("/CPU:0");
  Tensor a = constant({1.f});
  Tensor b = constant({2.f});
  int64_t off_ns = 0, on_ns = 0, ops = 0;
  for (auto _ : state) {
    off_ns += time_adds(a, b, kBatch);
    trace::start();
    on_ns += time_adds(a, b, kBatch);
    trace::stop();
    ops += kBatch;
  }
  state.counters["off_ns"] = static_cast<double>(off_ns) / ops;
  state.counters["on_ns"] = static_cast<double>(on_ns) / ops;
  state.counters["overhead_ns"] = static_cast<double>(on_ns - off_ns) / ops;
}
BENCHMARK(BM_AddScalarTensors_RecordingOverhead)->Unit(benchmark::kMillisecond);

// Baseline: the same CPU kernel called directly on preallocated buffers.
void BM_Baseline_AddKernelDirect(benchmark::State& state) {
  KernelRegistry registry;
  (void)register_cpu_kernels(registry);
  KernelFn add_kernel = registry.find(OpId::kAddV2, DeviceType::kCPU, DType::kFloat32);
  Shape shape = Shape::make({1}).value();
  float x = 1, y = 2, z = 0;
  TensorArg args[] = {{&x, &shape, DType::kFloat32}, {&y, &shape, DType::kFloat32}};
  OpAttrs attrs;
  KernelContext ctx{args, MutableTensorArg{&z, &shape, DType::kFloat32}, &attrs, nullptr};
  for (auto _ : state) {
    benchmark::DoNotOptimize(add_kernel(ctx));
    benchmark::DoNotOptimize(z);
  }
}
BENCHMARK(BM_Baseline_AddKernelDirect);

}  // namespace
}  // namespace mt

BENCHMARK_MAIN();
