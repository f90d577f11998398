// CPU kernel of Gelu (kernels/gelu.h): element by element, the 2-byte floats in float32
// rounded once, chunks split across threads.
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/gelu.h"

namespace mt::cpu {
namespace {

template <typename T>
absl::Status gelu_kernel(const KernelContext& ctx) {
  using F = std::conditional_t<kIsHalf<T>, float, T>;
  const T* in = input_data<T>(ctx, 0);
  T* out = output_data<T>(ctx);
  const bool approximate = ctx.attrs->approximate;
  parallel_for(ctx.output.shape->num_elements(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      out[i] = static_cast<T>(gelu_value(static_cast<F>(in[i]), approximate));
    }
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(Gelu) {
  return add_kernels(registry, OpId::kGelu, FloatTypes{}, [](auto tag) -> KernelFn {
    return &gelu_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
