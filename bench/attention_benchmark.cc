// Causal self-attention of GPT-2's heads (12 heads of 64, 1024 tokens; batch 1 and 8) on the
// CPU, end to end (mt:: calls, allocation included): the fused DotProductAttention beside
// the composite it replaces in the same run (a batched product, the causal mask, a softmax
// and a product, on heads-first inputs so that it pays no transpose), forward alone and
// forward plus the tape's gradient of q, k and v. float32 and bfloat16. The GPU's figures
// are bench/cuda/nn_ops_benchmark.cc's BM_Attention.
//
//   attention_benchmark --threads=2 --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/cpu_bench_util.h"
#include "runtime/minitensor.h"

namespace mt {
namespace {

constexpr int64_t kHeads = 12, kTokens = 1024, kDepth = 64;

Tensor random_tensor(const Ints& shape, DType dtype, unsigned seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return cast(constant(bench::random_floats(n, seed), shape), dtype);
}

// The composite on heads-first q, k, v (batch, heads, tokens, depth).
Tensor composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& seen) {
  const Tensor scale = fill({}, 1 / std::sqrt(double{kDepth}), q.dtype());
  const Tensor masked = where(seen, matmul(q, k, false, true) * scale,
                              fill({}, -std::numeric_limits<double>::infinity(), q.dtype()));
  return matmul(nn::softmax(masked), v);
}

// state.range(0): batch; (1): 0 float32, 1 bfloat16; (2): 0 fused, 1 composite; (3): 0
// forward, 1 forward and gradient.
void BM_Attention(benchmark::State& state) {
  const int64_t batch = state.range(0);
  const DType dtype = state.range(1) == 0 ? DType::kFloat32 : DType::kBFloat16;
  const bool fused = state.range(2) == 0, backward = state.range(3) == 1;
  const Ints shape =
      fused ? Ints{batch, kTokens, kHeads, kDepth} : Ints{batch, kHeads, kTokens, kDepth};
  const Tensor q = random_tensor(shape, dtype, 1), k = random_tensor(shape, dtype, 2);
  const Tensor v = random_tensor(shape, dtype, 3), w = random_tensor(shape, dtype, 4);
  const Tensor seen = cast(linalg::band_part(ones({kTokens, kTokens}), -1, 0), DType::kBool);
  auto attend = [&] {
    return fused ? nn::dot_product_attention(q, k, v, {std::nullopt, true}).o
                 : composite(q, k, v, seen);
  };
  for (auto _ : state) {
    if (!backward) {
      benchmark::DoNotOptimize(attend().impl());
      continue;
    }
    GradientTape tape;
    tape.watch(q), tape.watch(k), tape.watch(v);
    const Tensor loss = reduce_sum(mul(attend(), w));
    benchmark::DoNotOptimize(tape.gradient(loss, {q, k, v})[0].impl());
  }
  // Multiply-adds of the products that causal attention needs (half the scores): 2 forward,
  // 2 more backward (4 for the fused kernels, which recompute the scores twice).
  const double half_scores = 0.5 * batch * kHeads * kTokens * kTokens;
  const double flops = 2 * half_scores * kDepth * (backward ? 6 : 2);
  state.SetLabel(absl::StrCat(dtype_name(dtype), fused ? " fused" : " composite",
                              backward ? " forward+backward" : " forward"));
  state.counters["GFLOPs"] =
      benchmark::Counter(flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Attention)
    ->ArgNames({"batch", "bf16", "composite", "backward"})
    ->ArgsProduct({{1, 8}, {0, 1}, {0, 1}, {0, 1}})
    ->UseRealTime()
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mt

int main(int argc, char** argv) {
  const int threads = mt::bench::take_threads_flag(&argc, argv);
  mt::config::set_visible_devices(std::vector<mt::PhysicalDevice>{}, "GPU");  // the CPU's figures
  mt::config::threading::set_intra_op_parallelism_threads(threads);
  benchmark::AddCustomContext("cpu_isa", mt::config::threading::get_cpu_isa());
  benchmark::AddCustomContext("intra_op_threads", std::to_string(threads));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
