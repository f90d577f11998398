// libtorch's CPU figures for the benchmarks of bench/cpu_kernels_benchmark.cc, with the same
// names, sizes and byte counts (cpu_bench_util.h), so that scripts/cpu-bench-table.py can
// put both side by side. Not part of the CMake build: libtorch lives only on the GPU
// machine, where scripts/gpu-run.sh compiles this file against it.
//
//   torch_cpu_peer --threads=16     # torch::set_num_threads; default 0: every core
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <array>
#include <optional>
#include <thread>

#include "bench/cpu_bench_util.h"

namespace {

using mt::bench::kBigElements;

torch::Tensor random_tensor(std::vector<int64_t> shape, unsigned seed = 1) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> values = mt::bench::random_floats(n, seed);
  return torch::from_blob(values.data(), shape, torch::kFloat32).clone();
}

void set_bytes(benchmark::State& state, int64_t bytes_per_iteration) {
  state.SetBytesProcessed(state.iterations() * bytes_per_iteration);
}

void BM_AddScalar(benchmark::State& state) {
  torch::Tensor a = torch::ones({1}), b = torch::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(torch::add(a, b));
}
BENCHMARK(BM_AddScalar);

void BM_MatMulF32(benchmark::State& state) {
  const int64_t n = state.range(0);
  torch::Tensor a = random_tensor({n, n}, 1), b = random_tensor({n, n}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(torch::mm(a, b));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatMulF32)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ReduceSum(benchmark::State& state) {
  torch::Tensor x = random_tensor({kBigElements});
  for (auto _ : state) benchmark::DoNotOptimize(x.sum());
  set_bytes(state, kBigElements * 4);
}
BENCHMARK(BM_ReduceSum)->UseRealTime()->Unit(benchmark::kMicrosecond);

// AddN has no libtorch op: one add into a fresh output, then in-place adds.
void BM_AddN(benchmark::State& state) {
  std::vector<torch::Tensor> inputs;
  for (int k = 0; k < mt::bench::kAddNInputs; ++k) {
    inputs.push_back(random_tensor({mt::bench::kAddNElements}, k + 1));
  }
  for (auto _ : state) {
    torch::Tensor out = torch::add(inputs[0], inputs[1]);
    for (size_t k = 2; k < inputs.size(); ++k) out.add_(inputs[k]);
    benchmark::DoNotOptimize(out);
  }
  set_bytes(state, (mt::bench::kAddNInputs + 1) * mt::bench::kAddNElements * 4);
}
BENCHMARK(BM_AddN)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_BroadcastAdd(benchmark::State& state) {
  torch::Tensor a = random_tensor({mt::bench::kBroadcastRows, mt::bench::kBroadcastCols});
  torch::Tensor b = random_tensor({mt::bench::kBroadcastCols}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(torch::add(a, b));
  set_bytes(state, (2 * mt::bench::kBroadcastRows + 1) * mt::bench::kBroadcastCols * 4);
}
BENCHMARK(BM_BroadcastAdd)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_CastF32ToI32(benchmark::State& state) {
  torch::Tensor x = random_tensor({kBigElements});
  for (auto _ : state) benchmark::DoNotOptimize(x.to(torch::kInt32));
  set_bytes(state, kBigElements * 8);
}
BENCHMARK(BM_CastF32ToI32)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_Exp(benchmark::State& state) {
  torch::Tensor x = random_tensor({kBigElements});
  for (auto _ : state) benchmark::DoNotOptimize(torch::exp(x));
  set_bytes(state, kBigElements * 8);
}
BENCHMARK(BM_Exp)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_Add(benchmark::State& state) {
  torch::Tensor a = random_tensor({kBigElements}), b = random_tensor({kBigElements}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(torch::add(a, b));
  set_bytes(state, kBigElements * 12);
}
BENCHMARK(BM_Add)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Issue 19's element-wise ops, as bench/cpu_kernels_benchmark.cc runs them.
void BM_Unary(benchmark::State& state, torch::Tensor (*op)(const torch::Tensor&)) {
  torch::Tensor x = torch::abs(random_tensor({kBigElements}));
  for (auto _ : state) benchmark::DoNotOptimize(op(x));
  set_bytes(state, kBigElements * 8);
}
torch::Tensor sqrt_op(const torch::Tensor& x) { return torch::sqrt(x); }
torch::Tensor floor_op(const torch::Tensor& x) { return torch::floor(x); }
torch::Tensor round_op(const torch::Tensor& x) { return torch::round(x); }
torch::Tensor log_op(const torch::Tensor& x) { return torch::log(x); }
torch::Tensor tanh_op(const torch::Tensor& x) { return torch::tanh(x); }
torch::Tensor sigmoid_op(const torch::Tensor& x) { return torch::sigmoid(x); }
BENCHMARK_CAPTURE(BM_Unary, Sqrt, &sqrt_op)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Floor, &floor_op)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Round, &round_op)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Log, &log_op)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Tanh, &tanh_op)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Unary, Sigmoid, &sigmoid_op)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_Binary(benchmark::State& state,
               torch::Tensor (*op)(const torch::Tensor&, const torch::Tensor&)) {
  torch::Tensor a = random_tensor({kBigElements}), b = torch::abs(random_tensor({kBigElements}, 2));
  for (auto _ : state) benchmark::DoNotOptimize(op(a, b));
  set_bytes(state, kBigElements * 12);
}
torch::Tensor maximum_op(const torch::Tensor& a, const torch::Tensor& b) {
  return torch::maximum(a, b);
}
torch::Tensor floordiv_op(const torch::Tensor& a, const torch::Tensor& b) {
  return torch::floor_divide(a, b);
}
torch::Tensor pow_op(const torch::Tensor& a, const torch::Tensor& b) { return torch::pow(a, b); }
BENCHMARK_CAPTURE(BM_Binary, Maximum, &maximum_op)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Binary, FloorDiv, &floordiv_op)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Binary, Pow, &pow_op)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Issue 38's convolutions, as bench/cpu_kernels_benchmark.cc runs them: the layer of
// cpu_bench_util.h in channels_last (NHWC in memory, as ours), the filter [out, in, 3, 3]
// channels_last too, padding 1 (SAME for a 3x3 at strides 1); each gradient alone through
// at::convolution_backward's output mask, without autograd.
struct ConvLayer {
  torch::Tensor x, f, dy;
};

