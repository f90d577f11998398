// GPU kernel of TopKV2 (Note [Pads and top k] in kernels/pad_shape.cc): a thread per
// last-axis row picks its k elements one after the other, each the first in kernels/top_k.h's
// order among those after the previous pick (a total order, so the picks are the CPU's).
// The work is k passes over the row: fine for the small k of classifiers and beams, slow
// for a long sort of one row (a block-wide sort is the next step).
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

template <typename T>
absl::Status run_top_k(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int64_t cols = shape.dim(shape.rank() - 1), k = ctx.attrs->k;
  if (k == 0 || cols == 0) return absl::OkStatus();
  const int64_t rows = shape.num_elements() / cols;
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
