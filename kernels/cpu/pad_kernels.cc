// CPU kernels of Pad, PadV2, MirrorPad and MirrorPadGrad (Note [Pads and top k] in
// kernels/pad_shape.cc), finding sources and targets through kernels/pad.h: the pads copy
// whole input rows and compute the edges; MirrorPadGrad sums each output element's targets
// in pad.h's order (2-byte floats in float32, rounded once; integers wrap).
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/pad.h"
#include "kernels/range.h"

namespace mt::cpu {
namespace {

using internal::PadGeometry;

constexpr int64_t kGrain = 16384;

// Returns PadV2's constant as T (Fill's conversion); Pad's is zero.
template <typename T>
T pad_value(const Scalar& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value.b;
  } else if constexpr (std::is_same_v<T, double>) {
    return value.f;
  } else if constexpr (is_floating(dtype_of<T>())) {
    return static_cast<T>(internal::narrow_to_float(value.f));
  } else {
    return static_cast<T>(value.i);
  }
}

// A row of the last dimension at a time: its source row found once (pad.h over the other
// dimensions), the input row copied whole and only the edges computed per element.
template <typename T>
absl::Status pad_kernel(const KernelContext& ctx, bool mirror, T value) {
  const PadGeometry g = internal::pad_geometry(*ctx.inputs[0].shape, *ctx.attrs);
  const T* in = input_data<T>(ctx, 0);
  T* out = output_data<T>(ctx);
  const int64_t total = ctx.output.shape->num_elements();
  if (total == 0) return absl::OkStatus();
  if (g.rank == 0) {
    out[0] = in[0];
    return absl::OkStatus();
  }
  PadGeometry outer = g;  // the dimensions but the last
  outer.rank = g.rank - 1;
  const int last = g.rank - 1;
  const int64_t width = g.out[last], n = g.in[last], before = g.before[last];
  const auto edge = [&](const T* src, int64_t j) {
    return mirror ? src[internal::mirror_source(j, before, n, g.symmetric)] : value;
  };
  parallel_for(total / width, std::max<int64_t>(1, kGrain / width),
               [&](int64_t begin, int64_t end) {
                 for (int64_t row = begin; row < end; ++row) {
                   T* dst = out + row * width;
                   const int64_t from = internal::pad_source(outer, row, mirror);
                   if (from < 0) {
                     std::fill(dst, dst + width, value);
                     continue;
                   }
                   const T* src = in + from * n;
                   for (int64_t j = 0; j < before; ++j) dst[j] = edge(src, j);
                   std::copy(src, src + n, dst + before);
                   for (int64_t j = before + n; j < width; ++j) dst[j] = edge(src, j);
                 }
               });
  return absl::OkStatus();
}

template <typename T>
absl::Status zero_pad_kernel(const KernelContext& ctx) {
  return pad_kernel<T>(ctx, false, pad_value<T>(Scalar{}));
}

template <typename T>
absl::Status pad_v2_kernel(const KernelContext& ctx) {
  return pad_kernel<T>(ctx, false, pad_value<T>(ctx.attrs->value));
}

template <typename T>
absl::Status mirror_pad_kernel(const KernelContext& ctx) {
  return pad_kernel<T>(ctx, true, pad_value<T>(Scalar{}));
}

template <typename T>
absl::Status mirror_pad_grad_kernel(const KernelContext& ctx) {
  using Acc = std::conditional_t<kIsHalf<T>, float, T>;
  const PadGeometry g = internal::pad_geometry(*ctx.output.shape, *ctx.attrs);
  const T* grad = input_data<T>(ctx, 0);
  T* out = output_data<T>(ctx);
  parallel_for(ctx.output.shape->num_elements(), kGrain / 4, [&](int64_t begin, int64_t end) {
    internal::MirrorTargets t;
    for (int64_t j = begin; j < end; ++j) {
      internal::mirror_targets(g, j, &t);
      Acc sum = Acc(0);
      do {
        sum = add_op(sum, static_cast<Acc>(grad[internal::mirror_target(g, t)]));
      } while (internal::mirror_next(g, &t));
      out[j] = static_cast<T>(sum);
    }
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(Pad) {
  return add_kernels(registry, OpId::kPad, AllTypes{}, [](auto tag) -> KernelFn {
    return &zero_pad_kernel<typename decltype(tag)::type>;
  });
}

MT_OP_KERNELS(PadV2) {
  return add_kernels(registry, OpId::kPadV2, AllTypes{}, [](auto tag) -> KernelFn {
    return &pad_v2_kernel<typename decltype(tag)::type>;
  });
}

MT_OP_KERNELS(MirrorPad) {
  return add_kernels(registry, OpId::kMirrorPad, AllTypes{}, [](auto tag) -> KernelFn {
    return &mirror_pad_kernel<typename decltype(tag)::type>;
  });
}

MT_OP_KERNELS(MirrorPadGrad) {
  return add_kernels(registry, OpId::kMirrorPadGrad, NumericTypes{}, [](auto tag) -> KernelFn {
    return &mirror_pad_grad_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
