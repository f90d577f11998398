// CPU kernels of the data ops: _EagerConst and Identity (copies), Fill and Cast.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"

namespace mt::cpu {
namespace {

// _EagerConst (host constant to output) and Identity: a byte copy of the input.
absl::Status copy_kernel(const KernelContext& ctx) {
  const size_t bytes = ctx.output.shape->num_elements() * dtype_size(ctx.output.dtype);
  if (bytes != 0) std::memcpy(ctx.output.data, ctx.inputs[0].data, bytes);
  return absl::OkStatus();
}

// Fill: the value comes from attrs.value, `f` for floats, `i` for integers, `b` for bool.
template <typename T>
absl::Status fill_kernel(const KernelContext& ctx) {
  const Scalar& value = ctx.attrs->value;
  T v;
  if constexpr (std::is_same_v<T, bool>) {
    v = value.b;
  } else if constexpr (std::is_floating_point_v<T>) {
    v = static_cast<T>(value.f);
  } else {
    v = static_cast<T>(value.i);
  }
  T* out = output_data<T>(ctx);
  const int64_t n = ctx.output.shape->num_elements();
  for (int64_t i = 0; i < n; ++i) out[i] = v;
  return absl::OkStatus();
}

// Note [Float to integer casts]: in range, a float converts as static_cast does (it
// truncates toward zero). Out of range, where static_cast is undefined, it saturates to
// the integer's lowest or highest value, and NaN becomes 0 (as XLA defines it).
template <typename Dst, typename Src>
Dst cast_value(Src x) {
  if constexpr (std::is_same_v<Dst, bool>) {
    return x != Src(0);
  } else if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<Dst>) {
    constexpr Dst kLowest = std::numeric_limits<Dst>::lowest();
    constexpr Dst kMax = std::numeric_limits<Dst>::max();
    if (std::isnan(x)) return 0;
    if (x <= static_cast<Src>(kLowest)) return kLowest;
    if (x >= static_cast<Src>(kMax)) return kMax;  // kMax rounds up to a power of two
    return static_cast<Dst>(x);
  } else {
    return static_cast<Dst>(x);
  }
}

// Cast, keyed by the input dtype; the output's dtype is attrs.dst_dtype.
template <typename Src>
absl::Status cast_kernel(const KernelContext& ctx) {
  const Src* in = input_data<Src>(ctx, 0);
  const int64_t n = ctx.output.shape->num_elements();
  visit_dtype(ctx.output.dtype, [&](auto tag) {
    using Dst = typename decltype(tag)::type;
    Dst* out = output_data<Dst>(ctx);
    for (int64_t i = 0; i < n; ++i) out[i] = cast_value<Dst>(in[i]);
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status register_data_kernels(KernelRegistry& registry) {
  auto copy = [](auto) -> KernelFn { return &copy_kernel; };
  MT_RETURN_IF_ERROR(add_kernels(registry, OpId::kEagerConst, AllTypes{}, copy));
  MT_RETURN_IF_ERROR(add_kernels(registry, OpId::kIdentity, AllTypes{}, copy));
  MT_RETURN_IF_ERROR(add_kernels(registry, OpId::kFill, AllTypes{}, [](auto tag) -> KernelFn {
    return &fill_kernel<typename decltype(tag)::type>;
  }));
  return add_kernels(registry, OpId::kCast, AllTypes{}, [](auto tag) -> KernelFn {
    return &cast_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
