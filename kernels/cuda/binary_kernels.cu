// GPU kernels of the broadcasting binary ops, every row of MT_BINARY_OPS (the comparisons
// write bool).
//
// Note [Binary paths]: when each operand either has the output's element count (equal
// shapes up to size-1 dimensions) or a single element, the op is one vectorised
// map_kernel (elementwise.h). Any other broadcast walks the coalesced BroadcastPlan of
// kernels/broadcast.h: each thread splits its output index into plan coordinates with
// IndexDividers (no 64-bit division below 2^31 elements) and reads each operand at the sum
// of coordinates times strides. When the innermost plan dimension is a multiple of
// kVec<T>, a thread does kVec<T> outputs of one row with 128-bit accesses, reading a Vec
// of each operand that spans the row and one element of each that broadcasts along it.
#include <type_traits>

#include "kernels/broadcast.h"
#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

// The element functor of each row of MT_BINARY_OPS (kernels/op_table.h); a row without one
// fails to compile here.
template <OpId kOp>
struct BinaryFn;

template <>
struct BinaryFn<OpId::kAddV2> {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return add_op(a, b);
  }
};
template <>
struct BinaryFn<OpId::kSub> {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return sub_op(a, b);
  }
};
template <>
struct BinaryFn<OpId::kMul> {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return mul_op(a, b);
  }
};
template <>
struct BinaryFn<OpId::kRealDiv> {  // floating types only; IEEE division (no fast-math), as on the
                                   // CPU
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return div_op(a, b);
  }
};

// A NaN of either operand propagates, as on the CPU.
template <>
struct BinaryFn<OpId::kMaximum> {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    if constexpr (kIsFloating<T>) {
      const Compute<T> x = to_compute(a), y = to_compute(b);
      return x > y || x != x ? a : b;
    } else {
      return a > b ? a : b;
    }
  }
};
template <>
struct BinaryFn<OpId::kMinimum> {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    if constexpr (kIsFloating<T>) {
      const Compute<T> x = to_compute(a), y = to_compute(b);
      return x < y || x != x ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
};
template <>
struct BinaryFn<OpId::kSquaredDifference> {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    if constexpr (kIsHalf<T>) {
      const float d = to_compute(a) - to_compute(b);  // in float32, as the CPU's widened loop
      return from_compute<T>(d * d);
    } else {
      const T d = sub_op(a, b);
      return mul_op(d, d);
    }
  }
};

// The CPU's loops (Note [Integer floor division] in kernels/cpu/isa/elementwise_fns.h); the
// GPU does not reject a zero divisor: x // 0 and x % 0 are 0 (Note [Integer division by
// zero] in kernels/cpu/binary_kernels.cc).
template <typename T>
__device__ __forceinline__ T floordiv_value(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if (b == -1) return sub_op(T(0), a);
    const T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
  } else {
    return floor(a / b);
  }
}
template <typename T>
__device__ __forceinline__ T floormod_value(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0 || b == -1) return 0;
    const T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
  } else {
    const T r = fmod(a, b);
    return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
  }
}
template <typename T>
__device__ __forceinline__ T pow_value(T a, T b) {
  if constexpr (std::is_integral_v<T>) {  // a ** -k: 1 for a = 1, +-1 for a = -1, else 0
    if (b < 0) return a == 1 ? T(1) : a == -1 ? T(b % 2 == 0 ? 1 : -1) : T(0);
    T result = 1;
    for (T base = a; b != 0; b >>= 1) {
      if (b & 1) result = mul_op(result, base);
      base = mul_op(base, base);
    }
    return result;
  } else {
    return pow(a, b);
  }
}

// Applies f in Compute<T> (float32 for the 2-byte types), rounding once.
#define MT_COMPUTE_BINARY(Name, f)                               \
  template <>                                                    \
  struct BinaryFn<OpId::k##Name> {                               \
    template <typename T>                                        \
    __device__ T operator()(T a, T b) const {                    \
      if constexpr (kIsHalf<T>) {                                \
        return from_compute<T>(f(to_compute(a), to_compute(b))); \
      } else {                                                   \
        return f(a, b);                                          \
      }                                                          \
    }                                                            \
  };
MT_COMPUTE_BINARY(FloorDiv, floordiv_value)
MT_COMPUTE_BINARY(FloorMod, floormod_value)
#undef MT_COMPUTE_BINARY

// Note [Half Pow]: powf's exact float32 result costs more instructions than moving 2-byte
// elements allows (0.57x a memcpy for bfloat16). For a positive finite base and a finite
// exponent, exp2(y * log2(x)) in float32 is within a few float32 ulp of powf (a larger
// error only where the result is far outside the 2-byte range), far below the half ulp the
// result is rounded to; every other case (zero, negative or non-finite operands) takes powf.
template <>
struct BinaryFn<OpId::kPow> {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    if constexpr (kIsHalf<T>) {
      const float x = to_compute(a), y = to_compute(b);
      if (x > 0.f && x < INFINITY && fabsf(y) < INFINITY)
        return from_compute<T>(exp2f(y * log2f(x)));
      return from_compute<T>(powf(x, y));
    } else {
      return pow_value(a, b);
    }
  }
};

