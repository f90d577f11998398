// GPU kernels of MatMul: cuBLAS SGEMM/DGEMM for float32 and float64. Integer MatMul has no
// GPU kernel and falls back to the CPU.
//
// Note [Row-major GEMM]: cuBLAS is column-major, and a row-major m x n matrix read as
// column-major is its n x m transpose. So C = op(A) op(B), all row-major, is computed as the
// column-major C^T = op(B)^T op(A)^T: cuBLAS is called with B first, then A, dimensions
// (n, m, k), and each leading dimension is its row-major matrix's column count.
//
// TensorFloat-32: the math mode is set on each call from internal::tf32_enabled() (a
// process-wide switch, so every thread sharing the handle sets the same mode).
#include <limits>
#include <type_traits>

#include "core/status.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/kernel_options.h"

namespace mt::cuda {
namespace {

// The operands of one GEMM call, in cuBLAS's column-major terms (Note [Row-major GEMM]).
struct GemmShape {
  cublasOperation_t op_b, op_a;
  int64_t n, m, k;
  int64_t ldb, lda, ldc;
};

GemmShape gemm_shape(const KernelContext& ctx) {
  const Shape& a = *ctx.inputs[0].shape;
  const Shape& b = *ctx.inputs[1].shape;
  const bool ta = ctx.attrs->transpose_a, tb = ctx.attrs->transpose_b;
  GemmShape g;
  g.op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.m = a.dim(ta ? 1 : 0);
  g.k = a.dim(ta ? 0 : 1);
  g.n = b.dim(tb ? 0 : 1);
  g.lda = a.dim(1);
  g.ldb = b.dim(1);
  g.ldc = g.n;
  return g;
}

// Returns whether every dimension fits the 32-bit cuBLAS API. The 32-bit calls are used
// whenever they can be: at small sizes (256^3) the _64 variants were measured about 15 %
// slower per call on an H200.
bool fits_int32(const GemmShape& g) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  return g.n <= kMax && g.m <= kMax && g.k <= kMax && g.lda <= kMax && g.ldb <= kMax &&
         g.ldc <= kMax;
}

cublasStatus_t gemm(cublasHandle_t h, const GemmShape& g, const float* a, const float* b,
                    float* c) {
  const float one = 1, zero = 0;
  if (fits_int32(g)) {
    return cublasSgemm(h, g.op_b, g.op_a, int(g.n), int(g.m), int(g.k), &one, b, int(g.ldb), a,
                       int(g.lda), &zero, c, int(g.ldc));
  }
  return cublasSgemm_64(h, g.op_b, g.op_a, g.n, g.m, g.k, &one, b, g.ldb, a, g.lda, &zero, c,
                        g.ldc);
}

cublasStatus_t gemm(cublasHandle_t h, const GemmShape& g, const double* a, const double* b,
                    double* c) {
  const double one = 1, zero = 0;
  if (fits_int32(g)) {
    return cublasDgemm(h, g.op_b, g.op_a, int(g.n), int(g.m), int(g.k), &one, b, int(g.ldb), a,
                       int(g.lda), &zero, c, int(g.ldc));
  }
  return cublasDgemm_64(h, g.op_b, g.op_a, g.n, g.m, g.k, &one, b, g.ldb, a, g.lda, &zero, c,
                        g.ldc);
}

template <typename T>
absl::Status run_matmul(const KernelContext& ctx) {
  constexpr OpId op = OpId::kMatMul;
  const GemmShape g = gemm_shape(ctx);
  const GpuState& state = gpu_state(ctx);
  if (g.m == 0 || g.n == 0) return absl::OkStatus();
  if (g.k == 0) {  // an empty inner dimension sums nothing
    return cuda_status(op, "cudaMemsetAsync",
                       cudaMemsetAsync(ctx.output.data, 0, g.m * g.n * sizeof(T), state.stream));
  }
  const bool tf32 = std::is_same_v<T, float> && internal::tf32_enabled();
  const cublasMath_t mode = tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  MT_CHECK(state.blas != nullptr);
  internal::MutexLock lock(&state.blas->mu);
  if (state.blas->math_mode != mode) {  // one call fewer per op in the common case
    MT_RETURN_IF_ERROR(
        cublas_status(op, "cublasSetMathMode", cublasSetMathMode(state.cublas, mode)));
    state.blas->math_mode = mode;
  }
  const char* call = std::is_same_v<T, float> ? "cublasSgemm" : "cublasDgemm";
  return cublas_status(
      op, call,
      gemm(state.cublas, g, static_cast<const T*>(ctx.inputs[0].data),
           static_cast<const T*>(ctx.inputs[1].data), static_cast<T*>(ctx.output.data)));
}

}  // namespace

absl::Status register_matmul_kernels(KernelRegistry& registry) {
  return add_gpu_kernels(
      registry, OpId::kMatMul, WithoutHalf<FloatTypes>{},
      [](auto tag) -> KernelFn { return &run_matmul<typename decltype(tag)::type>; });
}

}  // namespace mt::cuda
