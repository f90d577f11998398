// GPU kernels of MatMul: cuBLAS SGEMM/DGEMM for float32 and float64, cublasGemmEx for
// bfloat16 and float16 (2-byte inputs and output, float32 accumulation, tensor cores).
// Integer MatMul has no GPU kernel and falls back to the CPU.
//
// Note [Row-major GEMM]: cuBLAS is column-major, and a row-major m x n matrix read as
// column-major is its n x m transpose. So C = op(A) op(B), all row-major, is computed as the
// column-major C^T = op(B)^T op(A)^T: cuBLAS is called with B first, then A, dimensions
// (n, m, k), and each leading dimension is its row-major matrix's column count.
//
// TensorFloat-32: the math mode is set on each call from internal::tf32_enabled() (a
// process-wide switch, so every thread sharing the handle sets the same mode). bfloat16 and
// float16 run in the default math mode (tensor cores) with reduced-precision reductions
// disallowed, so that split-K partial sums stay in float32 too, not in the output type.
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

// bfloat16 and float16: cublasGemmEx, accumulating in float32.
template <typename T>
cublasStatus_t gemm(cublasHandle_t h, const GemmShape& g, const T* a, const T* b, T* c) {
  static_assert(std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>);
  const cudaDataType_t type = std::is_same_v<T, bfloat16> ? CUDA_R_16BF : CUDA_R_16F;
  const float one = 1, zero = 0;
  if (fits_int32(g)) {
    return cublasGemmEx(h, g.op_b, g.op_a, int(g.n), int(g.m), int(g.k), &one, b, type, int(g.ldb),
                        a, type, int(g.lda), &zero, c, type, int(g.ldc), CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
  }
  return cublasGemmEx_64(h, g.op_b, g.op_a, g.n, g.m, g.k, &one, b, type, g.ldb, a, type, g.lda,
                         &zero, c, type, g.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// Returns the math mode of a MatMul on T (the file comment says why).
template <typename T>
cublasMath_t math_mode() {
  if constexpr (std::is_same_v<T, float>) {
    return internal::tf32_enabled() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  } else if constexpr (std::is_same_v<T, double>) {
    return CUBLAS_DEFAULT_MATH;
  } else {
    return static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                     CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  }
}

// Returns the name of the cuBLAS call for T, for errors.
template <typename T>
const char* gemm_name() {
  if constexpr (std::is_same_v<T, float>) return "cublasSgemm";
  if constexpr (std::is_same_v<T, double>) return "cublasDgemm";
  return "cublasGemmEx";
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
  const cublasMath_t mode = math_mode<T>();
  MT_CHECK(state.blas != nullptr);
  internal::MutexLock lock(&state.blas->mu);
  if (state.blas->math_mode != mode) {  // one call fewer per op in the common case
    MT_RETURN_IF_ERROR(
        cublas_status(op, "cublasSetMathMode", cublasSetMathMode(state.cublas, mode)));
    state.blas->math_mode = mode;
  }
  return cublas_status(
      op, gemm_name<T>(),
      gemm(state.cublas, g, static_cast<const T*>(ctx.inputs[0].data),
           static_cast<const T*>(ctx.inputs[1].data), static_cast<T*>(ctx.output.data)));
}

}  // namespace

absl::Status register_matmul_kernels(KernelRegistry& registry) {
  return add_gpu_kernels(registry, OpId::kMatMul, FloatTypes{}, [](auto tag) -> KernelFn {
    return &run_matmul<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
