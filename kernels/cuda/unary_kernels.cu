// GPU kernels of the element-wise unary ops, every row of MT_UNARY_OPS, each one map_kernel
// (Note [Vectorised element-wise] in elementwise.h). Results match the CPU kernels bit for
// bit, except Exp, Log, Log1p, Tanh and Sigmoid, which CUDA's functions compute to within 2
// ulp (bfloat16 and float16 take the float function of the widened value, then round: Note
// [Half arithmetic on the GPU]).
#include <type_traits>

#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

// The element functor of each row of MT_UNARY_OPS (kernels/op_table.h); a row without one
// fails to compile here.
template <OpId kOp>
struct UnaryFn;

// -x; -0.0 for 0.0, and the lowest integer stays itself (as the CPU kernel).
template <>
struct UnaryFn<OpId::kNeg> {
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

template <>
struct UnaryFn<OpId::kAbs> {
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

template <>
struct UnaryFn<OpId::kExp> {  // floating types only
  template <typename T>
  __device__ T operator()(T x) const {
    if constexpr (kIsHalf<T>) {
      return from_compute<T>(expf(to_compute(x)));
    } else {
      return exp(x);  // expf for float, through CUDA's overloads
    }
  }
};

template <>
struct UnaryFn<OpId::kRelu> {  // max(x, 0); NaN passes through
  template <typename T>
  __device__ T operator()(T x) const {
    if constexpr (kIsHalf<T>) {
      return to_compute(x) < 0.f ? half_from_bits<T>(0) : x;
    } else {
      return x < T(0) ? T(0) : x;
    }
  }
};

// Applies a floating-point function: in float32 for the 2-byte types, then rounded.
#define MT_FLOAT_FN(expr)               \
  template <typename T>                 \
  __device__ T operator()(T in) const { \
    if constexpr (kIsHalf<T>) {         \
      const float x = to_compute(in);   \
      return from_compute<T>(expr);     \
    } else {                            \
      const T x = in;                   \
      return expr;                      \
    }                                   \
  }

// IEEE sqrt and division (nvcc's defaults, no fast-math): bit for bit as on the CPU.
template <>
struct UnaryFn<OpId::kSqrt> {
  MT_FLOAT_FN(sqrt(x))
};
template <>
struct UnaryFn<OpId::kRsqrt> {  // 1 / sqrt(x), not rsqrt(): the CPU's value exactly
  MT_FLOAT_FN(1 / sqrt(x))
};
template <>
struct UnaryFn<OpId::kLog> {  // CUDA's log/logf: within 1 ulp
  MT_FLOAT_FN(log(x))
};
template <>
struct UnaryFn<OpId::kLog1p> {
  MT_FLOAT_FN(log1p(x))
};
template <>
struct UnaryFn<OpId::kErf> {  // CUDA's erf/erff: within 2 ulp
  MT_FLOAT_FN(erf(x))
};
template <>
struct UnaryFn<OpId::kSin> {  // CUDA's sin/sinf: within 2 ulp
  MT_FLOAT_FN(sin(x))
};
template <>
struct UnaryFn<OpId::kCos> {  // CUDA's cos/cosf: within 2 ulp
  MT_FLOAT_FN(cos(x))
};
template <>
struct UnaryFn<OpId::kTanh> {  // within 2 ulp
  MT_FLOAT_FN(tanh(x))
};
// The CPU's formula (elementwise_fns.h): r = 1 / (1 + e) for x >= 0, e * r below, with
// e = exp(-|x|).
template <>
struct UnaryFn<OpId::kSigmoid> {
  MT_FLOAT_FN((x >= 0 ? 1 / (1 + exp(-fabs(x))) : exp(-fabs(x)) * (1 / (1 + exp(-fabs(x))))))
};
template <>
struct UnaryFn<OpId::kFloor> {
  MT_FLOAT_FN(floor(x))
};
#undef MT_FLOAT_FN

template <>
struct UnaryFn<OpId::kSquare> {
  template <typename T>
  __device__ T operator()(T x) const {
    return mul_op(x, x);
  }
};

// -1, 0 or 1; a zero keeps its sign and NaN stays NaN (as the CPU kernel).
template <>
struct UnaryFn<OpId::kSign> {
  template <typename T>
  __device__ T operator()(T x) const {
    if constexpr (kIsHalf<T>) {
      const float f = to_compute(x);
      return f > 0.f ? from_compute<T>(1.f) : f < 0.f ? from_compute<T>(-1.f) : x;
    } else {
      return x > T(0) ? T(1) : x < T(0) ? T(-1) : x;
    }
  }
};

// Half to even (rint); integers stay themselves.
template <>
struct UnaryFn<OpId::kRound> {
  template <typename T>
  __device__ T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      return x;
    } else if constexpr (kIsHalf<T>) {
      return from_compute<T>(rintf(to_compute(x)));
    } else {
      return rint(x);
    }
  }
};

template <>
struct UnaryFn<OpId::kLogicalNot> {  // bool only
  __device__ bool operator()(bool x) const { return !x; }
};

template <OpId kOp, typename T>
absl::Status run_unary(const KernelContext& ctx) {
  MapArgs<T, 1> args;
  args.in[0] = static_cast<const T*>(ctx.inputs[0].data);
  args.out = static_cast<T*>(ctx.output.data);
  args.n = ctx.output.shape->num_elements();
  return launch_map(kOp, ctx, args, UnaryFn<kOp>{});
}

// Registers run_unary<kOp, T> for each dtype the GPU implements for kOp.
template <OpId kOp>
absl::Status add_unary(KernelRegistry& registry) {
  return add_gpu_kernels(registry, kOp, TypesIn<op_gpu_dtypes(kOp)>{}, [](auto tag) -> KernelFn {
    return &run_unary<kOp, typename decltype(tag)::type>;
  });
}

}  // namespace

#define MT_UNARY_KERNELS(Name, ...) \
  MT_OP_KERNELS(Name) { return add_unary<OpId::k##Name>(registry); }
MT_UNARY_OPS(MT_UNARY_KERNELS)
#undef MT_UNARY_KERNELS

}  // namespace mt::cuda
