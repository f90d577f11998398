// CPU kernels of AddN: one pass over the output, a block at a time, that adds all N inputs
// while the block stays in the L1 cache.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/cpu_kernels.h"

namespace mt::cpu {
namespace {

// Elements per block: 8 KiB of float32, small enough to stay in L1 next to the inputs.
constexpr int64_t kBlock = 2048;

// Writes the sum of inputs[*] over [start, start + len) to out.
template <typename T>
void add_n_block(const KernelContext& ctx, int64_t start, int64_t len, T* __restrict out) {
  const size_t count = ctx.inputs.size();
  const T* first = input_data<T>(ctx, 0) + start;
  if (count == 1) {
    std::memcpy(out, first, len * sizeof(T));
    return;
  }
  const T* second = input_data<T>(ctx, 1) + start;
  for (int64_t j = 0; j < len; ++j) out[j] = add_op(first[j], second[j]);
  for (size_t k = 2; k < count; ++k) {
    const T* in = input_data<T>(ctx, k) + start;
    for (int64_t j = 0; j < len; ++j) out[j] = add_op(out[j], in[j]);
  }
}

template <typename T>
absl::Status add_n_kernel(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  T* out = output_data<T>(ctx);
  for (int64_t start = 0; start < n; start += kBlock) {
    add_n_block(ctx, start, std::min(kBlock, n - start), out + start);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status register_add_n_kernels(KernelRegistry& registry) {
  return add_kernels(registry, OpId::kAddN, NumericTypes{}, [](auto tag) -> KernelFn {
    return &add_n_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
