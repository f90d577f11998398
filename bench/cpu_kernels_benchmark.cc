// The CPU kernels end to end (mt:: calls, output allocation included), each beside its
// baseline in the same run: memcpy on one thread and on every thread for the bandwidth
// ops; libtorch is the peer of the matmul, the element-wise ops and the convolutions
// (bench/peer/, scripts/cpu-bench-table.py).
//
//   cpu_kernels_benchmark --threads=1     # intra-op threads (default 0: every core)
#include <benchmark/benchmark.h>

#include <barrier>
#include <thread>

#include "bench/cpu_bench_util.h"
#include "runtime/minitensor.h"

namespace mt {
namespace {

using bench::kBigElements;

Tensor random_tensor(std::vector<int64_t> shape, unsigned seed = 1) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return constant(bench::random_floats(n, seed), shape);
}

void set_bytes(benchmark::State& state, int64_t bytes_per_iteration) {
  state.SetBytesProcessed(state.iterations() * bytes_per_iteration);
}

// Baseline: one memcpy of 64 MiB on the calling thread (bytes read + written).
void BM_Baseline_Memcpy1Thread(benchmark::State& state) {
  std::vector<char> src(kBigElements * 4, 1), dst(kBigElements * 4);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
  set_bytes(state, 2 * src.size());
}
BENCHMARK(BM_Baseline_Memcpy1Thread)->UseRealTime();

// Baseline: the same memcpy split over as many plain threads as the machine has, kept
// alive between iterations and released by a barrier.
void BM_Baseline_MemcpyAllThreads(benchmark::State& state) {
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<char> src(kBigElements * 4, 1), dst(kBigElements * 4);
  std::barrier start(threads), done(threads);
  std::atomic<bool> stop{false};
  auto copy_slice = [&](int t) {
    const size_t slice = (src.size() + threads - 1) / threads;
    const size_t begin = std::min(src.size(), t * slice);
    std::memcpy(dst.data() + begin, src.data() + begin, std::min(slice, src.size() - begin));
  };
  std::vector<std::thread> team;
  for (int t = 1; t < threads; ++t) {
    team.emplace_back([&, t] {
      while (true) {
        start.arrive_and_wait();
        if (stop.load()) return;
        copy_slice(t);
        done.arrive_and_wait();
      }
    });
  }
  for (auto _ : state) {
    start.arrive_and_wait();
    copy_slice(0);
    done.arrive_and_wait();
  }
  stop.store(true);
  start.arrive_and_wait();
  for (std::thread& t : team) t.join();
  set_bytes(state, 2 * src.size());
}
BENCHMARK(BM_Baseline_MemcpyAllThreads)->UseRealTime();

void BM_AddScalar(benchmark::State& state) {
  Tensor a = constant({1.f}), b = constant({2.f});
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b).impl());
}
BENCHMARK(BM_AddScalar);

