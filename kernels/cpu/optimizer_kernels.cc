// CPU kernel of ResourceApplyAdam (Note [Fused Adam] in kernels/optimizer_shape.cc): one pass
// over the variable, its slots and the gradient, split across threads. bfloat16 and float16
// compute in float32 element by element.
#include <cmath>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

// Elements per thread below which splitting costs more than it saves.
constexpr int64_t kGrain = 16384;

template <typename T>
absl::Status apply_adam_kernel(const KernelContext& ctx) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t n = ctx.inputs[0].shape->num_elements();
  T* var = const_cast<T*>(input_data<T>(ctx, 0));  // the kResource ops write their inputs
  T* m = const_cast<T*>(input_data<T>(ctx, 1));
  T* v = const_cast<T*>(input_data<T>(ctx, 2));
  const T* grad = input_data<T>(ctx, 3);
  const C lr = *input_data<C>(ctx, 4);  // lr_t, of dtype C (apply_adam_lr_dtype)
  const C one_minus_beta_1 = static_cast<C>(1 - ctx.attrs->beta_1);
  const C one_minus_beta_2 = static_cast<C>(1 - ctx.attrs->beta_2);
  const C epsilon = static_cast<C>(ctx.attrs->epsilon);
  parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const C g = static_cast<C>(grad[i]);
      C mi = static_cast<C>(m[i]), vi = static_cast<C>(v[i]);
      mi += (g - mi) * one_minus_beta_1;
      vi += (g * g - vi) * one_minus_beta_2;
      m[i] = T(mi);
      v[i] = T(vi);
      var[i] = T(static_cast<C>(var[i]) - lr * mi / (std::sqrt(vi) + epsilon));
    }
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(ResourceApplyAdam) {
  return add_kernels(registry, OpId::kResourceApplyAdam, FloatTypes{}, [](auto tag) -> KernelFn {
    return &apply_adam_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
