// CPU kernels of the broadcasting binary ops: AddV2, Sub, Mul and RealDiv. Equal shapes
// take one contiguous loop split across threads; other shapes walk a coalesced
// BroadcastPlan (broadcast.h), its rows split across threads. The arithmetic is the ISA
// level's loop (loops.h); a 1-element op computes inline and never leaves the thread.
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
                    char* out, size_t elem, int64_t begin, int64_t end) {
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
         out + row * inner * elem, inner);
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
  const size_t elem = dtype_size(ctx.output.dtype);
  if (p.rank == 0) {
    loop(a, 1, b, 1, out, 1);
    return;
  }
  int64_t rows = 1;
  for (int k = 0; k < p.rank - 1; ++k) rows *= p.dims[k];
  const int64_t inner = p.dims[p.rank - 1];
  parallel_for(rows, (kGrain + inner - 1) / inner, [&](int64_t begin, int64_t end) {
    broadcast_rows(p, loop, a, b, out, elem, begin, end);
  });
}

// Returns a op b; bfloat16 and float16 compute in float32 and round once, as their loops do.
template <BinaryOp kOp, typename T>
T apply_one(T a, T b) {
  if constexpr (kIsHalf<T>) {
    return T(apply_one<kOp>(static_cast<float>(a), static_cast<float>(b)));
  } else if constexpr (kOp == kAdd) {
    return add_op(a, b);
  } else if constexpr (kOp == kSub) {
    return sub_op(a, b);
  } else if constexpr (kOp == kMul) {
    return mul_op(a, b);
  } else {
    return a / b;
  }
}

template <BinaryOp kOp, typename T>
absl::Status binary_kernel(const KernelContext& ctx) {
  const TensorArg& a = ctx.inputs[0];
  const TensorArg& b = ctx.inputs[1];
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  T* out = output_data<T>(ctx);
  const int64_t n = ctx.output.shape->num_elements();
  if (__builtin_expect(n == 1, 0)) {  // every operand of a 1-element output has 1 element
    out[0] = apply_one<kOp>(pa[0], pb[0]);
    return absl::OkStatus();
  }
  const BinaryLoop loop = cpu_loops().binary[kOp][static_cast<int>(dtype_of<T>())];
  if (__builtin_expect(*a.shape == *b.shape, 1)) {
    parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
      loop(pa + begin, 1, pb + begin, 1, out + begin, end - begin);
    });
  } else if (n != 0) {
    binary_broadcast(ctx, loop);
  }
  return absl::OkStatus();
}

// Registers binary_kernel<kOp, T> for `op` and each T in `types`.
template <BinaryOp kOp, typename Types>
absl::Status add_binary(KernelRegistry& registry, OpId op, Types types) {
  return add_kernels(registry, op, types, [](auto tag) -> KernelFn {
    return &binary_kernel<kOp, typename decltype(tag)::type>;
  });
}

}  // namespace

absl::Status register_binary_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR(add_binary<kAdd>(registry, OpId::kAddV2, NumericTypes{}));
  MT_RETURN_IF_ERROR(add_binary<kSub>(registry, OpId::kSub, NumericTypes{}));
  MT_RETURN_IF_ERROR(add_binary<kMul>(registry, OpId::kMul, NumericTypes{}));
  return add_binary<kDiv>(registry, OpId::kRealDiv, FloatTypes{});
}

}  // namespace mt::cpu
