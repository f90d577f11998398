// CPU kernels of the reductions Sum, Mean and Max.
//
// Note [Reduction layout]: the input is viewed with its size-1 dimensions dropped and
// neighbouring dimensions merged when both are kept or both reduced, so dimensions
// alternate between kept and reduced runs. The output starts at the reducer's identity;
// each innermost row of the input is then either reduced to one value (innermost run
// reduced) or combined element-wise into a row of the output (innermost run kept).
#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"

namespace mt::cpu {
namespace {

struct Layout {
  Shape::Dims dims;            // merged dimensions, outermost first
  internal::AxisMask reduced;  // whether each merged dimension is reduced
};

Layout merge_dims(const Shape& shape, const internal::AxisMask& mask) {
  Layout layout;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape.dim(i) == 1) continue;
    if (!layout.dims.empty() && layout.reduced.back() == mask[i]) {
      layout.dims.back() *= shape.dim(i);
    } else {
      layout.dims.push_back(shape.dim(i));
      layout.reduced.push_back(mask[i]);
    }
  }
  return layout;
}

template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

struct SumReducer {
  template <typename T>
  static T identity() {
    return T(0);
  }
  template <typename T>
  static T combine(T a, T b) {
    return add_op(a, b);
  }
  template <typename T>
  static T reduce(const T* in, int64_t n) {
    if constexpr (std::is_integral_v<T>) {  // wrap, as add_op does, instead of overflowing
      using U = Unsigned<T>;
      return static_cast<T>(ConstArrayMap<U>(reinterpret_cast<const U*>(in), n).sum());
    } else {
      return ConstArrayMap<T>(in, n).sum();
    }
  }
};

struct MaxReducer {  // NaN wins, as in TensorFlow
  template <typename T>
  static T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) {
      return -std::numeric_limits<T>::infinity();
    }
    return std::numeric_limits<T>::lowest();
  }
  template <typename T>
  static T combine(T a, T b) {
    return (b > a || b != b) ? b : a;
  }
  template <typename T>
  static T reduce(const T* in, int64_t n) {
    return ConstArrayMap<T>(in, n).template maxCoeff<Eigen::PropagateNaN>();
  }
};

// Reduces `in` into `out` (already at the identity) following Note [Reduction layout].
template <typename R, typename T>
void reduce_into(const Layout& layout, const T* in, T* __restrict out) {
  const int rank = static_cast<int>(layout.dims.size());
  if (rank == 0) {
    out[0] = R::combine(out[0], in[0]);
    return;
  }
  const int last = rank - 1;
  const int64_t inner = layout.dims[last];
  Shape::Dims out_stride(rank), index(rank);
  int64_t stride = 1, rows = 1;
  for (int k = last; k >= 0; --k) {
    out_stride[k] = layout.reduced[k] ? 0 : stride;
    if (!layout.reduced[k]) stride *= layout.dims[k];
    if (k < last) rows *= layout.dims[k];
  }
  int64_t o = 0;
  for (int64_t row = 0; row < rows; ++row) {
    const T* src = in + row * inner;
    if (layout.reduced[last]) {
      out[o] = R::combine(out[o], R::reduce(src, inner));
    } else {
      for (int64_t j = 0; j < inner; ++j) out[o + j] = R::combine(out[o + j], src[j]);
    }
    for (int k = last - 1; k >= 0; --k) {
      o += out_stride[k];
      if (++index[k] < layout.dims[k]) break;
      o -= out_stride[k] * layout.dims[k];
      index[k] = 0;
    }
  }
}

// Mean: divides each sum by the count of reduced elements (Note [Reductions] in op_def.h).
template <typename T>
void divide_by_count(T* out, int64_t n, int64_t count) {
  if constexpr (std::is_integral_v<T>) {
    if (count == 0) return;  // the sums are 0
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(int64_t{out[i]} / count);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] /= static_cast<T>(count);
  }
}

template <OpId kOp, typename T>
absl::Status reduction_kernel(const KernelContext& ctx) {
  using R = std::conditional_t<kOp == OpId::kMax, MaxReducer, SumReducer>;
  const Shape& in_shape = *ctx.inputs[0].shape;
  const int64_t n = ctx.output.shape->num_elements();
  T* out = output_data<T>(ctx);
  for (int64_t i = 0; i < n; ++i) out[i] = R::template identity<T>();
  if (n == 0) return absl::OkStatus();
  internal::AxisMask mask;
  MT_CHECK(internal::reduction_mask(kOp, in_shape, *ctx.attrs, &mask).ok());
  if (in_shape.num_elements() != 0) {
    reduce_into<R>(merge_dims(in_shape, mask), input_data<T>(ctx, 0), out);
  }
  if constexpr (kOp == OpId::kMean) {
    // The product of some dimensions of a valid shape fits, unless another one is 0: then
    // nothing is reduced and the count is 0.
    int64_t count = in_shape.num_elements() == 0 ? 0 : 1;
    for (int i = 0; i < in_shape.rank() && count != 0; ++i) {
      count *= mask[i] ? in_shape.dim(i) : 1;
    }
    divide_by_count(out, n, count);
  }
  return absl::OkStatus();
}

// Registers reduction_kernel<kOp, T> for every numeric T.
template <OpId kOp>
absl::Status add_reduction(KernelRegistry& registry) {
  return add_kernels(registry, kOp, NumericTypes{}, [](auto tag) -> KernelFn {
    return &reduction_kernel<kOp, typename decltype(tag)::type>;
  });
}

}  // namespace

absl::Status register_reduction_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR(add_reduction<OpId::kSum>(registry));
  MT_RETURN_IF_ERROR(add_reduction<OpId::kMean>(registry));
  return add_reduction<OpId::kMax>(registry);
}

}  // namespace mt::cpu
