// GPU kernels of Softmax and LogSoftmax over the last axis, computed in float32 for the
// 2-byte types (float64 in float64) and rounded once.
//
// Note [Softmax in registers]: a row of up to kMaxRegisterElements * threads elements is read
// once into registers (128-bit loads where the rows are 16-byte aligned), its max and sum
// reduced with warp shuffles (and shared memory across the warps of a block), and written
// once: one pass over global memory each way. Rows of up to 4 * 32 vectors take one warp
// each, 8 rows to a block; longer rows take a block of 256 threads each (4096 float32 =
// 16 per thread). Rows longer still fall back to three passes (max, sum, write) in a block
// of 1024 threads. Column masks, not -Inf padding, keep the lanes past the end out of the
// sum, so a row of -Inf gives NaN as the CPU does; a NaN or +Inf anywhere in a row reaches
// every element through the sum (Note [Softmax of non-finite rows] in
// kernels/cpu/nn_kernels.cc).
#include <cmath>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/half_math.h"
#include "kernels/cuda/launch.h"

namespace mt::cuda {
namespace {

template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

struct MaxOp {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a > b ? a : b;  // a NaN is dropped here but still reaches the sum
  }
};
struct SumOp {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a + b;
  }
};

__device__ __forceinline__ float exp_of(float x) { return expf(x); }
__device__ __forceinline__ double exp_of(double x) { return exp(x); }
__device__ __forceinline__ float log_of(float x) { return logf(x); }
__device__ __forceinline__ double log_of(double x) { return log(x); }

// Reduces v across the kThreads threads of one row (threadIdx.x); `shared` holds
// kRows * (kThreads / 32) partials when kThreads > 32.
template <int kThreads, typename C, typename Op>
__device__ __forceinline__ C row_reduce(C v, Op op, C* shared) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if constexpr (kThreads == 32) {
    return v;
  } else {
    constexpr int kWarps = kThreads / 32;
    __syncthreads();  // the previous reduction has read `shared`
    if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
    __syncthreads();
    v = shared[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) v = op(v, shared[w]);
    return v;
  }
}

// One row per kThreads threads (blockDim = (kThreads, kRows)); each thread holds kIters packs
// of V elements (Note [Softmax in registers]). With kThreads > 32, kRows is 1 (the block
// synchronises per row). V > 1 requires 16-byte aligned rows.
template <typename T, bool kLog, int kThreads, int kRows, int V, int kIters>
__global__ void __launch_bounds__(kThreads* kRows)
    softmax_registers(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t cols) {
  static_assert(kThreads == 32 || kRows == 1);
  using C = Compute<T>;
  __shared__ C shared[kThreads == 32 ? 1 : kThreads / 32];
  const int64_t step = int64_t{gridDim.x} * kRows;
  for (int64_t row = int64_t{blockIdx.x} * kRows + threadIdx.y; row < rows; row += step) {
    const T* x = in + row * cols;
    T* y = out + row * cols;
    C v[kIters][V];
    C max = static_cast<C>(-INFINITY);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int64_t col = (int64_t{i} * kThreads + threadIdx.x) * V;
      if (col < cols) {
        const Pack<T, V> p = *reinterpret_cast<const Pack<T, V>*>(x + col);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          v[i][j] = to_compute(p.v[j]);
          max = MaxOp()(max, v[i][j]);
        }
      }
    }
    max = row_reduce<kThreads>(max, MaxOp(), shared);
    C sum = 0;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int64_t col = (int64_t{i} * kThreads + threadIdx.x) * V;
      if (col < cols) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          v[i][j] -= max;
          const C e = exp_of(v[i][j]);
          sum += e;
          if constexpr (!kLog) v[i][j] = e;
        }
      }
    }
    sum = row_reduce<kThreads>(sum, SumOp(), shared);
    const C scale = kLog ? log_of(sum) : C(1) / sum;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int64_t col = (int64_t{i} * kThreads + threadIdx.x) * V;
      if (col < cols) {
        Pack<T, V> p;
#pragma unroll
        for (int j = 0; j < V; ++j) {
          p.v[j] = from_compute<T>(kLog ? v[i][j] - scale : v[i][j] * scale);
        }
        *reinterpret_cast<Pack<T, V>*>(y + col) = p;
      }
    }
  }
}

