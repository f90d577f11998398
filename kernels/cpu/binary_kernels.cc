// CPU kernels of the broadcasting binary ops: AddV2, Sub, Mul and RealDiv. Equal shapes
// take one contiguous loop; other shapes walk a coalesced BroadcastPlan (broadcast.h).
#include "kernels/broadcast.h"
#include "kernels/cpu/cpu_kernels.h"

namespace mt::cpu {
namespace {

struct AddFn {
  template <typename T>
  T operator()(T a, T b) const {
    return add_op(a, b);
  }
};
struct SubFn {
  template <typename T>
  T operator()(T a, T b) const {
    return sub_op(a, b);
  }
};
struct MulFn {
  template <typename T>
  T operator()(T a, T b) const {
    return mul_op(a, b);
  }
};
struct DivFn {  // floating types only
  template <typename T>
  T operator()(T a, T b) const {
    return a / b;
  }
};

// Computes one innermost run. After coalescing each stride is 1 or 0, and not both 0.
template <typename Fn, typename T>
void binary_run(const T* a, int64_t sa, const T* b, int64_t sb, T* __restrict out, int64_t n) {
  const Fn fn;
  if (sa == 1 && sb == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = fn(a[j], b[j]);
  } else if (sa == 0) {
    const T x = a[0];
    for (int64_t j = 0; j < n; ++j) out[j] = fn(x, b[j]);
  } else {
    const T y = b[0];
    for (int64_t j = 0; j < n; ++j) out[j] = fn(a[j], y);
  }
}

// Walks the plan's outer dimensions as an odometer, one innermost run per step.
template <typename Fn, typename T>
void binary_broadcast(const BroadcastPlan& p, const T* a, const T* b, T* out) {
  if (p.rank == 0) {
    out[0] = Fn()(a[0], b[0]);
    return;
  }
  const int last = p.rank - 1;
  int64_t rows = 1;
  for (int k = 0; k < last; ++k) rows *= p.dims[k];
  int64_t index[kMaxBroadcastRank] = {};
  int64_t offset_a = 0, offset_b = 0;
  for (int64_t row = 0; row < rows; ++row) {
    binary_run<Fn>(a + offset_a, p.strides[0][last], b + offset_b, p.strides[1][last],
                   out + row * p.dims[last], p.dims[last]);
    for (int k = last - 1; k >= 0; --k) {
      offset_a += p.strides[0][k];
      offset_b += p.strides[1][k];
      if (++index[k] < p.dims[k]) break;
      offset_a -= p.strides[0][k] * p.dims[k];
      offset_b -= p.strides[1][k] * p.dims[k];
      index[k] = 0;
    }
  }
}

template <typename Fn, typename T>
absl::Status binary_kernel(const KernelContext& ctx) {
  const TensorArg& a = ctx.inputs[0];
  const TensorArg& b = ctx.inputs[1];
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  T* out = output_data<T>(ctx);
  const int64_t n = ctx.output.shape->num_elements();
  if (__builtin_expect(n == 1, 0)) {
    out[0] = Fn()(pa[0], pb[0]);  // every operand of a 1-element output has 1 element
  } else if (__builtin_expect(*a.shape == *b.shape, 1)) {
    binary_run<Fn>(pa, 1, pb, 1, out, n);
  } else if (n != 0) {
    BroadcastPlan plan;
    MT_CHECK(make_broadcast_plan(*a.shape, *b.shape, &plan));  // checked by infer_output
    binary_broadcast<Fn>(plan, pa, pb, out);
  }
  return absl::OkStatus();
}

// Registers binary_kernel<Fn, T> for `op` and each T in `types`.
template <typename Fn, typename Types>
absl::Status add_binary(KernelRegistry& registry, OpId op, Types types) {
  return add_kernels(registry, op, types, [](auto tag) -> KernelFn {
    return &binary_kernel<Fn, typename decltype(tag)::type>;
  });
}

}  // namespace

absl::Status register_binary_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR(add_binary<AddFn>(registry, OpId::kAddV2, NumericTypes{}));
  MT_RETURN_IF_ERROR(add_binary<SubFn>(registry, OpId::kSub, NumericTypes{}));
  MT_RETURN_IF_ERROR(add_binary<MulFn>(registry, OpId::kMul, NumericTypes{}));
  return add_binary<DivFn>(registry, OpId::kRealDiv, FloatTypes{});
}

}  // namespace mt::cpu
