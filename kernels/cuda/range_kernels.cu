// GPU kernel of Range: a thread per element, start + i * delta as on the CPU (wrapping
// int64 for the integers; double from start and delta rounded to the dtype, then rounded
// once, for the floats).
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/elementwise.h"
#include "kernels/range.h"

namespace mt::cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(kThreads)
    range_kernel(T* __restrict__ out, int64_t n, int64_t start_i, int64_t delta_i, double start_f,
                 double delta_f) {
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * kThreads) {
    if constexpr (std::is_integral_v<T>) {
      const uint64_t step = static_cast<uint64_t>(i) * static_cast<uint64_t>(delta_i);
      out[i] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(start_i) + step));
    } else {
      const double v = start_f + static_cast<double>(i) * delta_f;
      out[i] = from_compute<T>(static_cast<Compute<T>>(v));
    }
  }
}

template <typename T>
absl::Status run_range(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  const OpAttrs& a = *ctx.attrs;
  return launch(OpId::kRange, gpu_state(ctx), grid_for(n, kThreads), kThreads, &range_kernel<T>,
                static_cast<T*>(ctx.output.data), n, a.start.i, a.delta.i,
                internal::round_to_dtype<T>(a.start.f), internal::round_to_dtype<T>(a.delta.f));
}

}  // namespace

MT_OP_KERNELS(Range) {
  return add_gpu_kernels(registry, OpId::kRange, NumericTypes{}, [](auto tag) -> KernelFn {
    return &run_range<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
