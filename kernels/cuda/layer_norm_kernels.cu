// GPU kernel of LayerNorm (Note [Layer normalisation] in kernels/layer_norm_shape.cc), in
// float32 for the 2-byte floats (float64 in float64): Note [Layer norm on the GPU] in
// layer_norm_rows.h.
#include <cmath>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/layer_norm_rows.h"

namespace mt::cuda {
namespace {

using layer_norm::block_sum;
using layer_norm::kForwardRows;
using layer_norm::kLongThreads;
using layer_norm::LayerNormLayout;
using layer_norm::Pack;
using layer_norm::pack_col;
using layer_norm::Stats;
using layer_norm::vector_rows;
using layer_norm::warp_iters;
using layer_norm::warp_sum;
using layer_norm::with_iters;

// One row per warp (blockDim (32, kForwardRows)), held in registers.
template <typename T, int V, int kIters>
__global__ void __launch_bounds__(32 * kForwardRows)
    layer_norm_warp(const T* __restrict__ x, const Stats<T>* __restrict__ gamma,
                    const Stats<T>* __restrict__ beta, LayerNormLayout l, Stats<T> epsilon,
                    T* __restrict__ y, Stats<T>* __restrict__ mean,
                    Stats<T>* __restrict__ inv_std) {
  using U = Stats<T>;
  const int64_t step = int64_t{gridDim.x} * kForwardRows;
  for (int64_t row = int64_t{blockIdx.x} * kForwardRows + threadIdx.y; row < l.rows; row += step) {
    const T* xr = x + row * l.cols;
    U v[kIters][V];
    U sum = 0;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (pack_col(i, V) < l.cols) {
        const Pack<T, V> p = *reinterpret_cast<const Pack<T, V>*>(xr + pack_col(i, V));
#pragma unroll
        for (int j = 0; j < V; ++j) sum += v[i][j] = to_compute(p.v[j]);
      }
    }
    const U m = warp_sum(sum) / U(l.cols);
    U squares = 0;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (pack_col(i, V) < l.cols) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          v[i][j] -= m;
          squares += v[i][j] * v[i][j];
        }
      }
    }
    const U inv = U(1) / sqrt(warp_sum(squares) / U(l.cols) + epsilon);
    if (threadIdx.x == 0) mean[row] = m, inv_std[row] = inv;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int64_t col = pack_col(i, V);
      if (col < l.cols) {
        Pack<T, V> p;
#pragma unroll
        for (int j = 0; j < V; ++j) {
          p.v[j] = from_compute<T>(v[i][j] * inv * __ldg(gamma + col + j) + __ldg(beta + col + j));
        }
        *reinterpret_cast<Pack<T, V>*>(y + row * l.cols + col) = p;
      }
    }
  }
}

// One row per block of kLongThreads: the statistics, then y, each pass over the row.
template <typename T>
__global__ void __launch_bounds__(kLongThreads)
    layer_norm_long(const T* __restrict__ x, const Stats<T>* __restrict__ gamma,
                    const Stats<T>* __restrict__ beta, LayerNormLayout l, Stats<T> epsilon,
                    T* __restrict__ y, Stats<T>* __restrict__ mean,
                    Stats<T>* __restrict__ inv_std) {
  using U = Stats<T>;
  __shared__ U shared[kLongThreads / 32];
  for (int64_t row = blockIdx.x; row < l.rows; row += gridDim.x) {
    const T* xr = x + row * l.cols;
    U sum = 0;
    for (int64_t c = threadIdx.x; c < l.cols; c += kLongThreads) sum += to_compute(xr[c]);
    const U m = block_sum(sum, shared) / U(l.cols);
    U squares = 0;
    for (int64_t c = threadIdx.x; c < l.cols; c += kLongThreads) {
      const U d = to_compute(xr[c]) - m;
      squares += d * d;
    }
    const U inv = U(1) / sqrt(block_sum(squares, shared) / U(l.cols) + epsilon);
    if (threadIdx.x == 0) mean[row] = m, inv_std[row] = inv;
    for (int64_t c = threadIdx.x; c < l.cols; c += kLongThreads) {
      y[row * l.cols + c] = from_compute<T>((to_compute(xr[c]) - m) * inv * gamma[c] + beta[c]);
    }
  }
}

template <typename T, int V>
absl::Status layer_norm_rows(const GpuState& state, const T* x, const Stats<T>* gamma,
                             const Stats<T>* beta, const LayerNormLayout& l, Stats<T> epsilon, T* y,
                             Stats<T>* mean, Stats<T>* inv_std) {
  constexpr OpId kOp = OpId::kLayerNorm;
  const int iters = warp_iters<V>(l.cols);
  if (iters == 0) {
    return launch(kOp, state, grid_for(l.rows, 1), kLongThreads, &layer_norm_long<T>, x, gamma,
                  beta, l, epsilon, y, mean, inv_std);
  }
  return with_iters<V>(iters, [&](auto k) {
    return launch(kOp, state, grid_for(l.rows, kForwardRows), dim3(32, kForwardRows),
                  &layer_norm_warp<T, V, decltype(k)::value>, x, gamma, beta, l, epsilon, y, mean,
                  inv_std);
  });
}

template <typename T>
absl::Status run_layer_norm(const KernelContext& ctx) {
  using U = Stats<T>;
  const LayerNormLayout l = internal::layer_norm_layout(*ctx.inputs[0].shape, ctx.attrs->axis);
  if (l.rows == 0) return absl::OkStatus();
  const T* x = static_cast<const T*>(ctx.inputs[0].data);
  const U* gamma = static_cast<const U*>(ctx.inputs[1].data);
  const U* beta = static_cast<const U*>(ctx.inputs[2].data);
  T* y = static_cast<T*>(ctx.outputs[0].data);
  U* mean = static_cast<U*>(ctx.outputs[1].data);
  U* inv_std = static_cast<U*>(ctx.outputs[2].data);
  const U epsilon = U(ctx.attrs->epsilon);
  constexpr int kVec = 16 / sizeof(T);
  if (vector_rows<T>(l, {x, y})) {
    return layer_norm_rows<T, kVec>(gpu_state(ctx), x, gamma, beta, l, epsilon, y, mean, inv_std);
  }
  return layer_norm_rows<T, 1>(gpu_state(ctx), x, gamma, beta, l, epsilon, y, mean, inv_std);
}

}  // namespace

MT_OP_KERNELS(LayerNorm) {
  return add_gpu_kernels(registry, OpId::kLayerNorm, FloatTypes{}, [](auto tag) -> KernelFn {
    return &run_layer_norm<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