template <>
struct BinaryFn<OpId::kLogicalAnd> {  // bool only
  __device__ bool operator()(bool a, bool b) const { return a && b; }
};
template <>
struct BinaryFn<OpId::kLogicalOr> {
  __device__ bool operator()(bool a, bool b) const { return a || b; }
};

// The comparisons give bool (Note [Binary paths] holds with a bool output); a NaN
// compares unequal to everything. The 2-byte floats compare exactly in float32.
#define MT_COMPARISON_FN(Name, op)               \
  template <>                                    \
  struct BinaryFn<OpId::k##Name> {               \
    template <typename T>                        \
    __device__ bool operator()(T a, T b) const { \
      if constexpr (kIsHalf<T>) {                \
        return to_compute(a) op to_compute(b);   \
      } else {                                   \
        return a op b;                           \
      }                                          \
    }                                            \
  };
MT_COMPARISON_FN(Equal, ==)
MT_COMPARISON_FN(NotEqual, !=)
MT_COMPARISON_FN(Less, <)
MT_COMPARISON_FN(LessEqual, <=)
MT_COMPARISON_FN(Greater, >)
MT_COMPARISON_FN(GreaterEqual, >=)
#undef MT_COMPARISON_FN

// The output element type of kOp on T: T, or bool for the comparisons.
template <OpId kOp, typename T>
using BinaryOut = std::conditional_t<op_is_comparison(kOp), bool, T>;

// The general path of Note [Binary paths]: the plan by value, with a divider per dimension.
template <typename T, typename Out>
struct BroadcastArgs {
  const T* a;
  const T* b;
  Out* out;
  int64_t n;
  int rank;
  int64_t strides[2][kMaxBroadcastRank];
  IndexDivider dims[kMaxBroadcastRank];
  bool spans_inner[2];  // operand k has stride 1 (not 0) in the innermost dimension
};

// Sets the operands' offsets of output element `i`.
template <typename T, typename Out>
__device__ __forceinline__ void plan_offsets(const BroadcastArgs<T, Out>& p, int64_t i, int64_t* a,
                                             int64_t* b) {
  uint64_t rest = static_cast<uint64_t>(i);
  *a = *b = 0;
#pragma unroll
  for (int k = kMaxBroadcastRank - 1; k >= 0; --k) {
    if (k >= p.rank) continue;
    int64_t coord = static_cast<int64_t>(rest);
    if (k > 0) {
      const uint64_t outer = p.dims[k].div(rest);
      coord = static_cast<int64_t>(rest - outer * p.dims[k].d);
      rest = outer;
    }
    *a += coord * p.strides[0][k];
    *b += coord * p.strides[1][k];
  }
}

// Reads kWidth neighbouring elements of an operand along the innermost dimension: one Vec
// when it spans that dimension (kWidth > 1 only when aligned), else one repeated element.
template <int kWidth, typename T>
__device__ __forceinline__ void load_run(const T* p, int64_t offset, bool spans, T (&x)[kWidth]) {
  if constexpr (kWidth > 1) {
    if (spans) {
      const Vec<T> v = *reinterpret_cast<const Vec<T>*>(p + offset);
#pragma unroll
      for (int j = 0; j < kWidth; ++j) x[j] = v.v[j];
      return;
    }
  }
  const T s = p[offset];
#pragma unroll
  for (int j = 0; j < kWidth; ++j) x[j] = s;
}

// Each thread computes kWidth neighbouring outputs: kVec<T> (128-bit accesses) when the
// innermost dimension is a multiple of it and the pointers are aligned, else 1.
template <typename Fn, typename T, typename Out, int kWidth>
__global__ void __launch_bounds__(kThreads) broadcast_kernel(BroadcastArgs<T, Out> p, Fn fn) {
  const int64_t stride = int64_t{gridDim.x} * kThreads;
  const int64_t runs = p.n / kWidth;
#pragma unroll 1
  for (int64_t v = int64_t{blockIdx.x} * kThreads + threadIdx.x; v < runs; v += stride) {
    int64_t offset_a, offset_b;
    plan_offsets(p, v * kWidth, &offset_a, &offset_b);
    T x[kWidth], y[kWidth];
    load_run<kWidth>(p.a, offset_a, p.spans_inner[0], x);
    load_run<kWidth>(p.b, offset_b, p.spans_inner[1], y);
    if constexpr (kWidth > 1) {
      OutVec<T, Out> out;
#pragma unroll
      for (int j = 0; j < kWidth; ++j) out.v[j] = fn(x[j], y[j]);
      reinterpret_cast<OutVec<T, Out>*>(p.out)[v] = out;
    } else {
      p.out[v] = fn(x[0], y[0]);
    }
  }
}