void BM_MatMulF32(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = random_tensor({n, n}, 1), b = random_tensor({n, n}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b).impl());
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatMulF32)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ReduceSum(benchmark::State& state) {
  Tensor x = random_tensor({kBigElements});
  for (auto _ : state) benchmark::DoNotOptimize(reduce_sum(x).impl());
  set_bytes(state, kBigElements * 4);
}
BENCHMARK(BM_ReduceSum)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_AddN(benchmark::State& state) {
  std::vector<Tensor> inputs;
  for (int k = 0; k < bench::kAddNInputs; ++k) {
    inputs.push_back(random_tensor({bench::kAddNElements}, k + 1));
  }
  for (auto _ : state) benchmark::DoNotOptimize(add_n(inputs).impl());
  set_bytes(state, (bench::kAddNInputs + 1) * bench::kAddNElements * 4);
}
BENCHMARK(BM_AddN)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_BroadcastAdd(benchmark::State& state) {
  Tensor a = random_tensor({bench::kBroadcastRows, bench::kBroadcastCols});
  Tensor b = random_tensor({bench::kBroadcastCols}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b).impl());
  set_bytes(state, (2 * bench::kBroadcastRows + 1) * bench::kBroadcastCols * 4);
}
BENCHMARK(BM_BroadcastAdd)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_CastF32ToI32(benchmark::State& state) {
  Tensor x = random_tensor({kBigElements});
  for (auto _ : state) benchmark::DoNotOptimize(cast(x, DType::kInt32).impl());
  set_bytes(state, kBigElements * 8);
}
BENCHMARK(BM_CastF32ToI32)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_Exp(benchmark::State& state) {
  Tensor x = random_tensor({kBigElements});
  for (auto _ : state) benchmark::DoNotOptimize(exp(x).impl());
  set_bytes(state, kBigElements * 8);
}
BENCHMARK(BM_Exp)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Equal-shape float32 add: the baseline of BM_AddBF16 below.
void BM_Add(benchmark::State& state) {
  Tensor a = random_tensor({kBigElements}), b = random_tensor({kBigElements}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b).impl());
  set_bytes(state, kBigElements * 12);
}
BENCHMARK(BM_Add)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Issue 19's element-wise ops beside BM_Exp and BM_Add: the cheap ones should run at BM_Add's
// rate (bandwidth), the kCostly ones (Log, Tanh, Sigmoid, Pow) near BM_Exp's.
void BM_Unary(benchmark::State& state, Tensor (*op)(const Tensor&)) {
  Tensor x = abs(random_tensor({kBigElements}));  // Log and Sqrt of positive values
  for (auto _ : state) benchmark::DoNotOptimize(op(x).impl());
  set_bytes(state, kBigElements * 8);
}
BENCHMARK_CAPTURE(BM_Unary, Sqrt, &sqrt)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Floor, &floor)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Round, &round)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Log, &log)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Tanh, &tanh)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Sigmoid, &sigmoid)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_Binary(benchmark::State& state, Tensor (*op)(const Tensor&, const Tensor&)) {
  Tensor a = random_tensor({kBigElements}), b = abs(random_tensor({kBigElements}, 2));
  for (auto _ : state) benchmark::DoNotOptimize(op(a, b).impl());
  set_bytes(state, kBigElements * 12);
}
BENCHMARK_CAPTURE(BM_Binary, Maximum, &maximum)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Binary, FloorDiv, &floordiv)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Binary, Pow, &pow)->UseRealTime()->Unit(benchmark::kMicrosecond);

// bfloat16, each beside the float32 op above with the same element count (BM_Add, BM_Exp,
// BM_ReduceSum): the bytes count 2 per element, so the element rate is bytes / 2 here and
// bytes / 4 there.
Tensor random_bf16(unsigned seed = 1) {
  return cast(random_tensor({kBigElements}, seed), DType::kBFloat16);
}

void BM_AddBF16(benchmark::State& state) {
  Tensor a = random_bf16(), b = random_bf16(2);
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b).impl());
  set_bytes(state, kBigElements * 6);
}
BENCHMARK(BM_AddBF16)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_ExpBF16(benchmark::State& state) {
  Tensor x = random_bf16();
  for (auto _ : state) benchmark::DoNotOptimize(exp(x).impl());
  set_bytes(state, kBigElements * 4);
}
BENCHMARK(BM_ExpBF16)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_ReduceSumBF16(benchmark::State& state) {
  Tensor x = random_bf16();
  for (auto _ : state) benchmark::DoNotOptimize(reduce_sum(x).impl());
  set_bytes(state, kBigElements * 2);
}
BENCHMARK(BM_ReduceSumBF16)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_CastF32ToBF16(benchmark::State& state) {
  Tensor x = random_tensor({kBigElements});
  for (auto _ : state) benchmark::DoNotOptimize(cast(x, DType::kBFloat16).impl());
  set_bytes(state, kBigElements * 6);
}
BENCHMARK(BM_CastF32ToBF16)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Issue 38's convolutions: the CIFAR-sized layer of cpu_bench_util.h, channels -> channels
// (the argument), forward and both gradients. MT_ONEDNN_CONV=0 times the runtime's own
// kernels instead of oneDNN's (Note [When oneDNN runs a convolution]).
struct ConvLayer {
  Tensor x, f, dy;
  std::vector<int64_t> image, filter;
  nn::Conv2DOptions options;
};

