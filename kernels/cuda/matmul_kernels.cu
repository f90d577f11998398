// GPU kernels of MatMul: cuBLAS SGEMM/DGEMM for float32 and float64, cublasGemmEx for
// bfloat16 and float16 (2-byte inputs and output, float32 accumulation, tensor cores).
// Integer MatMul has no GPU kernel and falls back to the CPU. BatchMatMulV2 makes the same
// calls in their strided-batched form, one call for the whole batch when each side's batch
// is the output's or a single matrix (stride 0); otherwise (both sides broadcast along
// different dimensions) one call per output matrix (kernels/batch_matmul.h).
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
#include "kernels/batch_matmul.h"
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

// Sets the math mode of a product on T on the handle, which the caller has locked.
template <typename T>
absl::Status set_math_mode(OpId op, const GpuState& state)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.blas->mu) {
  const cublasMath_t mode = math_mode<T>();
  if (state.blas->math_mode == mode) return absl::OkStatus();  // one call fewer per op
  MT_RETURN_IF_ERROR(cublas_status(op, "cublasSetMathMode", cublasSetMathMode(state.cublas, mode)));
  state.blas->math_mode = mode;
  return absl::OkStatus();
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
  MT_CHECK(state.blas != nullptr);
  internal::MutexLock lock(&state.blas->mu);
  MT_RETURN_IF_ERROR(set_math_mode<T>(op, state));
  return cublas_status(
      op, gemm_name<T>(),
      gemm(state.cublas, g, static_cast<const T*>(ctx.inputs[0].data),
           static_cast<const T*>(ctx.inputs[1].data), static_cast<T*>(ctx.output.data)));
}

// One strided-batched call: `count` products, each operand advancing by its stride
// (elements; 0 repeats one matrix). Every dimension fits int32 (fits_int32).
struct Strides {
  long long a, b, c;
};

cublasStatus_t gemm_batched(cublasHandle_t h, const GemmShape& g, const float* a, const float* b,
                            float* c, Strides s, int count) {
  const float one = 1, zero = 0;
  return cublasSgemmStridedBatched(h, g.op_b, g.op_a, int(g.n), int(g.m), int(g.k), &one, b,
                                   int(g.ldb), s.b, a, int(g.lda), s.a, &zero, c, int(g.ldc), s.c,
                                   count);
}

cublasStatus_t gemm_batched(cublasHandle_t h, const GemmShape& g, const double* a, const double* b,
                            double* c, Strides s, int count) {
  const double one = 1, zero = 0;
  return cublasDgemmStridedBatched(h, g.op_b, g.op_a, int(g.n), int(g.m), int(g.k), &one, b,
                                   int(g.ldb), s.b, a, int(g.lda), s.a, &zero, c, int(g.ldc), s.c,
                                   count);
}

template <typename T>
cublasStatus_t gemm_batched(cublasHandle_t h, const GemmShape& g, const T* a, const T* b, T* c,
                            Strides s, int count) {
  const cudaDataType_t type = std::is_same_v<T, bfloat16> ? CUDA_R_16BF : CUDA_R_16F;
  const float one = 1, zero = 0;
  return cublasGemmStridedBatchedEx(h, g.op_b, g.op_a, int(g.n), int(g.m), int(g.k), &one, b, type,
                                    int(g.ldb), s.b, a, type, int(g.lda), s.a, &zero, c, type,
                                    int(g.ldc), s.c, count, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT);
}

template <typename T>
const char* gemm_batched_name() {
  if constexpr (std::is_same_v<T, float>) return "cublasSgemmStridedBatched";
  if constexpr (std::is_same_v<T, double>) return "cublasDgemmStridedBatched";
  return "cublasGemmStridedBatchedEx";
}

template <typename T>
absl::Status run_batch_matmul(const KernelContext& ctx) {
  constexpr OpId op = OpId::kBatchMatMulV2;
  const internal::BatchPlan p =
      internal::plan_batch_matmul(*ctx.inputs[0].shape, *ctx.inputs[1].shape, *ctx.attrs);
  const GpuState& state = gpu_state(ctx);
  T* c = static_cast<T*>(ctx.output.data);
  if (p.batches == 0 || p.m == 0 || p.n == 0) return absl::OkStatus();
  if (p.k == 0) {  // an empty inner dimension sums nothing
    return cuda_status(op, "cudaMemsetAsync",
                       cudaMemsetAsync(c, 0, p.batches * p.m * p.n * sizeof(T), state.stream));
  }
  const GemmShape g{p.tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                    p.ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                    p.n,
                    p.m,
                    p.k,
                    p.ldb,
                    p.lda,
                    p.n};
  const T* a = static_cast<const T*>(ctx.inputs[0].data);
  const T* b = static_cast<const T*>(ctx.inputs[1].data);
  MT_CHECK(state.blas != nullptr);
  internal::MutexLock lock(&state.blas->mu);
  MT_RETURN_IF_ERROR(set_math_mode<T>(op, state));
  constexpr int64_t kMaxCount = std::numeric_limits<int>::max();
  if (!fits_int32(g)) {  // the _64 forms of the single product, one by one
    for (int64_t i = 0; i < p.batches; ++i) {
      MT_RETURN_IF_ERROR(cublas_status(op, gemm_name<T>(),
                                       gemm(state.cublas, g, a + p.a_index(i) * p.a_matrix,
                                            b + p.b_index(i) * p.b_matrix, c + i * p.m * p.n)));
    }
    return absl::OkStatus();
  }
  if (p.uniform && p.batches <= kMaxCount) {
    const Strides s{p.a_step * p.a_matrix, p.b_step * p.b_matrix, p.m * p.n};
    return cublas_status(op, gemm_batched_name<T>(),
                         gemm_batched(state.cublas, g, a, b, c, s, int(p.batches)));
  }
  for (int64_t i = 0; i < p.batches; ++i) {
    MT_RETURN_IF_ERROR(cublas_status(
        op, gemm_batched_name<T>(),
        gemm_batched(state.cublas, g, a + p.a_index(i) * p.a_matrix, b + p.b_index(i) * p.b_matrix,
                     c + i * p.m * p.n, Strides{0, 0, 0}, 1)));
  }
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(MatMul) {
  return add_gpu_kernels(registry, OpId::kMatMul, FloatTypes{}, [](auto tag) -> KernelFn {
    return &run_matmul<typename decltype(tag)::type>;
  });
}
MT_OP_KERNELS(BatchMatMulV2) {
  return add_gpu_kernels(registry, OpId::kBatchMatMulV2, FloatTypes{}, [](auto tag) -> KernelFn {
    return &run_batch_matmul<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
