// GPU kernels of the element-wise unary ops: Neg, Abs, Exp and Relu, each one map_kernel
// (Note [Vectorised element-wise] in elementwise.h). Results match the CPU kernels bit for
// bit, except Exp, which CUDA's exp/expf compute to within 2 ulp (bfloat16 and float16 take
// expf of the widened value, then round: Note [Half arithmetic on the GPU]).
#include <type_traits>

#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

// -x; -0.0 for 0.0, and the lowest integer stays itself (as the CPU kernel).
struct NegFn {
  template <typename T>
  __device__ T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      return sub_op(T(0), x);
    } else if constexpr (kIsHalf<T>) {
      return half_from_bits<T>(x.bits ^ 0x8000u);  // the sign bit, as float negation
    } else {
      return -x;
    }
  }
};

struct AbsFn {
  template <typename T>
  __device__ T operator()(T x) const {
    if constexpr (kIsHalf<T>) {
      return half_from_bits<T>(x.bits & 0x7fffu);
    } else if constexpr (std::is_floating_point_v<T>) {
      return fabs(x);
    } else {
      return x < T(0) ? sub_op(T(0), x) : x;
    }
  }
};

struct ExpFn {  // floating types only
  template <typename T>
  __device__ T operator()(T x) const {
    if constexpr (kIsHalf<T>) {
      return from_compute<T>(expf(to_compute(x)));
    } else {
      return exp(x);  // expf for float, through CUDA's overloads
    }
  }
};

struct ReluFn {  // max(x, 0); NaN passes through
  template <typename T>
  __device__ T operator()(T x) const {
    if constexpr (kIsHalf<T>) {
      return to_compute(x) < 0.f ? half_from_bits<T>(0) : x;
    } else {
      return x < T(0) ? T(0) : x;
    }
  }
};

template <OpId kOp, typename Fn, typename T>
absl::Status run_unary(const KernelContext& ctx) {
  MapArgs<T, 1> args;
  args.in[0] = static_cast<const T*>(ctx.inputs[0].data);
  args.out = static_cast<T*>(ctx.output.data);
  args.n = ctx.output.shape->num_elements();
  return launch_map(kOp, ctx, args, Fn{});
}

// Registers run_unary<kOp, Fn, T> for each T in `types`.
template <OpId kOp, typename Fn, typename Types>
absl::Status add_unary(KernelRegistry& registry, Types types) {
  return add_gpu_kernels(registry, kOp, types, [](auto tag) -> KernelFn {
    return &run_unary<kOp, Fn, typename decltype(tag)::type>;
  });
}

}  // namespace

absl::Status register_unary_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR((add_unary<OpId::kNeg, NegFn>(registry, NumericTypes{})));
  MT_RETURN_IF_ERROR((add_unary<OpId::kAbs, AbsFn>(registry, NumericTypes{})));
  MT_RETURN_IF_ERROR((add_unary<OpId::kExp, ExpFn>(registry, FloatTypes{})));
  return add_unary<OpId::kRelu, ReluFn>(registry, NumericTypes{});
}

}  // namespace mt::cuda
