// GPU kernel of ResourceApplyAdam (Note [Fused Adam] in kernels/optimizer_shape.cc): one
// thread per element of the variable, its two slots and the gradient, each read once and
// the first three written once, in place, the learning rate read from lr_t in device memory
// (one element, which every thread reads). bfloat16 and float16 compute in float32.
#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

template <typename T>
struct AdamArgs {
  T* var;
  T* m;
  T* v;
  const T* grad;
  const Compute<T>* lr;  // lr_t on the device, of dtype Compute<T> (apply_adam_lr_dtype)
  int64_t n;
  Compute<T> one_minus_beta_1, one_minus_beta_2, epsilon;
};

template <typename T>
__global__ void __launch_bounds__(kThreads) apply_adam(AdamArgs<T> a) {
  const Compute<T> lr = *a.lr;  // every thread reads the one value
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < a.n;
       i += int64_t{gridDim.x} * kThreads) {
    const Compute<T> g = to_compute(a.grad[i]);
    Compute<T> m = to_compute(a.m[i]), v = to_compute(a.v[i]);
    m += (g - m) * a.one_minus_beta_1;
    v += (g * g - v) * a.one_minus_beta_2;
    a.m[i] = from_compute<T>(m);
    a.v[i] = from_compute<T>(v);
    a.var[i] = from_compute<T>(to_compute(a.var[i]) - lr * m / (sqrt(v) + a.epsilon));
  }
}

template <typename T>
absl::Status run_apply_adam(const KernelContext& ctx) {
  using C = Compute<T>;
  const int64_t n = ctx.inputs[0].shape->num_elements();
  if (n == 0) return absl::OkStatus();
  const OpAttrs& attrs = *ctx.attrs;
  // The kResource ops write into their inputs (the variable's buffers).
  const AdamArgs<T> args{static_cast<T*>(const_cast<void*>(ctx.inputs[0].data)),
                         static_cast<T*>(const_cast<void*>(ctx.inputs[1].data)),
                         static_cast<T*>(const_cast<void*>(ctx.inputs[2].data)),
                         static_cast<const T*>(ctx.inputs[3].data),
                         static_cast<const C*>(ctx.inputs[4].data),
                         n,
                         static_cast<C>(1 - attrs.beta_1),
                         static_cast<C>(1 - attrs.beta_2),
                         static_cast<C>(attrs.epsilon)};
  const GpuState& state = gpu_state(ctx);
  const unsigned grid = std::min<int64_t>(grid_for(n, kThreads), int64_t{sm_count(state)} * 32);
  return launch(OpId::kResourceApplyAdam, state, grid, kThreads, &apply_adam<T>, args);
}

}  // namespace

MT_OP_KERNELS(ResourceApplyAdam) {
  return add_gpu_kernels(
      registry, OpId::kResourceApplyAdam, FloatTypes{},
      [](auto tag) -> KernelFn { return &run_apply_adam<typename decltype(tag)::type>; });
}

}  // namespace mt::cuda
