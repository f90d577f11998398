// CPU kernels of the broadcasting binary ops, every row of MT_BINARY_OPS (the comparisons
// write bool). Equal shapes take
// one contiguous loop split across threads; other shapes walk a coalesced BroadcastPlan
// (broadcast.h), its rows split across threads. The arithmetic is the ISA level's loop of
// the op (loops.h); a 1-element op calls it once on the calling thread.
#include <type_traits>

#include "kernels/broadcast.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

// Elements per thread below which splitting costs more than it saves.
constexpr int64_t kGrain = 32768;

// Runs the plan's rows [begin, end) as an odometer over the outer dimensions.
void broadcast_rows(const BroadcastPlan& p, BinaryLoop loop, const char* a, const char* b,
                    char* out, size_t elem, size_t out_elem, int64_t begin, int64_t end) {
  const int last = p.rank - 1;
  int64_t index[kMaxBroadcastRank] = {};
  int64_t offset_a = 0, offset_b = 0;
  for (int64_t k = last - 1, rest = begin; k >= 0; --k) {  // unravel `begin`
    index[k] = rest % p.dims[k];
    rest /= p.dims[k];
    offset_a += index[k] * p.strides[0][k];
    offset_b += index[k] * p.strides[1][k];
  }
  const int64_t inner = p.dims[last];
  for (int64_t row = begin; row < end; ++row) {
    loop(a + offset_a * elem, p.strides[0][last], b + offset_b * elem, p.strides[1][last],
         out + row * inner * out_elem, inner);
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

void binary_broadcast(const KernelContext& ctx, BinaryLoop loop) {
  BroadcastPlan p;
  MT_CHECK(make_broadcast_plan(*ctx.inputs[0].shape, *ctx.inputs[1].shape, &p));  // by infer_output
  const char* a = static_cast<const char*>(ctx.inputs[0].data);
  const char* b = static_cast<const char*>(ctx.inputs[1].data);
  char* out = static_cast<char*>(ctx.output.data);
  const size_t elem = dtype_size(ctx.inputs[0].dtype), out_elem = dtype_size(ctx.output.dtype);
  if (p.rank == 0) {
    loop(a, 1, b, 1, out, 1);
    return;
  }
  int64_t rows = 1;
  for (int k = 0; k < p.rank - 1; ++k) rows *= p.dims[k];
  const int64_t inner = p.dims[p.rank - 1];
  parallel_for(rows, (kGrain + inner - 1) / inner, [&](int64_t begin, int64_t end) {
    broadcast_rows(p, loop, a, b, out, elem, out_elem, begin, end);
  });
}

// Note [Integer division by zero]: as TensorFlow's CPU kernels, integer FloorDiv and
// FloorMod by zero fail with "Integer division by zero", and integer Pow to a negative power
// with "Integers to negative integer powers are not allowed" (InvalidArgument), checked on
// the second operand before anything is computed. The GPU kernels do not check (that would
// synchronise): they give the values of the loops (elementwise_fns.h): x // 0 and x % 0 are
// 0; a ** -k is 1 for a = 1, +-1 for a = -1, else 0.
template <OpId kOp, typename T>
absl::Status check_second_operand(const TensorArg& b) {
  if constexpr (std::is_integral_v<T> &&
                (kOp == OpId::kFloorDiv || kOp == OpId::kFloorMod || kOp == OpId::kPow)) {
    const T* p = static_cast<const T*>(b.data);
    const int64_t n = b.shape->num_elements();
    bool bad = false;
    for (int64_t i = 0; i < n; ++i) bad |= kOp == OpId::kPow ? p[i] < 0 : p[i] == 0;
    if (bad && kOp == OpId::kPow) {
      return internal::op_error(kOp, "Integers to negative integer powers are not allowed");
    }
    if (bad) return internal::op_error(kOp, "Integer division by zero");
  }
  return absl::OkStatus();
}

template <OpId kOp, typename T>
absl::Status binary_kernel(const KernelContext& ctx) {
  const TensorArg& a = ctx.inputs[0];
  const TensorArg& b = ctx.inputs[1];
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  using Out = std::conditional_t<op_is_comparison(kOp), bool, T>;
  Out* out = static_cast<Out*>(ctx.output.data);
  const int64_t n = ctx.output.shape->num_elements();
  const BinaryLoop loop =
      cpu_loops().binary[static_cast<int>(kOp)][static_cast<int>(dtype_of<T>())];
  if (n != 0) MT_RETURN_IF_ERROR((check_second_operand<kOp, T>(b)));
  if (__builtin_expect(n == 1, 0)) {  // every operand of a 1-element output has 1 element
    loop(pa, 1, pb, 1, out, 1);
    return absl::OkStatus();
  }
  if (__builtin_expect(*a.shape == *b.shape, 1)) {
    parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
      loop(pa + begin, 1, pb + begin, 1, out + begin, end - begin);
    });
  } else if (n != 0) {
    binary_broadcast(ctx, loop);
  }
  return absl::OkStatus();
}

// Registers binary_kernel<kOp, T> for each dtype of kOp's row.
template <OpId kOp>
absl::Status add_binary(KernelRegistry& registry) {
  return add_kernels(registry, kOp, TypesIn<op_dtypes(kOp)>{}, [](auto tag) -> KernelFn {
    return &binary_kernel<kOp, typename decltype(tag)::type>;
  });
}

// AssignAddVariableOp and AssignSubVariableOp: kFnOp's kernel writing into input 0, the
// variable's buffer (same shapes: an element-wise op may write over its operand).
template <OpId kFnOp, typename T>
absl::Status in_place_kernel(const KernelContext& ctx) {
  const MutableTensorArg out{const_cast<void*>(ctx.inputs[0].data), ctx.inputs[0].shape,
                             ctx.inputs[0].dtype};
  const KernelContext in_place{ctx.inputs, out, ctx.attrs, ctx.device_state, {&out, 1}};
  return binary_kernel<kFnOp, T>(in_place);
}

template <OpId kOp, OpId kFnOp>
absl::Status add_in_place(KernelRegistry& registry) {
  return add_kernels(registry, kOp, TypesIn<op_dtypes(kOp)>{}, [](auto tag) -> KernelFn {
    return &in_place_kernel<kFnOp, typename decltype(tag)::type>;
  });
}

}  // namespace

#define MT_BINARY_KERNELS(Name, ...) \
  MT_OP_KERNELS(Name) { return add_binary<OpId::k##Name>(registry); }
MT_BINARY_OPS(MT_BINARY_KERNELS)
#undef MT_BINARY_KERNELS
MT_OP_KERNELS(AssignAddVariableOp) {
  return add_in_place<OpId::kAssignAddVariableOp, OpId::kAddV2>(registry);
}
MT_OP_KERNELS(AssignSubVariableOp) {
  return add_in_place<OpId::kAssignSubVariableOp, OpId::kSub>(registry);
}

}  // namespace mt::cpu
