// CPU kernel of ClipByValue: out = t above clip_value_max is the max, below clip_value_min
// the min, else t (a NaN t stays NaN; with min > max every element is min, as in
// TensorFlow), the bounds read through the SelectPlan of their broadcast to t
// (kernels/select.h), the innermost runs split across threads.
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/select.h"

namespace mt::cpu {
namespace {

// Elements per thread below which splitting costs more than it saves.
constexpr int64_t kGrain = 32768;

template <typename T>
T clip(T t, T lo, T hi) {
  using F = std::conditional_t<kIsHalf<T>, float, T>;
  const T v = static_cast<F>(t) > static_cast<F>(hi) ? hi : t;
  return static_cast<F>(v) < static_cast<F>(lo) ? lo : v;
}

template <typename T>
absl::Status clip_kernel(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  const T* t = input_data<T>(ctx, 0);
  const T* lo = input_data<T>(ctx, 1);
  const T* hi = input_data<T>(ctx, 2);
  T* out = output_data<T>(ctx);
  SelectPlan p;
  MT_CHECK(make_select_plan(*ctx.inputs[0].shape, *ctx.inputs[1].shape, *ctx.inputs[2].shape,
                            *ctx.output.shape, &p));  // by infer_clip_by_value
  if (p.rank == 0) {
    out[0] = clip(t[0], lo[0], hi[0]);
    return absl::OkStatus();
  }
  const int last = p.rank - 1;
  const int64_t inner = p.dims[last];
  const int64_t st = p.strides[0][last], sl = p.strides[1][last], sh = p.strides[2][last];
  parallel_for(n / inner, (kGrain + inner - 1) / inner, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t ot = 0, ol = 0, oh = 0;
      for (int64_t k = last - 1, rest = row; k >= 0; --k) {
        const int64_t i = rest % p.dims[k];
        rest /= p.dims[k];
        ot += i * p.strides[0][k];
        ol += i * p.strides[1][k];
        oh += i * p.strides[2][k];
      }
      T* o = out + row * inner;
      for (int64_t j = 0; j < inner; ++j)
        o[j] = clip(t[ot + j * st], lo[ol + j * sl], hi[oh + j * sh]);
    }
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(ClipByValue) {
  return add_kernels(registry, OpId::kClipByValue, NumericTypes{}, [](auto tag) -> KernelFn {
    return &clip_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
