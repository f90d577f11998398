// CPU kernels of the element-wise unary ops, every row of MT_UNARY_OPS: the ISA level's
// loop of the op (loops.h) over ranges split across threads.
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

// Elements per thread below which splitting costs more than it saves: a kCostly op (Exp)
// does far more work per element than the others.
constexpr int64_t grain(OpId op) { return op_has_flag(op, kCostly) ? 4096 : 32768; }

template <OpId kOp, typename T>
absl::Status unary_kernel(const KernelContext& ctx) {
  const UnaryLoop loop = cpu_loops().unary[static_cast<int>(kOp)][static_cast<int>(dtype_of<T>())];
  const T* in = input_data<T>(ctx, 0);
  T* out = output_data<T>(ctx);
  parallel_for(ctx.output.shape->num_elements(), grain(kOp),
               [&](int64_t begin, int64_t end) { loop(in + begin, out + begin, end - begin); });
  return absl::OkStatus();
}

// Registers unary_kernel<kOp, T> for each dtype of kOp's row.
template <OpId kOp>
absl::Status add_unary(KernelRegistry& registry) {
  return add_kernels(registry, kOp, TypesIn<op_dtypes(kOp)>{}, [](auto tag) -> KernelFn {
    return &unary_kernel<kOp, typename decltype(tag)::type>;
  });
}

}  // namespace

#define MT_UNARY_KERNELS(Name, ...) \
  MT_OP_KERNELS(Name) { return add_unary<OpId::k##Name>(registry); }
MT_UNARY_OPS(MT_UNARY_KERNELS)
#undef MT_UNARY_KERNELS

}  // namespace mt::cpu
