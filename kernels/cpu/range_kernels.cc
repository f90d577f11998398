// CPU kernel of Range: element i is start + i * delta; integers in wrapping int64
// arithmetic (exact, since every element lies between start and limit), floats in double
// from start and delta rounded to the dtype, then rounded once. Split across threads.
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/range.h"

namespace mt::cpu {
namespace {

template <typename T>
absl::Status range_kernel(const KernelContext& ctx) {
  const OpAttrs& a = *ctx.attrs;
  T* out = output_data<T>(ctx);
  parallel_for(ctx.output.shape->num_elements(), 32768, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if constexpr (std::is_integral_v<T>) {
        const uint64_t step = static_cast<uint64_t>(i) * static_cast<uint64_t>(a.delta.i);
        out[i] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(a.start.i) + step));
      } else if constexpr (kIsHalf<T>) {
        const double v = internal::round_to_dtype<T>(a.start.f) +
                         static_cast<double>(i) * internal::round_to_dtype<T>(a.delta.f);
        out[i] = T(internal::narrow_to_float(v));
      } else if constexpr (std::is_same_v<T, float>) {
        out[i] = internal::narrow_to_float(internal::round_to_dtype<T>(a.start.f) +
                                           static_cast<double>(i) *
                                               internal::round_to_dtype<T>(a.delta.f));
      } else {
        out[i] = a.start.f + static_cast<double>(i) * a.delta.f;
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(Range) {
  return add_kernels(registry, OpId::kRange, NumericTypes{}, [](auto tag) -> KernelFn {
    return &range_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