ConvLayer conv_layer(int64_t channels) {
  using mt::bench::kConvBatch, mt::bench::kConvSize, mt::bench::kConvWindow;
  const auto last = torch::MemoryFormat::ChannelsLast;
  return {random_tensor({kConvBatch, channels, kConvSize, kConvSize}, 1).contiguous(last),
          random_tensor({channels, channels, kConvWindow, kConvWindow}, 2).contiguous(last),
          random_tensor({kConvBatch, channels, kConvSize, kConvSize}, 3).contiguous(last)};
}

void set_conv_flops(benchmark::State& state) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(mt::bench::conv_flops(state.range(0)) * state.iterations() / 1e9,
                         benchmark::Counter::kIsRate);
}

// One gradient of the layer: mask {input, weight, bias}.
torch::Tensor conv_gradient(const ConvLayer& l, std::array<bool, 3> mask) {
  auto grads = at::convolution_backward(l.dy, l.x, l.f, /*bias_sizes=*/at::OptionalIntArrayRef(),
                                        /*stride=*/{1, 1}, /*padding=*/{1, 1},
                                        /*dilation=*/{1, 1}, /*transposed=*/false,
                                        /*output_padding=*/{0, 0}, /*groups=*/1, mask);
  return mask[0] ? std::get<0>(grads) : std::get<1>(grads);
}

void BM_Conv2D(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        torch::conv2d(l.x, l.f, /*bias=*/{}, /*stride=*/{1, 1}, /*padding=*/{1, 1}));
  }
  set_conv_flops(state);
}
BENCHMARK(BM_Conv2D)->Arg(32)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Conv2DBackpropInput(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(conv_gradient(l, {true, false, false}));
  set_conv_flops(state);
}
BENCHMARK(BM_Conv2DBackpropInput)->Arg(32)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Conv2DBackpropFilter(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(conv_gradient(l, {false, true, false}));
  set_conv_flops(state);
}
BENCHMARK(BM_Conv2DBackpropFilter)->Arg(32)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

// The pools of the same layer, channels_last, each gradient through its ATen op (MaxPoolGrad
// with the forward pool's indices, as libtorch's autograd runs it).
const std::vector<int64_t> kPool = {mt::bench::kPoolWindow, mt::bench::kPoolWindow};

void BM_MaxPool(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(torch::max_pool2d(l.x, kPool, kPool));
  set_bytes(state, mt::bench::pool_input_bytes(state.range(0)) * 5 / 4);
}
BENCHMARK(BM_MaxPool)->Arg(32)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_MaxPoolGrad(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  const auto [y, indices] = torch::max_pool2d_with_indices(l.x, kPool, kPool);
  const torch::Tensor dy = torch::rand_like(y);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        at::max_pool2d_with_indices_backward(dy, l.x, kPool, kPool, /*padding=*/{0, 0},
                                             /*dilation=*/{1, 1}, /*ceil_mode=*/false, indices));
  }
  set_bytes(state, mt::bench::pool_input_bytes(state.range(0)) * 9 / 4);
}
BENCHMARK(BM_MaxPoolGrad)->Arg(32)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_AvgPool(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(torch::avg_pool2d(l.x, kPool, kPool));
  set_bytes(state, mt::bench::pool_input_bytes(state.range(0)) * 5 / 4);
}
BENCHMARK(BM_AvgPool)->Arg(32)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_AvgPoolGrad(benchmark::State& state) {
  const ConvLayer l = conv_layer(state.range(0));
  const torch::Tensor dy = torch::rand_like(torch::avg_pool2d(l.x, kPool, kPool));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        at::avg_pool2d_backward(dy, l.x, kPool, kPool, /*padding=*/{0, 0}, /*ceil_mode=*/false,
                                /*count_include_pad=*/true, /*divisor_override=*/std::nullopt));
  }
  set_bytes(state, mt::bench::pool_input_bytes(state.range(0)) * 5 / 4);
}
BENCHMARK(BM_AvgPoolGrad)->Arg(32)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  int threads = mt::bench::take_threads_flag(&argc, argv);
  if (threads == 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  torch::set_num_threads(threads);
  benchmark::AddCustomContext("torch_threads", std::to_string(torch::get_num_threads()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
