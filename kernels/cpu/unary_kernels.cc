// CPU kernels of the element-wise unary ops: Neg, Abs, Exp and Relu.
#include <Eigen/Core>
#include <cmath>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"

namespace mt::cpu {
namespace {

// Returns -x; -0.0 for 0.0, and the lowest integer stays itself (Note [Integer overflow]).
template <typename T>
T neg_op(T x) {
  if constexpr (std::is_integral_v<T>) return sub_op(T(0), x);
  return -x;
}

// Each op maps n contiguous elements; the output never aliases the input.
struct NegFn {
  template <typename T>
  static void apply(const T* in, T* __restrict out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = neg_op(in[i]);
  }
};

struct AbsFn {
  template <typename T>
  static void apply(const T* in, T* __restrict out, int64_t n) {
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t i = 0; i < n; ++i) out[i] = std::fabs(in[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = in[i] < 0 ? neg_op(in[i]) : in[i];
    }
  }
};

// Note [Eigen exp underflow]: Eigen 3.4's vectorised exp clamps its input at -88.72
// (float) or -709.78 (double), so below that it returns ~3e-39 or ~6e-309 instead of a
// smaller value or 0, exp(-inf) included. Those elements are recomputed with std::exp.
struct ExpFn {  // floating types only
  template <typename T>
  static void apply(const T* in, T* out, int64_t n) {
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    Eigen::Map<Array>(out, n) = Eigen::Map<const Array>(in, n).exp();
    constexpr T kLow = std::is_same_v<T, float> ? T(-88) : T(-709);
    for (int64_t i = 0; i < n; ++i) {
      if (__builtin_expect(in[i] < kLow, 0)) out[i] = std::exp(in[i]);
    }
  }
};

struct ReluFn {  // max(x, 0); NaN passes through
  template <typename T>
  static void apply(const T* in, T* __restrict out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] < T(0) ? T(0) : in[i];
  }
};

template <typename Fn, typename T>
absl::Status unary_kernel(const KernelContext& ctx) {
  Fn::apply(input_data<T>(ctx, 0), output_data<T>(ctx), ctx.output.shape->num_elements());
  return absl::OkStatus();
}

// Registers unary_kernel<Fn, T> for `op` and each T in `types`.
template <typename Fn, typename Types>
absl::Status add_unary(KernelRegistry& registry, OpId op, Types types) {
  return add_kernels(registry, op, types, [](auto tag) -> KernelFn {
    return &unary_kernel<Fn, typename decltype(tag)::type>;
  });
}

}  // namespace

absl::Status register_unary_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR(add_unary<NegFn>(registry, OpId::kNeg, NumericTypes{}));
  MT_RETURN_IF_ERROR(add_unary<AbsFn>(registry, OpId::kAbs, NumericTypes{}));
  MT_RETURN_IF_ERROR(add_unary<ExpFn>(registry, OpId::kExp, FloatTypes{}));
  return add_unary<ReluFn>(registry, OpId::kRelu, NumericTypes{});
}

}  // namespace mt::cpu
