// How far cuBLAS itself can go on a square bfloat16 or float16 GEMM on GPU 0, as a ceiling
// for mt::matmul's figures in half_precision_benchmark.cc: cublasGemmEx with the default
// algorithm (what MatMul calls) beside the fastest of up to kCandidates algorithms that
// cuBLASLt's heuristic offers for the same problem (2-byte inputs and output, float32
// compute, no reduction in the output type, 64 MiB of workspace), each timed with CUDA
// events. Counters: gemmex_TFLOPs, best_lt_TFLOPs, best_over_gemmex, candidates, best_rank
// (0 = the heuristic's first choice) and the fraction of the card's dense peak each reaches.
// Raw CUDA only: no minitensor op runs here. Skips without a GPU.
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/cuda/gpu_bench_util.h"

namespace mt {
namespace {

using bench::dense_peak_tflops;
using bench::median;

constexpr int kCandidates = 16;
constexpr size_t kWorkspaceBytes = size_t{64} << 20;

// Device memory freed at scope exit.
struct DeviceMemory {
  void* p = nullptr;
  explicit DeviceMemory(size_t bytes) { cudaMalloc(&p, bytes); }
  ~DeviceMemory() { cudaFree(p); }
};

// Fills `bytes` at `p` with n x n values uniform in [-1, 1) of the 2-byte type `type`.
void fill_random(void* p, int n, cudaDataType_t type, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<uint16_t> bits(size_t(n) * n);
  for (uint16_t& b : bits) {
    const float x = dist(rng);
    if (type == CUDA_R_16BF) {
      const __nv_bfloat16 h = __float2bfloat16(x);
      std::memcpy(&b, &h, sizeof(b));
    } else {
      const __half h = __float2half(x);
      std::memcpy(&b, &h, sizeof(b));
    }
  }
  cudaMemcpy(p, bits.data(), bits.size() * 2, cudaMemcpyHostToDevice);
}

// Returns the median over 5 timings of `reps` calls of `body` on `stream`, in microseconds.
template <typename Body>
double time_us(cudaStream_t stream, int reps, Body body) {
  bench::StreamTimer timer(stream);
  body();  // warm-up
  std::vector<double> us;
  for (int t = 0; t < 5; ++t) us.push_back(timer.us_per_call(reps, body));
  return median(us);
}

// Args: dtype (0 bfloat16, 1 float16) and n.
void BM_CublasLtSearch(benchmark::State& state) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    return state.SkipWithError("needs a GPU: none is visible");
  }
  const cudaDataType_t type = state.range(0) == 0 ? CUDA_R_16BF : CUDA_R_16F;
  const int n = static_cast<int>(state.range(1));
  const size_t bytes = size_t(n) * n * 2;
  DeviceMemory a(bytes), b(bytes), c(bytes), workspace(kWorkspaceBytes);
  fill_random(a.p, n, type, 1);
  fill_random(b.p, n, type, 2);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cublasHandle_t blas;
  cublasCreate(&blas);
  cublasSetStream(blas, stream);
  cublasSetMathMode(blas,
                    static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                              CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulDesc_t op;
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatrixLayout_t layout;  // every operand is n x n, leading dimension n
  cublasLtMatrixLayoutCreate(&layout, type, n, n, n);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &kWorkspaceBytes, sizeof(kWorkspaceBytes));
  const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_INPLACE |
                           CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;  // never in the output type
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                                       sizeof(schemes));
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, op, layout, layout, layout, layout, pref, kCandidates, results,
                                 &found);
  const float one = 1, zero = 0;
  const int reps = n <= 512 ? 200 : 10;
  double gemmex_us = 0, best_us = 0;
  int best_rank = -1;
  for (auto _ : state) {
    gemmex_us = time_us(stream, reps, [&] {
      cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b.p, type, n, a.p, type, n, &zero,
                   c.p, type, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    });
    for (int i = 0; i < found; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
      bool failed = false;
      const double us = time_us(stream, reps, [&] {
        failed |= cublasLtMatmul(lt, op, &one, b.p, layout, a.p, layout, &zero, c.p, layout, c.p,
                                 layout, &results[i].algo, workspace.p, kWorkspaceBytes,
                                 stream) != CUBLAS_STATUS_SUCCESS;
      });
      if (!failed && (best_rank < 0 || us < best_us)) {
        best_us = us;
        best_rank = i;
      }
    }
    state.SetIterationTime(gemmex_us / 1e6);
  }
  std::string name;
  const double peak = dense_peak_tflops(&name);
  const double tflop = 2.0 * n * n * n / 1e12;
  const double gemmex = tflop / (gemmex_us / 1e6),
               best = best_rank < 0 ? 0 : tflop / (best_us / 1e6);
  state.SetLabel(std::string(type == CUDA_R_16BF ? "bfloat16 " : "half ") + name);
  state.counters["gemmex_TFLOPs"] = gemmex;
  state.counters["best_lt_TFLOPs"] = best;
  state.counters["best_over_gemmex"] = best / gemmex;
  state.counters["candidates"] = found;
  state.counters["best_rank"] = best_rank;
  state.counters["gemmex_fraction_of_peak"] = peak > 0 ? gemmex / peak : 0;
  state.counters["best_fraction_of_peak"] = peak > 0 ? best / peak : 0;
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(layout);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  cublasDestroy(blas);
  cudaStreamDestroy(stream);
}
BENCHMARK(BM_CublasLtSearch)
    ->ArgNames({"dtype", "n"})
    ->ArgsProduct({{0, 1}, {256, 4096, 8192}})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mt

BENCHMARK_MAIN();
