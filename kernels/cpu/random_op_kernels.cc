// CPU kernels of the random ops (Note [Random ops] in kernels/random_shape.cc): the fill of
// cpu/random_fill.h, then, for float outputs, the multiply and add of kernels/random_ops.h.
// Built with -ffp-contract=off: the multiply and the add must each round, as TensorFlow's.
#include <type_traits>

#include "core/half.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/random_fill.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/random_ops.h"

namespace mt::cpu {
namespace {

// Elements per thread of the scaling pass.
constexpr int64_t kScaleGrain = 32768;

// Scales and shifts `n` values of `out` in place, in float for the 2-byte types.
template <typename T>
void apply_affine(const internal::RandomAffine& a, T* out, int64_t n) {
  using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const auto scale = static_cast<Compute>(a.scale), shift = static_cast<Compute>(a.shift);
  const bool multiply = a.multiply, add = a.add;
  parallel_for(n, kScaleGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T v = out[i];
      if (multiply) v = static_cast<T>(static_cast<Compute>(v) * scale);
      if (add) v = static_cast<T>(static_cast<Compute>(v) + shift);
      out[i] = v;
    }
  });
}

template <OpId kOp, typename T>
absl::Status random_float_kernel(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  T* out = output_data<T>(ctx);
  random_fill(internal::random_op_distribution(kOp), dtype_of<T>(), ctx.attrs->philox, out, n);
  const internal::RandomAffine a = internal::random_affine<T>(kOp, *ctx.attrs);
  if (a.multiply || a.add) apply_affine(a, out, n);
  return absl::OkStatus();
}

absl::Status random_int_kernel(const KernelContext& ctx) {
  const OpAttrs& attrs = *ctx.attrs;
  const auto range = static_cast<uint64_t>(attrs.maxval.i) - static_cast<uint64_t>(attrs.minval.i);
  random_fill_uniform_int(ctx.output.dtype, attrs.philox, attrs.minval.i, range, ctx.output.data,
                          ctx.output.shape->num_elements());
  return absl::OkStatus();
}

// The kernels of a random row: its dtypes, float or integer, pick the kernel.
template <OpId kOp>
absl::Status add_random(KernelRegistry& registry) {
  if constexpr (op_dtypes(kOp) == kRandomIntDTypes) {
    return add_kernels(registry, kOp, TypesIn<kRandomIntDTypes>{},
                       [](auto) -> KernelFn { return &random_int_kernel; });
  } else {
    return add_kernels(registry, kOp, FloatTypes{}, [](auto tag) -> KernelFn {
      return &random_float_kernel<kOp, typename decltype(tag)::type>;
    });
  }
}

}  // namespace

#define MT_RANDOM_KERNELS(Name, ...) \
  MT_OP_KERNELS(Name) { return add_random<OpId::k##Name>(registry); }
MT_RANDOM_OPS(MT_RANDOM_KERNELS)
#undef MT_RANDOM_KERNELS

}  // namespace mt::cpu
