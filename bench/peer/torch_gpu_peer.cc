// libtorch's GPU figures beside bench/cuda/half_precision_benchmark.cc: at::mm in bfloat16
// and float16 at 256, 4096 and 8192 (TFLOP/s), AddN of 8 x 64 MiB bfloat16 (one add, then
// in-place adds) and a sum over 64 MiB bfloat16 (GB/s, bytes read + written), with the
// same names and byte counts; softmax and log_softmax over rows of 4096 (4096 rows, float32
// and bfloat16, GB/s read + written) and batched matmul (at::bmm of 64 x 512^3, float32
// without TF32 and bfloat16, TFLOP/s) beside bench/cuda/nn_ops_benchmark.cc. Not part of the CMake
// build: libtorch lives only on the GPU machine, where scripts/gpu-run.sh (step `halfbench`)
// compiles this file against it.
//
// Timing: each benchmark iteration enqueues `reps` ops and waits for the device
// (torch::cuda::synchronize), so the time per op includes libtorch's host overhead when
// that is the bound (256^3), as an eager caller sees it.
#include <benchmark/benchmark.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>

namespace {

constexpr int64_t kHalfElements = int64_t{32} << 20;  // 64 MiB of a 2-byte dtype
constexpr int kAddNInputs = 8;

torch::ScalarType dtype_arg(const benchmark::State& state) {
  return state.range(0) == 0 ? torch::kBFloat16 : torch::kFloat16;
}

torch::Tensor random_gpu(std::vector<int64_t> shape, torch::ScalarType dtype) {
  return torch::rand(shape, torch::dtype(torch::kFloat32).device(torch::kCUDA))
      .mul_(2)
      .sub_(1)
      .to(dtype);
}

// Runs `reps` calls of `op` per iteration; sets the manual time per call.
template <typename Op>
void time_calls(benchmark::State& state, int reps, Op op) {
  op();  // warm up (cuBLAS heuristics, caching allocator)
  torch::cuda::synchronize();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) op();
    torch::cuda::synchronize();
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(s.count() / reps);
  }
}

void BM_MatMulHalf(benchmark::State& state) {
  if (!torch::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const int64_t n = state.range(1);
  const torch::ScalarType dtype = dtype_arg(state);
  torch::Tensor a = random_gpu({n, n}, dtype), b = random_gpu({n, n}, dtype);
  torch::Tensor c = torch::empty({n, n}, a.options());
  time_calls(state, n <= 512 ? 200 : 10, [&] { at::mm_out(c, a, b); });
  state.SetLabel(dtype == torch::kBFloat16 ? "bfloat16" : "float16");
  state.counters["TFLOPs"] =
      benchmark::Counter(2.0 * n * n * n / 1e12, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MatMulHalf)
    ->ArgNames({"dtype", "n"})
    ->ArgsProduct({{0, 1}, {256, 4096, 8192}})
    ->Iterations(10)  // fixed, as the minitensor side: each iteration is `reps` calls
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

void BM_AddN8x64MiB(benchmark::State& state) {
  if (!torch::cuda::is_available()) return state.SkipWithError("no CUDA device");
  std::vector<torch::Tensor> in;
  for (int k = 0; k < kAddNInputs; ++k) in.push_back(random_gpu({kHalfElements}, torch::kBFloat16));
  time_calls(state, 5, [&] {
    torch::Tensor out = torch::add(in[0], in[1]);
    for (int k = 2; k < kAddNInputs; ++k) out.add_(in[k]);
  });
  state.counters["GBps"] = benchmark::Counter((kAddNInputs + 1) * kHalfElements * 2.0 / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_AddN8x64MiB)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_ReduceSum64MiB(benchmark::State& state) {
  if (!torch::cuda::is_available()) return state.SkipWithError("no CUDA device");
  torch::Tensor x = random_gpu({kHalfElements}, torch::kBFloat16);
  time_calls(state, 10, [&] { benchmark::DoNotOptimize(x.sum()); });
  state.counters["GBps"] =
      benchmark::Counter(kHalfElements * 2.0 / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ReduceSum64MiB)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Softmax (log_softmax with state.range(1)) over the last axis of 4096 x 4096, float32
// (dtype 0) or bfloat16 (dtype 1), into a preallocated output, as BM_Softmax of
// nn_ops_benchmark.cc.
void BM_Softmax(benchmark::State& state) {
  if (!torch::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const torch::ScalarType dtype = state.range(0) == 0 ? torch::kFloat32 : torch::kBFloat16;
  const bool log = state.range(1) != 0;
  constexpr int64_t kRows = 4096, kCols = 4096;
  torch::Tensor x = random_gpu({kRows, kCols}, dtype);
  torch::Tensor y = torch::empty_like(x);
  time_calls(state, 20, [&] {
    if (log) {
      at::_log_softmax_out(y, x, -1, false);
    } else {
      at::_softmax_out(y, x, -1, false);
    }
  });
  state.SetLabel(dtype == torch::kFloat32 ? "float32" : "bfloat16");
  state.counters["GBps"] = benchmark::Counter(2.0 * kRows * kCols * x.element_size() / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Softmax)
    ->ArgNames({"dtype", "log"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Iterations(20)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// at::bmm of `batch` x n^3, float32 (dtype 0; TF32 off, libtorch's default) or bfloat16, as
// BM_BatchMatMul of nn_ops_benchmark.cc.
void BM_BatchMatMul(benchmark::State& state) {
  if (!torch::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const torch::ScalarType dtype = state.range(0) == 0 ? torch::kFloat32 : torch::kBFloat16;
  const int64_t batch = state.range(1), n = state.range(2);
  at::globalContext().setAllowTF32CuBLAS(false);
  torch::Tensor a = random_gpu({batch, n, n}, dtype), b = random_gpu({batch, n, n}, dtype);
  torch::Tensor c = torch::empty({batch, n, n}, a.options());
  time_calls(state, 20, [&] { at::bmm_out(c, a, b); });
  state.SetLabel(dtype == torch::kFloat32 ? "float32" : "bfloat16");
  state.counters["TFLOPs"] = benchmark::Counter(2.0 * batch * n * n * n / 1e12,
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_BatchMatMul)
    ->ArgNames({"dtype", "batch", "n"})
    ->Args({0, 64, 512})
    ->Args({1, 64, 512})
    ->Iterations(20)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
