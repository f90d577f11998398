// CPU kernels of the element-wise unary ops: Neg, Abs, Exp and Relu, each the ISA level's
// loop (loops.h) over ranges split across threads.
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

// Elements per thread below which splitting costs more than it saves: Exp does far more
// work per element than the others.
constexpr int64_t grain(UnaryOp op) { return op == kExp ? 4096 : 32768; }

template <UnaryOp kOp, typename T>
absl::Status unary_kernel(const KernelContext& ctx) {
  const UnaryLoop loop = cpu_loops().unary[kOp][static_cast<int>(dtype_of<T>())];
  const T* in = input_data<T>(ctx, 0);
  T* out = output_data<T>(ctx);
  parallel_for(ctx.output.shape->num_elements(), grain(kOp),
               [&](int64_t begin, int64_t end) { loop(in + begin, out + begin, end - begin); });
  return absl::OkStatus();
}

// Registers unary_kernel<kOp, T> for `op` and each T in `types`.
template <UnaryOp kOp, typename Types>
absl::Status add_unary(KernelRegistry& registry, OpId op, Types types) {
  return add_kernels(registry, op, types, [](auto tag) -> KernelFn {
    return &unary_kernel<kOp, typename decltype(tag)::type>;
  });
}

}  // namespace

absl::Status register_unary_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR(add_unary<kNeg>(registry, OpId::kNeg, NumericTypes{}));
  MT_RETURN_IF_ERROR(add_unary<kAbs>(registry, OpId::kAbs, NumericTypes{}));
  MT_RETURN_IF_ERROR(add_unary<kExp>(registry, OpId::kExp, FloatTypes{}));
  return add_unary<kRelu>(registry, OpId::kRelu, NumericTypes{});
}

}  // namespace mt::cpu