ConvLayer conv_layer(int64_t channels) {
  using bench::kConvBatch, bench::kConvSize, bench::kConvWindow;
  ConvLayer l;
  l.image = {kConvBatch, kConvSize, kConvSize, channels};
  l.filter = {kConvWindow, kConvWindow, channels, channels};
  l.x = random_tensor(l.image, 1);
  l.f = random_tensor(l.filter, 2);
  l.dy = random_tensor(l.image, 3);  // SAME at strides 1: the output is the image's shape
  l.options.padding = Padding::kSame;
  return l;
}

void set_conv_flops(benchmark::State& state) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      bench::conv_flops(state.range(0)) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void BM_Conv2D(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(nn::conv2d(l.x, l.f, l.options).impl());
  set_conv_flops(state);
}
BENCHMARK(BM_Conv2D)->Arg(32)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Conv2DBackpropInput(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(nn::conv2d_backprop_input(l.image, l.f, l.dy, l.options).impl());
  }
  set_conv_flops(state);
}
BENCHMARK(BM_Conv2DBackpropInput)->Arg(32)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Conv2DBackpropFilter(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(nn::conv2d_backprop_filter(l.x, l.filter, l.dy, l.options).impl());
  }
  set_conv_flops(state);
}
BENCHMARK(BM_Conv2DBackpropFilter)->Arg(32)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

// The pools of the same layer (cpu_bench_util.h), forward and gradient, as bytes per second.
nn::PoolOptions pool_options() {
  nn::PoolOptions o;
  o.ksize = o.strides = {1, bench::kPoolWindow, bench::kPoolWindow, 1};
  return o;
}

std::vector<int64_t> pooled_dims(int64_t channels) {
  using bench::kConvBatch, bench::kConvSize, bench::kPoolWindow;
  return {kConvBatch, kConvSize / kPoolWindow, kConvSize / kPoolWindow, channels};
}

void BM_MaxPool(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(nn::max_pool2d(l.x, pool_options()).impl());
  set_bytes(state, bench::pool_input_bytes(state.range(0)) * 5 / 4);
}
BENCHMARK(BM_MaxPool)->Arg(32)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_MaxPoolGrad(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  const Tensor y = nn::max_pool2d(l.x, pool_options());
  const Tensor dy = random_tensor(pooled_dims(state.range(0)), 4);
  for (auto _ : state) {
    benchmark::DoNotOptimize(nn::max_pool_grad(l.x, y, dy, pool_options()).impl());
  }
  set_bytes(state, bench::pool_input_bytes(state.range(0)) * 9 / 4);
}
BENCHMARK(BM_MaxPoolGrad)->Arg(32)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_AvgPool(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(nn::avg_pool2d(l.x, pool_options()).impl());
  set_bytes(state, bench::pool_input_bytes(state.range(0)) * 5 / 4);
}
BENCHMARK(BM_AvgPool)->Arg(32)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_AvgPoolGrad(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  const Tensor dy = random_tensor(pooled_dims(state.range(0)), 4);
  for (auto _ : state) {
    benchmark::DoNotOptimize(nn::avg_pool_grad(l.image, dy, pool_options()).impl());
  }
  set_bytes(state, bench::pool_input_bytes(state.range(0)) * 5 / 4);
}
BENCHMARK(BM_AvgPoolGrad)->Arg(32)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mt

int main(int argc, char** argv) {
  const int threads = mt::bench::take_threads_flag(&argc, argv);
  // The CPU runtime alone: with a GPU visible, ops would be placed on it.
  mt::config::set_visible_devices(std::vector<mt::PhysicalDevice>{}, "GPU");
  mt::config::threading::set_intra_op_parallelism_threads(threads);
  benchmark::AddCustomContext("cpu_isa", mt::config::threading::get_cpu_isa());
  benchmark::AddCustomContext("intra_op_threads_backend",
                              mt::config::threading::get_intra_op_thread_backend());
  benchmark::AddCustomContext("float32_gemm", mt::config::threading::get_cpu_float32_gemm());
  benchmark::AddCustomContext("intra_op_threads", std::to_string(threads));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
