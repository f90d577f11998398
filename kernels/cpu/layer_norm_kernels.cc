// CPU kernels of LayerNorm, AddLayerNorm and LayerNormGrad (Note [Layer normalisation] in
// kernels/layer_norm_shape.cc). Rows run in parallel; a row's sums are taken in double
// (the mean, then the squared deviations from it), its element-wise arithmetic in the
// statistics' dtype (float32 for the 2-byte floats). LayerNormGrad's dgamma and dbeta sum
// over rows in blocks whose size depends on the shape alone, the blocks' partial sums
// (double) added in block order, so that the result never depends on the threads.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/layer_norm.h"

namespace mt::cpu {
namespace {

using internal::LayerNormLayout;

constexpr int64_t kGrainElements = 1 << 15;

// Rows of about kGrainElements elements: a parallel chunk, or a block of dgamma's sums.
int64_t rows_per_block(const LayerNormLayout& l) {
  return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(l.cols, 1));
}

template <typename T>
using Stats = std::conditional_t<std::is_same_v<T, double>, double, float>;

// An element in the statistics' dtype (the 2-byte floats through float32).
template <typename T>
Stats<T> wide(T v) {
  return static_cast<Stats<T>>(static_cast<float>(v));
}
template <>
double wide(double v) {
  return v;
}

// Returns a row's mean and 1 / sqrt(var + epsilon), var biased, its sums in double.
template <typename T>
std::pair<double, double> row_stats(const T* x, int64_t n, double epsilon) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += wide(x[i]);
  const double mean = sum / n;
  double squares = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = wide(x[i]) - mean;
    squares += d * d;
  }
  return {mean, 1 / std::sqrt(squares / n + epsilon)};
}

// LayerNorm, or AddLayerNorm (kResidual: inputs x, residual, gamma, beta; outputs y, sum,
// mean, inv_std), whose rows are sum = x + residual rounded to T, written first.
template <typename T, bool kResidual>
absl::Status layer_norm_kernel(const KernelContext& ctx) {
  using U = Stats<T>;
  constexpr int k = kResidual ? 1 : 0;  // the inputs and outputs after x and y move by one
  const LayerNormLayout l = internal::layer_norm_layout(*ctx.inputs[0].shape, ctx.attrs->axis);
  const T* x = input_data<T>(ctx, 0);
  const U *gamma = input_data<U>(ctx, 1 + k), *beta = input_data<U>(ctx, 2 + k);
  T* y = static_cast<T*>(ctx.outputs[0].data);
  U* mean = static_cast<U*>(ctx.outputs[1 + k].data);
  U* inv_std = static_cast<U*>(ctx.outputs[2 + k].data);
  const double epsilon = ctx.attrs->epsilon;
  parallel_for(l.rows, rows_per_block(l), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * l.cols;
      if constexpr (kResidual) {
        const T* rr = input_data<T>(ctx, 1) + r * l.cols;
        T* sum = static_cast<T*>(ctx.outputs[1].data) + r * l.cols;
        for (int64_t i = 0; i < l.cols; ++i) sum[i] = T(wide(xr[i]) + wide(rr[i]));
        xr = sum;
      }
      T* yr = y + r * l.cols;
      const auto [m, inv] = row_stats(xr, l.cols, epsilon);
      const U um = U(m), uinv = U(inv);
      mean[r] = um, inv_std[r] = uinv;
      for (int64_t i = 0; i < l.cols; ++i) {
        yr[i] = T((wide(xr[i]) - um) * uinv * gamma[i] + beta[i]);
      }
    }
  });
  return absl::OkStatus();
}

// Writes dx for rows [begin, end) and adds their dy * xhat and dy into dgamma and dbeta.
template <typename T>
void layer_norm_grad_rows(const KernelContext& ctx, const LayerNormLayout& l, int64_t begin,
                          int64_t end, double* dgamma, double* dbeta) {
  using U = Stats<T>;
  const T *dy = input_data<T>(ctx, 0), *x = input_data<T>(ctx, 1);
  const U *gamma = input_data<U>(ctx, 2), *mean = input_data<U>(ctx, 3);
  const U* inv_std = input_data<U>(ctx, 4);
  T* dx = static_cast<T*>(ctx.outputs[0].data);
  for (int64_t r = begin; r < end; ++r) {
    const T *dyr = dy + r * l.cols, *xr = x + r * l.cols;
    T* dxr = dx + r * l.cols;
    const U m = mean[r], inv = inv_std[r];
    double sum_g = 0, sum_gx = 0;
    for (int64_t i = 0; i < l.cols; ++i) {
      const U xhat = (wide(xr[i]) - m) * inv, d = wide(dyr[i]);
      const U g = d * gamma[i];
      sum_g += g;
      sum_gx += g * xhat;
      dgamma[i] += d * xhat;
      dbeta[i] += d;
    }
    const U mean_g = U(sum_g / l.cols), mean_gx = U(sum_gx / l.cols);
    for (int64_t i = 0; i < l.cols; ++i) {
      const U xhat = (wide(xr[i]) - m) * inv;
      dxr[i] = T(inv * (wide(dyr[i]) * gamma[i] - mean_g - xhat * mean_gx));
    }
  }
}

template <typename T>
absl::Status layer_norm_grad_kernel(const KernelContext& ctx) {
  using U = Stats<T>;
  const LayerNormLayout l = internal::layer_norm_layout(*ctx.inputs[1].shape, ctx.attrs->axis);
  const int64_t rows = rows_per_block(l), blocks = std::max<int64_t>(1, (l.rows + rows - 1) / rows);
  const int64_t width = 2 * l.cols;  // [0, cols): dgamma; [cols, 2 cols): dbeta
  std::vector<double> partial(blocks * width, 0.0);
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      double* p = partial.data() + b * width;
      layer_norm_grad_rows<T>(ctx, l, b * rows, std::min(l.rows, (b + 1) * rows), p, p + l.cols);
    }
  });
  U* dgamma = static_cast<U*>(ctx.outputs[1].data);
  U* dbeta = static_cast<U*>(ctx.outputs[2].data);
  for (int64_t i = 0; i < l.cols; ++i) {
    double g = 0, b = 0;
    for (int64_t k = 0; k < blocks; ++k)
      g += partial[k * width + i], b += partial[k * width + l.cols + i];
    dgamma[i] = U(g), dbeta[i] = U(b);
  }
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(LayerNorm) {
  return add_kernels(registry, OpId::kLayerNorm, FloatTypes{}, [](auto tag) -> KernelFn {
    return &layer_norm_kernel<typename decltype(tag)::type, false>;
  });
}
MT_OP_KERNELS(AddLayerNorm) {
  return add_kernels(registry, OpId::kAddLayerNorm, FloatTypes{}, [](auto tag) -> KernelFn {
    return &layer_norm_kernel<typename decltype(tag)::type, true>;
  });
}
MT_OP_KERNELS(LayerNormGrad) {
  return add_kernels(registry, OpId::kLayerNormGrad, FloatTypes{}, [](auto tag) -> KernelFn {
    return &layer_norm_grad_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
