// CPU kernels of ArgMax and ArgMin: the input seen as (outer, axis, inner); each output
// element scans its axis (Note [Arg reductions]). bfloat16 and float16 compare exactly in
// float32.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

// Note [Arg reductions]: as TensorFlow's kernels, the scan starts from the type's lowest
// value (highest for ArgMin; -FLT_MAX, not -inf, for floats) at index 0 and moves only to a
// strictly larger (smaller) element: ties keep the first index, a NaN never wins, and a row
// of NaN or of -inf only gives 0. The GPU scans the same way (kernels/cuda/arg_kernels.cu).
template <bool kMax, typename W>
constexpr W start_value() {
  if constexpr (std::is_floating_point_v<W>) {
    return kMax ? -std::numeric_limits<W>::max() : std::numeric_limits<W>::max();
  } else {
    return kMax ? std::numeric_limits<W>::lowest() : std::numeric_limits<W>::max();
  }
}

template <bool kMax, typename T, typename Index>
void arg_rows(const T* in, Index* out, int64_t axis_len, int64_t inner, int64_t begin,
              int64_t end) {
  using Wide = std::conditional_t<kIsHalf<T>, float, T>;
  for (int64_t o = begin; o < end; ++o) {  // o = outer * inner + i
    const int64_t outer = o / inner, i = o - outer * inner;
    const T* p = in + outer * axis_len * inner + i;
    Wide best = start_value<kMax, Wide>();
    int64_t arg = 0;
    for (int64_t k = 0; k < axis_len; ++k) {
      const Wide v = static_cast<Wide>(p[k * inner]);
      if (kMax ? v > best : v < best) {
        best = v;
        arg = k;
      }
    }
    out[o] = static_cast<Index>(arg);
  }
}

template <bool kMax, typename T>
absl::Status arg_kernel(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int rank = shape.rank();
  const int axis = static_cast<int>(ctx.attrs->axis < 0 ? ctx.attrs->axis + rank : ctx.attrs->axis);
  const int64_t n = ctx.output.shape->num_elements();
  // An output with no element: nothing to scan, and the dimensions beside its 0 may multiply
  // past int64. Otherwise the input has elements (its axis is not empty) and `inner` fits.
  if (n == 0) return absl::OkStatus();
  int64_t inner = 1;
  for (int d = axis + 1; d < rank; ++d) inner *= shape.dim(d);
  const int64_t axis_len = shape.dim(axis);
  const T* in = input_data<T>(ctx, 0);
  const int64_t grain = std::max<int64_t>(1, 32768 / axis_len);
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    if (ctx.output.dtype == DType::kInt32) {
      arg_rows<kMax>(in, static_cast<int32_t*>(ctx.output.data), axis_len, inner, begin, end);
    } else {
      arg_rows<kMax>(in, static_cast<int64_t*>(ctx.output.data), axis_len, inner, begin, end);
    }
  });
  return absl::OkStatus();
}

template <bool kMax>
absl::Status add_arg(KernelRegistry& registry, OpId op) {
  return add_kernels(registry, op, NumericTypes{}, [](auto tag) -> KernelFn {
    return &arg_kernel<kMax, typename decltype(tag)::type>;
  });
}

}  // namespace

MT_OP_KERNELS(ArgMax) { return add_arg<true>(registry, OpId::kArgMax); }
MT_OP_KERNELS(ArgMin) { return add_arg<false>(registry, OpId::kArgMin); }

}  // namespace mt::cpu
