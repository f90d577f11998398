// CPU kernels of Softmax and LogSoftmax over the last axis: rows split across threads, each
// row three vectorised Eigen passes (max; exp and sum; scale or subtract), as TensorFlow's
// CPU kernels compute them:
//   softmax     = exp(x - max) * (1 / sum(exp(x - max)))
//   log_softmax = (x - max) - log(sum(exp(x - max)))
// bfloat16 and float16 widen to float32 (Note [Half kernels on the CPU] in widened_kernel.h).
//
// Note [Softmax of non-finite rows]: as in TensorFlow, a NaN anywhere in a row makes the
// whole row NaN (exp(NaN - max) reaches the sum, whatever the max kept); so does +Inf
// (Inf - Inf), and a row of -Inf only (-Inf - -Inf). A -Inf beside finite values gives 0
// (LogSoftmax: -Inf). Kernels may skip NaN when taking the max, but never skip an element
// in the sum.
#include <Eigen/Core>
#include <algorithm>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/widened_kernel.h"

namespace mt::cpu {
namespace {

template <typename T>
using Row = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MutableRow = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// Eigen's vectorised exp clamps its argument (near -88 for float, -708 for double) and so
// never returns 0; below these arguments the exact exp rounds to 0, as std::exp and the
// GPU's expf give it (softmax of [-inf, 0] is exactly [0, 1]).
template <typename T>
constexpr T kExpUnderflow = std::is_same_v<T, float> ? T(-104) : T(-746);

template <typename T, bool kLog>
void softmax_row(const T* in, T* out, int64_t cols) {
  Row<T> x(in, cols);
  MutableRow<T> y(out, cols);
  // maxCoeff may skip a NaN; the NaN still reaches the sum below through exp(NaN - max).
  const T max = x.maxCoeff();
  y = x - max;
  if constexpr (kLog) {
    const T log_sum = std::log((y < kExpUnderflow<T>).select(T(0), y.exp()).sum());
    y -= log_sum;
  } else {
    y = (y < kExpUnderflow<T>).select(T(0), y.exp());
    y *= T(1) / y.sum();
  }
}

template <typename T, bool kLog>
absl::Status softmax_kernel(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int64_t cols = shape.dim(shape.rank() - 1);
  const int64_t n = shape.num_elements();
  if (n == 0) return absl::OkStatus();
  const int64_t rows = n / cols;
  const T* in = input_data<T>(ctx, 0);
  T* out = output_data<T>(ctx);
  // About 16K elements per chunk of rows: enough work to be worth a thread.
  const int64_t grain = std::max<int64_t>(1, 16384 / cols);
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) softmax_row<T, kLog>(in + r * cols, out + r * cols, cols);
  });
  return absl::OkStatus();
}

template <bool kLog>
absl::Status register_softmax(KernelRegistry& registry, OpId op) {
  return add_kernels(registry, op, FloatTypes{}, [](auto tag) -> KernelFn {
    using T = typename decltype(tag)::type;
    if constexpr (kIsHalf<T>) {
      return &widened_kernel<T, &softmax_kernel<float, kLog>>;
    } else {
      return &softmax_kernel<T, kLog>;
    }
  });
}

}  // namespace

absl::Status register_nn_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR(register_softmax<false>(registry, OpId::kSoftmax));
  return register_softmax<true>(registry, OpId::kLogSoftmax);
}

}  // namespace mt::cpu
