// GPU kernel of SparseSoftmaxCrossEntropyWithLogits (Note [Sparse cross-entropy] in
// kernels/cpu/nn_kernels.cc): one warp per row of logits, in float32 for the 2-byte floats.
// The max and the sum are warp reductions over three passes of the row (the row's later
// passes hit L1/L2); a label outside [0, classes) makes its row's loss and gradient NaN, as
// TensorFlow's GPU kernel (checking would need a synchronisation).
#include <cmath>

#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

__device__ __forceinline__ float exp_of(float x) { return expf(x); }
__device__ __forceinline__ double exp_of(double x) { return exp(x); }
__device__ __forceinline__ float log_of(float x) { return logf(x); }
__device__ __forceinline__ double log_of(double x) { return log(x); }

template <typename T, typename Label>
__global__ void __launch_bounds__(kThreads)
    xent_rows(const T* __restrict__ logits, const Label* __restrict__ labels, T* __restrict__ loss,
              T* __restrict__ grad, int64_t rows, int64_t cols) {
  using C = Compute<T>;
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (kThreads / 32);
  for (int64_t row = int64_t{blockIdx.x} * (kThreads / 32) + threadIdx.x / 32; row < rows;
       row += warps) {
    const T* x = logits + row * cols;
    T* g = grad + row * cols;
    const int64_t label = static_cast<int64_t>(labels[row]);
    C max = static_cast<C>(-INFINITY);
    for (int64_t j = lane; j < cols; j += 32) {
      const C v = to_compute(x[j]);
      max = v > max ? v : max;  // a NaN is dropped here but reaches the sum
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      const C other = __shfl_xor_sync(0xffffffffu, max, offset);
      max = other > max ? other : max;
    }
    C sum = 0;
    for (int64_t j = lane; j < cols; j += 32) sum += exp_of(to_compute(x[j]) - max);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    const C log_sum = log_of(sum);
    const bool valid = label >= 0 && label < cols;
    const C nan = static_cast<C>(NAN);
    for (int64_t j = lane; j < cols; j += 32) {
      const C p = exp_of(to_compute(x[j]) - max - log_sum);
      g[j] = from_compute<T>(!valid ? nan : j == label ? p - C(1) : p);
    }
    if (lane == 0) {
      loss[row] = from_compute<T>(valid ? log_sum - (to_compute(x[label]) - max) : nan);
    }
  }
}

template <typename T>
absl::Status run_xent(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kSparseSoftmaxCrossEntropyWithLogits;
  const int64_t rows = ctx.inputs[0].shape->dim(0), cols = ctx.inputs[0].shape->dim(1);
  if (rows == 0) return absl::OkStatus();
  const GpuState& state = gpu_state(ctx);
  const unsigned grid =
      std::min<int64_t>(grid_for(rows, kThreads / 32), int64_t{sm_count(state)} * 16);
  const T* logits = static_cast<const T*>(ctx.inputs[0].data);
  T* loss = static_cast<T*>(ctx.outputs[0].data);
  T* grad = static_cast<T*>(ctx.outputs[1].data);
  if (ctx.inputs[1].dtype == DType::kInt32) {
    return launch(kOp, state, grid, kThreads, &xent_rows<T, int32_t>, logits,
                  static_cast<const int32_t*>(ctx.inputs[1].data), loss, grad, rows, cols);
  }
  return launch(kOp, state, grid, kThreads, &xent_rows<T, int64_t>, logits,
                static_cast<const int64_t*>(ctx.inputs[1].data), loss, grad, rows, cols);
}

}  // namespace

MT_OP_KERNELS(SparseSoftmaxCrossEntropyWithLogits) {
  return add_gpu_kernels(
      registry, OpId::kSparseSoftmaxCrossEntropyWithLogits, FloatTypes{},
      [](auto tag) -> KernelFn { return &run_xent<typename decltype(tag)::type>; });
}

}  // namespace mt::cuda
