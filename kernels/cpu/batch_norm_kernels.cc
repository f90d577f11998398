// CPU kernels of FusedBatchNormV3 and FusedBatchNormGradV3 (Note [Batch normalisation] in
// kernels/batch_norm_shape.cc). Per-channel sums are taken in double over blocks of outer
// rows whose size depends on the shape alone, the blocks in parallel and their partial
// sums added in block order, so that the result never depends on the threads; the
// statistics take two passes (the mean, then the squared deviations from it). The
// element-wise passes compute in the statistics' dtype (float32 for the 2-byte floats).
#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/batch_norm.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

using internal::BatchNormLayout;

constexpr int64_t kGrainElements = 1 << 15;

// The outer rows of one block or chunk: about kGrainElements elements.
int64_t rows_per_block(const BatchNormLayout& l) {
  return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(l.channels * l.inner, 1));
}

// Adds term(index, c) (an array of kN doubles) of outer rows [o0, o1) into acc[k * channels
// + c]: along the channels in NHWC (inner 1, which vectorises), along each row in NCHW.
template <int kN, typename Term>
void add_rows(const BatchNormLayout& l, int64_t o0, int64_t o1, Term& term, double* acc) {
  const int64_t channels = l.channels;
  for (int64_t o = o0; o < o1; ++o) {
    if (l.inner == 1) {
      for (int64_t c = 0; c < channels; ++c) {
        const std::array<double, kN> t = term(o * channels + c, c);
        for (int k = 0; k < kN; ++k) acc[k * channels + c] += t[k];
      }
      continue;
    }
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (o * channels + c) * l.inner;
      std::array<double, kN> row = {};
      for (int64_t i = 0; i < l.inner; ++i) {
        const std::array<double, kN> t = term(base + i, c);
        for (int k = 0; k < kN; ++k) row[k] += t[k];
      }
      for (int k = 0; k < kN; ++k) acc[k * channels + c] += row[k];
    }
  }
}

// Returns kN sums per channel, [k * channels + c], of term(index, c) (an array of kN
// doubles) over every element: the blocks' partial sums (add_rows), added in block order.
template <int kN, typename Term>
std::vector<double> channel_sums(const BatchNormLayout& l, Term term) {
  const int64_t rows = rows_per_block(l), blocks = (l.outer + rows - 1) / rows;
  const int64_t width = kN * l.channels;
  std::vector<double> partial(blocks * width, 0.0);
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      add_rows<kN>(l, b * rows, std::min(l.outer, (b + 1) * rows), term,
                   partial.data() + b * width);
    }
  });
  std::vector<double> sums(width, 0.0);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t j = 0; j < width; ++j) sums[j] += partial[b * width + j];
  }
  return sums;
}

// Calls fn(index, c) for every element, split across threads by outer rows.
template <typename Fn>
void for_each_element(const BatchNormLayout& l, Fn fn) {
  parallel_for(l.outer, rows_per_block(l), [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      if (l.inner == 1) {
        for (int64_t c = 0; c < l.channels; ++c) fn(o * l.channels + c, c);
        continue;
      }
      for (int64_t c = 0; c < l.channels; ++c) {
        const int64_t base = (o * l.channels + c) * l.inner;
        for (int64_t i = 0; i < l.inner; ++i) fn(base + i, c);
      }
    }
  });
}