// Rows too long for registers: three passes over each row, one block of 1024 per row.
template <typename T, bool kLog>
__global__ void __launch_bounds__(1024)
    softmax_long_rows(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t cols) {
  using C = Compute<T>;
  __shared__ C shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = in + row * cols;
    T* y = out + row * cols;
    C max = static_cast<C>(-INFINITY);
    for (int64_t c = threadIdx.x; c < cols; c += 1024) max = MaxOp()(max, to_compute(x[c]));
    max = row_reduce<1024>(max, MaxOp(), shared);
    C sum = 0;
    for (int64_t c = threadIdx.x; c < cols; c += 1024) sum += exp_of(to_compute(x[c]) - max);
    sum = row_reduce<1024>(sum, SumOp(), shared);
    const C scale = kLog ? log_of(sum) : C(1) / sum;
    for (int64_t c = threadIdx.x; c < cols; c += 1024) {
      const C d = to_compute(x[c]) - max;
      y[c] = from_compute<T>(kLog ? d - scale : exp_of(d) * scale);
    }
  }
}

template <typename T, bool kLog, int kThreads, int V, int kIters>
absl::Status launch_registers(OpId op, const GpuState& state, const T* in, T* out, int64_t rows,
                              int64_t cols) {
  constexpr int kRows = kThreads == 32 ? 8 : 1;
  const unsigned grid = grid_for(rows, kRows);
  return launch(op, state, grid, dim3(kThreads, kRows),
                &softmax_registers<T, kLog, kThreads, kRows, V, kIters>, in, out, rows, cols);
}

// The most elements one thread holds (Note [Softmax in registers]).
inline constexpr int kMaxRegisterElements = 32;

template <typename T>
using Launcher = absl::Status (*)(OpId, const GpuState&, const T*, T*, int64_t, int64_t);

// Returns the register kernel for rows of `packs` V-element packs, or null when the rows
// are too long to be held in registers.
template <typename T, bool kLog, int V>
Launcher<T> pick_registers(int64_t packs) {
  constexpr int kMaxIters = kMaxRegisterElements / V < 8 ? kMaxRegisterElements / V : 8;
  if (packs <= 32 * 1) return &launch_registers<T, kLog, 32, V, 1>;
  if (packs <= 32 * 2) return &launch_registers<T, kLog, 32, V, 2>;
  if (packs <= 32 * 4) return &launch_registers<T, kLog, 32, V, 4>;
  if (packs <= 256 * 1) return &launch_registers<T, kLog, 256, V, 1>;
  if (packs <= 256 * 2) return &launch_registers<T, kLog, 256, V, 2>;
  if constexpr (kMaxIters >= 4) {
    if (packs <= 256 * 4) return &launch_registers<T, kLog, 256, V, 4>;
  }
  if constexpr (kMaxIters >= 8) {
    if (packs <= 256 * 8) return &launch_registers<T, kLog, 256, V, 8>;
  }
  return nullptr;
}

template <typename T, bool kLog>
absl::Status softmax_kernel(const KernelContext& ctx) {
  const OpId op = kLog ? OpId::kLogSoftmax : OpId::kSoftmax;
  const Shape& shape = *ctx.inputs[0].shape;
  const int64_t cols = shape.dim(shape.rank() - 1);
  const int64_t n = shape.num_elements();
  if (n == 0) return absl::OkStatus();
  const int64_t rows = n / cols;
  const T* in = static_cast<const T*>(ctx.inputs[0].data);
  T* out = static_cast<T*>(ctx.output.data);
  const GpuState& state = gpu_state(ctx);
  constexpr int kVec = 16 / sizeof(T);
  const bool aligned = reinterpret_cast<uintptr_t>(in) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(out) % 16 == 0 && cols % kVec == 0;
  const Launcher<T> registers =
      aligned ? pick_registers<T, kLog, kVec>(cols / kVec) : pick_registers<T, kLog, 1>(cols);
  if (registers != nullptr) return registers(op, state, in, out, rows, cols);
  return launch(op, state, grid_for(rows, 1), 1024, &softmax_long_rows<T, kLog>, in, out, rows,
                cols);
}

template <bool kLog>
absl::Status register_softmax(KernelRegistry& registry, OpId op) {
  return add_gpu_kernels(registry, op, FloatTypes{}, [](auto tag) -> KernelFn {
    return &softmax_kernel<typename decltype(tag)::type, kLog>;
  });
}

}  // namespace

MT_OP_KERNELS(Softmax) { return register_softmax<false>(registry, OpId::kSoftmax); }
MT_OP_KERNELS(LogSoftmax) { return register_softmax<true>(registry, OpId::kLogSoftmax); }

}  // namespace mt::cuda
