// GPU kernels of Pad, PadV2, MirrorPad and MirrorPadGrad (Note [Pads and top k] in
// kernels/pad_shape.cc): a thread per output element, finding its source (the pads) or
// summing its targets (MirrorPadGrad) through kernels/pad.h, in the CPU's order, so that
// every dtype matches the CPU exactly.
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/elementwise.h"
#include "kernels/pad.h"
#include "kernels/range.h"

namespace mt::cuda {
namespace {

using internal::PadGeometry;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    pad(PadGeometry g, const T* __restrict__ in, T* __restrict__ out, int64_t n, bool mirror,
        T value) {
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * kThreads) {
    const int64_t from = internal::pad_source(g, i, mirror);
    out[i] = from < 0 ? value : in[from];
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    mirror_pad_grad(PadGeometry g, const T* __restrict__ grad, T* __restrict__ out, int64_t n) {
  for (int64_t j = int64_t{blockIdx.x} * kThreads + threadIdx.x; j < n;
       j += int64_t{gridDim.x} * kThreads) {
    internal::MirrorTargets t;
    internal::mirror_targets(g, j, &t);
    Compute<T> sum = Compute<T>(0);
    do {
      sum = add_op(sum, to_compute(grad[internal::mirror_target(g, t)]));
    } while (internal::mirror_next(g, &t));
    out[j] = from_compute<T>(sum);
  }
}

// Returns PadV2's constant as T, as the CPU kernel converts it.
template <typename T>
T pad_value(const Scalar& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value.b;
  } else if constexpr (std::is_same_v<T, double>) {
    return value.f;
  } else if constexpr (kIsHalf<T> || std::is_same_v<T, float>) {
    return static_cast<T>(internal::narrow_to_float(value.f));
  } else {
    return static_cast<T>(value.i);
  }
}

// Pad (zero), PadV2 (attrs.value) and MirrorPad.
template <OpId kOp, typename T>
absl::Status run_pad(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  const PadGeometry g = internal::pad_geometry(*ctx.inputs[0].shape, *ctx.attrs);
  const T value = pad_value<T>(kOp == OpId::kPadV2 ? ctx.attrs->value : Scalar{});
  return launch(kOp, gpu_state(ctx), grid_for(n, kThreads), kThreads, &pad<T>, g,
                static_cast<const T*>(ctx.inputs[0].data), static_cast<T*>(ctx.output.data), n,
                kOp == OpId::kMirrorPad, value);
}

template <typename T>
absl::Status run_mirror_pad_grad(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  const PadGeometry g = internal::pad_geometry(*ctx.output.shape, *ctx.attrs);
  return launch(OpId::kMirrorPadGrad, gpu_state(ctx), grid_for(n, kThreads), kThreads,
                &mirror_pad_grad<T>, g, static_cast<const T*>(ctx.inputs[0].data),
                static_cast<T*>(ctx.output.data), n);
}

template <OpId kOp>
absl::Status add_pad(KernelRegistry& registry) {
  return add_gpu_kernels(registry, kOp, AllTypes{}, [](auto tag) -> KernelFn {
    return &run_pad<kOp, typename decltype(tag)::type>;
  });
}

}  // namespace

MT_OP_KERNELS(Pad) { return add_pad<OpId::kPad>(registry); }
MT_OP_KERNELS(PadV2) { return add_pad<OpId::kPadV2>(registry); }
MT_OP_KERNELS(MirrorPad) { return add_pad<OpId::kMirrorPad>(registry); }

MT_OP_KERNELS(MirrorPadGrad) {
  return add_gpu_kernels(registry, OpId::kMirrorPadGrad, NumericTypes{}, [](auto tag) -> KernelFn {
    return &run_mirror_pad_grad<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
