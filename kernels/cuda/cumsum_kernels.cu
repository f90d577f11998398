// GPU kernel of Cumsum: a thread per line along the axis, summing it in order (from the back
// when reverse; each output before its own element when exclusive), so that the sums are the
// CPU's. bfloat16 and float16 sum in float32 and round each output once. Neighbouring
// threads read neighbouring lines, contiguous when the axis is not the last.
#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(kThreads)
    cumsum(const T* __restrict__ in, T* __restrict__ out, int64_t lines, int64_t len, int64_t inner,
           bool exclusive, bool reverse) {
  for (int64_t line = int64_t{blockIdx.x} * kThreads + threadIdx.x; line < lines;
       line += int64_t{gridDim.x} * kThreads) {
    const int64_t base = line / inner * len * inner + line % inner;
    Compute<T> sum = Compute<T>(0);
    for (int64_t k = 0; k < len; ++k) {
      const int64_t at = base + (reverse ? len - 1 - k : k) * inner;
      const Compute<T> x = to_compute(in[at]);
      if (!exclusive) sum = add_op(sum, x);
      out[at] = from_compute<T>(sum);
      if (exclusive) sum = add_op(sum, x);
    }
  }
}

template <typename T>
absl::Status run_cumsum(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int axis =
      static_cast<int>(ctx.attrs->axis < 0 ? ctx.attrs->axis + shape.rank() : ctx.attrs->axis);
  const int64_t len = shape.dim(axis);
  if (shape.num_elements() == 0) return absl::OkStatus();
  int64_t inner = 1;
  for (int d = axis + 1; d < shape.rank(); ++d) inner *= shape.dim(d);
  const int64_t lines = shape.num_elements() / len;
  return launch(OpId::kCumsum, gpu_state(ctx), grid_for(lines, kThreads), kThreads, &cumsum<T>,
                static_cast<const T*>(ctx.inputs[0].data), static_cast<T*>(ctx.output.data), lines,
                len, inner, ctx.attrs->exclusive, ctx.attrs->reverse);
}

}  // namespace

MT_OP_KERNELS(Cumsum) {
  return add_gpu_kernels(registry, OpId::kCumsum, NumericTypes{}, [](auto tag) -> KernelFn {
    return &run_cumsum<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
