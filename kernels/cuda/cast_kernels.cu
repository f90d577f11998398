// GPU kernels of Cast, keyed by the input dtype, to every dtype (attrs.dst_dtype, which is
// the output's dtype), converting each element as the CPU does (Note [Float to integer
// casts] in kernels/cpu/isa/cast_loops.cc): a float truncates toward zero in range,
// saturates out of range, and NaN becomes 0; anything to bool is x != 0. bfloat16 and
// float16 go through float32: widened exactly as a source, rounded to nearest even as a
// destination (a float64 or 64-bit integer source rounds to float32 first).
#include <limits>
#include <type_traits>

#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

// An integer type's range, as constants that device code may read.
template <typename T>
inline constexpr T kLowest = std::numeric_limits<T>::lowest();
template <typename T>
inline constexpr T kMax = std::numeric_limits<T>::max();

// Returns x converted to Dst (the file comment gives the rules).
template <typename Dst, typename Src>
__device__ __forceinline__ Dst cast_value(Src src) {
  const Compute<Src> x = to_compute(src);
  if constexpr (std::is_same_v<Dst, bool>) {
    return x != Compute<Src>(0);
  } else if constexpr (kIsHalf<Dst>) {
    return from_compute<Dst>(static_cast<float>(x));
  } else if constexpr (std::is_floating_point_v<Compute<Src>> && std::is_integral_v<Dst>) {
    if (x != x) return 0;
    if (x <= static_cast<Compute<Src>>(kLowest<Dst>)) return kLowest<Dst>;
    if (x >= static_cast<Compute<Src>>(kMax<Dst>)) return kMax<Dst>;  // rounds up to 2^k
    return static_cast<Dst>(x);
  } else {
    return static_cast<Dst>(x);
  }
}

template <typename Src, typename Dst>
__global__ void __launch_bounds__(kThreads) cast_kernel(const Src* in, Dst* out, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * kThreads;
#pragma unroll 1
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < n; i += stride) {
    out[i] = cast_value<Dst>(in[i]);
  }
}

template <typename Src>
absl::Status run_cast(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  const Src* in = static_cast<const Src*>(ctx.inputs[0].data);
  return visit_dtype(ctx.output.dtype, [&](auto tag) {
    using Dst = typename decltype(tag)::type;
    return launch(OpId::kCast, gpu_state(ctx), grid_for(n, kThreads), kThreads,
                  &cast_kernel<Src, Dst>, in, static_cast<Dst*>(ctx.output.data), n);
  });
}

}  // namespace

MT_OP_KERNELS(Cast) {
  return add_gpu_kernels(registry, OpId::kCast, AllTypes{}, [](auto tag) -> KernelFn {
    return &run_cast<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
