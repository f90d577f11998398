// CPU kernels of AddN: the output split across threads; each range is one pass that adds
// all N inputs a block at a time while the block stays in L1 (the ISA level's loop).
#include "absl/container/inlined_vector.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

template <typename T>
absl::Status add_n_kernel(const KernelContext& ctx) {
  const AddNLoop loop = cpu_loops().add_n[static_cast<int>(dtype_of<T>())];
  absl::InlinedVector<const void*, 8> inputs;
  for (const TensorArg& in : ctx.inputs) inputs.push_back(in.data);
  const int64_t count = static_cast<int64_t>(inputs.size());
  const int64_t n = ctx.output.shape->num_elements();
  // Each element reads `count` inputs: less output per thread is worth splitting.
  parallel_for(n, 65536 / (count + 1), [&](int64_t begin, int64_t end) {
    loop(inputs.data(), count, begin, end, ctx.output.data);
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(AddN) {
  return add_kernels(registry, OpId::kAddN, NumericTypes{}, [](auto tag) -> KernelFn {
    return &add_n_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