// An element as a double (the 2-byte floats through float32).
template <typename T>
double wide(T v) {
  if constexpr (kIsHalf<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

template <typename T>
using Stats = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Training: sets `mean` and `var` to the batch's mean and biased variance (two passes) and
// writes outputs 1-4 (Note [Batch normalisation]).
template <typename T>
void batch_statistics(const KernelContext& ctx, const BatchNormLayout& l, std::vector<double>* mean,
                      std::vector<double>* var) {
  using U = Stats<T>;
  const T* x = input_data<T>(ctx, 0);
  const double n = static_cast<double>(l.count());
  const std::vector<double> sum =
      channel_sums<1>(l, [&](int64_t j, int64_t) { return std::array<double, 1>{wide(x[j])}; });
  for (int64_t c = 0; c < l.channels; ++c) (*mean)[c] = sum[c] / n;
  const std::vector<double> squares = channel_sums<1>(l, [&](int64_t j, int64_t c) {
    const double d = wide(x[j]) - (*mean)[c];
    return std::array<double, 1>{d * d};
  });
  const double f = ctx.attrs->exponential_avg_factor, bessel = n / std::max(n - 1, 1.0);
  const bool blend = f != 1;
  const U *old_mean = input_data<U>(ctx, 3), *old_var = input_data<U>(ctx, 4);
  U* out[5];
  for (int i = 1; i < 5; ++i) out[i] = static_cast<U*>(ctx.outputs[i].data);
  for (int64_t c = 0; c < l.channels; ++c) {
    const double m = (*mean)[c], v = (*var)[c] = squares[c] / n;
    out[1][c] = U(blend ? (1 - f) * old_mean[c] + f * m : m);
    out[2][c] = U(blend ? (1 - f) * old_var[c] + f * v * bessel : v * bessel);
    out[3][c] = U(m);
    out[4][c] = U(v);
  }
}

// Inference: the given statistics, returned in outputs 1-4 unchanged.
template <typename T>
void given_statistics(const KernelContext& ctx, int64_t channels, std::vector<double>* mean,
                      std::vector<double>* var) {
  using U = Stats<T>;
  for (int64_t c = 0; c < channels; ++c) {
    const U m = input_data<U>(ctx, 3)[c], v = input_data<U>(ctx, 4)[c];
    (*mean)[c] = m, (*var)[c] = v;
    for (int i : {1, 3}) static_cast<U*>(ctx.outputs[i].data)[c] = m;
    for (int i : {2, 4}) static_cast<U*>(ctx.outputs[i].data)[c] = v;
  }
}

template <typename T>
absl::Status batch_norm_kernel(const KernelContext& ctx) {
  using U = Stats<T>;
  const OpAttrs& attrs = *ctx.attrs;
  const BatchNormLayout l = internal::batch_norm_layout(*ctx.inputs[0].shape, attrs.channels_first);
  std::vector<double> mean(l.channels), var(l.channels);
  if (attrs.is_training) {
    batch_statistics<T>(ctx, l, &mean, &var);
  } else {
    given_statistics<T>(ctx, l.channels, &mean, &var);
  }
  // y = x * a + b per channel.
  const U *scale = input_data<U>(ctx, 1), *offset = input_data<U>(ctx, 2);
  std::vector<U> a(l.channels), b(l.channels);
  for (int64_t c = 0; c < l.channels; ++c) {
    const U r = U(1) / std::sqrt(U(var[c]) + U(attrs.epsilon));
    a[c] = scale[c] * r;
    b[c] = offset[c] - U(mean[c]) * a[c];
  }
  const T* x = input_data<T>(ctx, 0);
  T* y = static_cast<T*>(ctx.outputs[0].data);
  for_each_element(l, [&](int64_t j, int64_t c) { y[j] = T(U(wide(x[j])) * a[c] + b[c]); });
  return absl::OkStatus();
}

template <typename T>
absl::Status batch_norm_grad_kernel(const KernelContext& ctx) {
  using U = Stats<T>;
  const OpAttrs& attrs = *ctx.attrs;
  const BatchNormLayout l = internal::batch_norm_layout(*ctx.inputs[1].shape, attrs.channels_first);
  const T *dy = input_data<T>(ctx, 0), *x = input_data<T>(ctx, 1);
  const U *scale = input_data<U>(ctx, 2), *mean = input_data<U>(ctx, 3);
  const U* var = input_data<U>(ctx, 4);
  std::vector<double> r(l.channels);
  for (int64_t c = 0; c < l.channels; ++c) r[c] = 1 / std::sqrt(double(var[c]) + attrs.epsilon);
  // [0, C): sum(dy); [C, 2C): sum(dy * xhat).
  const std::vector<double> sums = channel_sums<2>(l, [&](int64_t j, int64_t c) {
    const double g = wide(dy[j]);
    return std::array<double, 2>{g, g * (wide(x[j]) - mean[c]) * r[c]};
  });
  U* dscale = static_cast<U*>(ctx.outputs[1].data);
  U* doffset = static_cast<U*>(ctx.outputs[2].data);
  std::vector<U> k(l.channels), ur(l.channels), mean_dy(l.channels), mean_dyx(l.channels);
  const double n = static_cast<double>(l.count());
  for (int64_t c = 0; c < l.channels; ++c) {
    doffset[c] = U(sums[c]);
    dscale[c] = U(sums[l.channels + c]);
    k[c] = U(scale[c] * r[c]);
    ur[c] = U(r[c]);
    mean_dy[c] = U(sums[c] / n);
    mean_dyx[c] = U(sums[l.channels + c] / n);
  }
  T* dx = static_cast<T*>(ctx.outputs[0].data);
  if (!attrs.is_training) {
    // Inference: x_backprop = dy * scale / sqrt(var + epsilon), x not read (an inf in x
    // would make NaN of xhat times a zero mean; TensorFlow's is finite).
    for_each_element(l, [&](int64_t j, int64_t c) { dx[j] = T(k[c] * U(wide(dy[j]))); });
    return absl::OkStatus();
  }
  for_each_element(l, [&](int64_t j, int64_t c) {
    const U xhat = (U(wide(x[j])) - mean[c]) * ur[c];
    dx[j] = T(k[c] * (U(wide(dy[j])) - mean_dy[c] - xhat * mean_dyx[c]));
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(FusedBatchNormV3) {
  return add_kernels(registry, OpId::kFusedBatchNormV3, FloatTypes{}, [](auto tag) -> KernelFn {
    return &batch_norm_kernel<typename decltype(tag)::type>;
  });
}
MT_OP_KERNELS(FusedBatchNormGradV3) {
  return add_kernels(registry, OpId::kFusedBatchNormGradV3, FloatTypes{}, [](auto tag) -> KernelFn {
    return &batch_norm_grad_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