template <OpId kOp, typename Fn, typename T, typename Out>
absl::Status launch_broadcast(const KernelContext& ctx, const T* a, const T* b, Out* out,
                              int64_t n) {
  BroadcastPlan plan;
  MT_CHECK(make_broadcast_plan(*ctx.inputs[0].shape, *ctx.inputs[1].shape, &plan));
  BroadcastArgs<T, Out> p{a, b, out, n, plan.rank, {}, {}, {}};
  for (int k = 0; k < plan.rank; ++k) {
    p.strides[0][k] = plan.strides[0][k];
    p.strides[1][k] = plan.strides[1][k];
    p.dims[k] = IndexDivider::make(plan.dims[k], n);
  }
  const int last = plan.rank - 1;  // a broadcast (n > 1, unequal shapes) has rank >= 1
  p.spans_inner[0] = plan.strides[0][last] == 1;
  p.spans_inner[1] = plan.strides[1][last] == 1;
  const bool vectorized = plan.dims[last] % kVec<T> == 0 && is_vec_aligned(out) &&
                          (!p.spans_inner[0] || is_vec_aligned(a)) &&
                          (!p.spans_inner[1] || is_vec_aligned(b));
  const GpuState& state = gpu_state(ctx);
  if (vectorized) {
    return launch(kOp, state, grid_for(n / kVec<T>, kThreads), kThreads,
                  &broadcast_kernel<Fn, T, Out, kVec<T>>, p, Fn{});
  }
  return launch(kOp, state, grid_for(n, kThreads), kThreads, &broadcast_kernel<Fn, T, Out, 1>, p,
                Fn{});
}

// kOp names the op in errors; kFnOp picks the functor (BiasAdd adds as AddV2 does).
template <OpId kOp, typename T, OpId kFnOp = kOp>
absl::Status run_binary(const KernelContext& ctx) {
  using Fn = BinaryFn<kFnOp>;
  const TensorArg& a = ctx.inputs[0];
  const TensorArg& b = ctx.inputs[1];
  using Out = BinaryOut<kFnOp, T>;
  MapArgs<T, 2, Out> args;
  args.in[0] = static_cast<const T*>(a.data);
  args.in[1] = static_cast<const T*>(b.data);
  args.out = static_cast<Out*>(ctx.output.data);
  args.n = ctx.output.shape->num_elements();
  if (args.n == 0) return absl::OkStatus();
  const int64_t na = a.shape->num_elements(), nb = b.shape->num_elements();
  if ((na == args.n || na == 1) && (nb == args.n || nb == 1)) {
    args.scalar[0] = na != args.n;
    args.scalar[1] = nb != args.n;
    return launch_map(kOp, ctx, args, Fn{});
  }
  return launch_broadcast<kOp, Fn>(ctx, args.in[0], args.in[1], args.out, args.n);
}

// Registers run_binary<kOp, T> for each dtype the GPU implements for kOp.
template <OpId kOp>
absl::Status add_binary(KernelRegistry& registry) {
  return add_gpu_kernels(registry, kOp, TypesIn<op_gpu_dtypes(kOp)>{}, [](auto tag) -> KernelFn {
    return &run_binary<kOp, typename decltype(tag)::type>;
  });
}

// AssignAddVariableOp and AssignSubVariableOp: kFnOp's kernel writing into input 0, the
// variable's buffer (same shapes: each element is read before it is written, by one thread).
template <OpId kOp, typename T, OpId kFnOp>
absl::Status run_in_place(const KernelContext& ctx) {
  const MutableTensorArg out{const_cast<void*>(ctx.inputs[0].data), ctx.inputs[0].shape,
                             ctx.inputs[0].dtype};
  const KernelContext in_place{ctx.inputs, out, ctx.attrs, ctx.device_state, {&out, 1}};
  return run_binary<kOp, T, kFnOp>(in_place);
}

}  // namespace

// BiasAdd's (value [..., C], bias [C]) is a broadcasting AddV2 (validated by infer_bias_add).
#define MT_BINARY_KERNELS(Name, ...) \
  MT_OP_KERNELS(Name) { return add_binary<OpId::k##Name>(registry); }
MT_BINARY_OPS(MT_BINARY_KERNELS)
#undef MT_BINARY_KERNELS
MT_OP_KERNELS(AssignAddVariableOp) {
  return add_gpu_kernels(registry, OpId::kAssignAddVariableOp, NumericTypes{},
                         [](auto tag) -> KernelFn {
                           return &run_in_place<OpId::kAssignAddVariableOp,
                                                typename decltype(tag)::type, OpId::kAddV2>;
                         });
}
MT_OP_KERNELS(AssignSubVariableOp) {
  return add_gpu_kernels(
      registry, OpId::kAssignSubVariableOp, NumericTypes{}, [](auto tag) -> KernelFn {
        return &run_in_place<OpId::kAssignSubVariableOp, typename decltype(tag)::type, OpId::kSub>;
      });
}
MT_OP_KERNELS(BiasAdd) {
  return add_gpu_kernels(registry, OpId::kBiasAdd, NumericTypes{}, [](auto tag) -> KernelFn {
    return &run_binary<OpId::kBiasAdd, typename decltype(tag)::type, OpId::kAddV2>;
  });
}

}  // namespace mt::cuda
