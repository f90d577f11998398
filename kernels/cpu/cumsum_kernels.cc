// CPU kernel of Cumsum: each line along the axis summed in order, from the front or (reverse)
// the back, each output before (exclusive) or after its own element is added. Integers wrap;
// bfloat16 and float16 sum in float32 and round each output once. Lines split across threads.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

template <typename T>
absl::Status cumsum_kernel(const KernelContext& ctx) {
  using Acc = std::conditional_t<kIsHalf<T>, float, T>;
  const Shape& shape = *ctx.inputs[0].shape;
  const int axis =
      static_cast<int>(ctx.attrs->axis < 0 ? ctx.attrs->axis + shape.rank() : ctx.attrs->axis);
  const int64_t len = shape.dim(axis);
  int64_t inner = 1;
  for (int d = axis + 1; d < shape.rank(); ++d) inner *= shape.dim(d);
  const int64_t lines = len == 0 ? 0 : shape.num_elements() / len;
  const bool exclusive = ctx.attrs->exclusive, reverse = ctx.attrs->reverse;
  const T* in = input_data<T>(ctx, 0);
  T* out = output_data<T>(ctx);
  parallel_for(lines, std::max<int64_t>(1, 16384 / std::max<int64_t>(len, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t line = begin; line < end; ++line) {
                   const int64_t base = line / inner * len * inner + line % inner;
                   Acc sum = Acc(0);
                   for (int64_t k = 0; k < len; ++k) {
                     const int64_t at = base + (reverse ? len - 1 - k : k) * inner;
                     const Acc x = static_cast<Acc>(in[at]);
                     if (!exclusive) sum = add_op(sum, x);
                     out[at] = static_cast<T>(sum);
                     if (exclusive) sum = add_op(sum, x);
                   }
                 }
               });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(Cumsum) {
  return add_kernels(registry, OpId::kCumsum, NumericTypes{}, [](auto tag) -> KernelFn {
    return &cumsum_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
