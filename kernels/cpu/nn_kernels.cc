// CPU kernels of the nn ops: BiasAdd (the AddV2 loop per row), SparseSoftmaxCrossEntropyWithLogits
// (nn_loss below), and Softmax and LogSoftmax over the last axis: rows split across threads, each
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
#include "kernels/cpu/loops.h"
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

// value [..., C] + bias [C]: the ISA level's AddV2 loop over each row of C.
template <typename T>
absl::Status bias_add_kernel(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  const int64_t cols = ctx.inputs[1].shape->dim(0);
  if (n == 0) return absl::OkStatus();
  const BinaryLoop loop =
      cpu_loops().binary[static_cast<int>(OpId::kAddV2)][static_cast<int>(dtype_of<T>())];
  const T* value = input_data<T>(ctx, 0);
  const T* bias = input_data<T>(ctx, 1);
  T* out = output_data<T>(ctx);
  parallel_for(n / cols, std::max<int64_t>(1, 32768 / cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) loop(value + r * cols, 1, bias, 1, out + r * cols, cols);
  });
  return absl::OkStatus();
}

// Note [Sparse cross-entropy]: per row of logits x with label l, in float32 for the
// 2-byte floats: m = max(x), s = sum(exp(x - m)), loss = log(s) - (x[l] - m) and
// gradient = exp(x - m) / s - onehot(l). A label outside [0, classes) is InvalidArgument
// on the CPU, as TensorFlow's CPU kernel; the GPU cannot check without synchronising and
// gives NaN for that row, as TensorFlow's GPU kernel.
template <typename T, typename Label>
absl::Status xent_rows(const KernelContext& ctx) {
  using W = std::conditional_t<kIsHalf<T>, float, T>;
  const int64_t rows = ctx.inputs[0].shape->dim(0), cols = ctx.inputs[0].shape->dim(1);
  const T* logits = input_data<T>(ctx, 0);
  const Label* labels = input_data<Label>(ctx, 1);
  for (int64_t r = 0; r < rows; ++r) {
    if (labels[r] < 0 || labels[r] >= cols) {
      return internal::op_error(OpId::kSparseSoftmaxCrossEntropyWithLogits,
                                "Received a label value of ", labels[r],
                                " which is outside the valid range of [0, ", cols, ")");
    }
  }
  T* loss = static_cast<T*>(ctx.outputs[0].data);
  T* grad = static_cast<T*>(ctx.outputs[1].data);
  parallel_for(rows, std::max<int64_t>(1, 4096 / cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* x = logits + r * cols;
      T* g = grad + r * cols;
      W max = static_cast<W>(x[0]);
      for (int64_t j = 1; j < cols; ++j) max = std::max(max, static_cast<W>(x[j]));
      W sum = 0;
      for (int64_t j = 0; j < cols; ++j) sum += std::exp(static_cast<W>(x[j]) - max);
      const W log_sum = std::log(sum);
      loss[r] = static_cast<T>(log_sum - (static_cast<W>(x[labels[r]]) - max));
      for (int64_t j = 0; j < cols; ++j) {
        const W p = std::exp(static_cast<W>(x[j]) - max - log_sum);
        g[j] = static_cast<T>(j == labels[r] ? p - W(1) : p);
      }
    }
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status xent_kernel(const KernelContext& ctx) {
  if (ctx.inputs[1].dtype == DType::kInt32) return xent_rows<T, int32_t>(ctx);
  return xent_rows<T, int64_t>(ctx);
}

}  // namespace

MT_OP_KERNELS(Softmax) { return register_softmax<false>(registry, OpId::kSoftmax); }
MT_OP_KERNELS(LogSoftmax) { return register_softmax<true>(registry, OpId::kLogSoftmax); }
MT_OP_KERNELS(BiasAdd) {
  return add_kernels(registry, OpId::kBiasAdd, NumericTypes{}, [](auto tag) -> KernelFn {
    return &bias_add_kernel<typename decltype(tag)::type>;
  });
}
MT_OP_KERNELS(SparseSoftmaxCrossEntropyWithLogits) {
  return add_kernels(
      registry, OpId::kSparseSoftmaxCrossEntropyWithLogits, FloatTypes{},
      [](auto tag) -> KernelFn { return &xent_kernel<typename decltype(tag)::type>; });
}

}  // namespace mt::cpu
