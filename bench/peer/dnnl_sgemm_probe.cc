// oneDNN's sgemm (Debian's libdnnl, threaded by OpenMP) at the CPU benchmark's matmul sizes:
// a second peer for MatMul, measured to decide whether the CPU backend should use it for
// float32 GEMM (docs/design.md, "Execution on CPUs"). Built by scripts/gpu-check.sh bundle
// (-ldnnl -fopenmp) and run by the cpubench step of scripts/gpu-run.sh.
//
//   dnnl_sgemm_probe --threads=16
#include <benchmark/benchmark.h>
#include <dnnl.h>
#include <omp.h>

#include <thread>

#include "bench/cpu_bench_util.h"

namespace {

void BM_MatMulF32(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a = mt::bench::random_floats(n * n, 1), b = mt::bench::random_floats(n * n, 2);
  std::vector<float> c(n * n);
  for (auto _ : state) {
    // Row-major C = A B is column-major C^T = B^T A^T.
    if (dnnl_sgemm('N', 'N', n, n, n, 1.f, b.data(), n, a.data(), n, 0.f, c.data(), n) !=
        dnnl_success) {
      state.SkipWithError("dnnl_sgemm failed");
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatMulF32)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  int threads = mt::bench::take_threads_flag(&argc, argv);
  if (threads == 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  omp_set_num_threads(threads);
  benchmark::AddCustomContext("omp_threads", std::to_string(threads));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
