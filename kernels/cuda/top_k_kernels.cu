// GPU kernels of TopKV2 (Note [Pads and top k] in kernels/pad_shape.cc): each last-axis row
// picks its k elements one after the other, each the first in kernels/top_k.h's order among
// those after the previous pick (a total order, so the picks are the CPU's). Rows of up to
// kShortRow elements take a thread each; longer rows a block each, whose threads scan a
// strided part of the row and reduce their picks in shared memory. The work is k passes
// over the row: fine for the small k of classifiers and beams, slow for a long sort (a
// block-wide radix sort is the next step).
#include <cstdint>

#include "kernels/cuda/elementwise.h"
#include "kernels/top_k.h"

namespace mt::cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(kThreads)
    top_k(const T* __restrict__ in, T* __restrict__ values, int32_t* __restrict__ indices,
          int64_t rows, int64_t cols, int64_t k) {
  for (int64_t r = int64_t{blockIdx.x} * kThreads + threadIdx.x; r < rows;
       r += int64_t{gridDim.x} * kThreads) {
    const T* row = in + r * cols;
    Compute<T> last = Compute<T>(0);
    int64_t last_at = -1;
    for (int64_t j = 0; j < k; ++j) {
      Compute<T> best = Compute<T>(0);
      int64_t best_at = -1;
      for (int64_t c = 0; c < cols; ++c) {
        const Compute<T> v = to_compute(row[c]);
        if (last_at >= 0 && !internal::ranks_before(last, last_at, v, c)) continue;
        if (best_at < 0 || internal::ranks_before(v, c, best, best_at)) best = v, best_at = c;
      }
      values[r * k + j] = row[best_at];
      indices[r * k + j] = static_cast<int32_t>(best_at);
      last = best, last_at = best_at;
    }
  }
}

constexpr int64_t kShortRow = 64;
constexpr int kRowThreads = 256;

// A block per row: each pick is the block's best of its threads' bests.
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    top_k_rows(const T* __restrict__ in, T* __restrict__ values, int32_t* __restrict__ indices,
               int64_t rows, int64_t cols, int64_t k) {
  __shared__ Compute<T> shared_value[kRowThreads];
  __shared__ int64_t shared_at[kRowThreads];
  const int t = threadIdx.x;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = in + r * cols;
    Compute<T> last = Compute<T>(0);
    int64_t last_at = -1;
    for (int64_t j = 0; j < k; ++j) {
      Compute<T> best = Compute<T>(0);
      int64_t best_at = -1;
      for (int64_t c = t; c < cols; c += kRowThreads) {
        const Compute<T> v = to_compute(row[c]);
        if (last_at >= 0 && !internal::ranks_before(last, last_at, v, c)) continue;
        if (best_at < 0 || internal::ranks_before(v, c, best, best_at)) best = v, best_at = c;
      }
      shared_value[t] = best;
      shared_at[t] = best_at;
      __syncthreads();
      for (int half = kRowThreads / 2; half > 0; half /= 2) {
        const int64_t other = t < half ? shared_at[t + half] : -1;
        if (other >= 0 &&
            (shared_at[t] < 0 || internal::ranks_before(shared_value[t + half], other,
                                                        shared_value[t], shared_at[t]))) {
          shared_value[t] = shared_value[t + half];
          shared_at[t] = other;
        }
        __syncthreads();
      }
      last = shared_value[0], last_at = shared_at[0];
      if (t == 0) {
        values[r * k + j] = row[last_at];
        indices[r * k + j] = static_cast<int32_t>(last_at);
      }
      __syncthreads();  // every thread has read the pick before the next overwrites it
    }
  }
}

template <typename T>
absl::Status run_top_k(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int64_t cols = shape.dim(shape.rank() - 1), k = ctx.attrs->k;
  if (k == 0 || cols == 0) return absl::OkStatus();
  const int64_t rows = shape.num_elements() / cols;
  if (cols > kShortRow) {
    return launch(OpId::kTopKV2, gpu_state(ctx), grid_for(rows, 1), kRowThreads, &top_k_rows<T>,
                  static_cast<const T*>(ctx.inputs[0].data), static_cast<T*>(ctx.output.data),
                  static_cast<int32_t*>(ctx.outputs[1].data), rows, cols, k);
  }
  return launch(OpId::kTopKV2, gpu_state(ctx), grid_for(rows, kThreads), kThreads, &top_k<T>,
                static_cast<const T*>(ctx.inputs[0].data), static_cast<T*>(ctx.output.data),
                static_cast<int32_t*>(ctx.outputs[1].data), rows, cols, k);
}

}  // namespace

MT_OP_KERNELS(TopKV2) {
  return add_gpu_kernels(registry, OpId::kTopKV2, NumericTypes{}, [](auto tag) -> KernelFn {
    return &run_top_k<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
