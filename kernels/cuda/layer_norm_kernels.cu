// GPU kernels of LayerNorm and AddLayerNorm (Note [Layer normalisation] in
// kernels/layer_norm_shape.cc), in float32 for the 2-byte floats (float64 in float64): Note
// [Layer norm on the GPU] in layer_norm_rows.h.
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

// The pointers and epsilon of a LayerNorm or AddLayerNorm call.
template <typename T>
struct ForwardArgs {
  const T* x;
  const T* residual;  // AddLayerNorm's; null for LayerNorm
  const Stats<T>*gamma, *beta;
  T* y;
  T* sum;  // AddLayerNorm's x + residual, the rows it normalises; null for LayerNorm
  Stats<T>*mean, *inv_std;
  Stats<T> epsilon;
};

// Returns element k of the rows normalised: x's, or (kResidual) x + residual rounded to T.
template <bool kResidual, typename T>
__device__ __forceinline__ T row_element(const ForwardArgs<T>& a, int64_t k) {
  if constexpr (kResidual) {
    return from_compute<T>(to_compute(a.x[k]) + to_compute(a.residual[k]));
  } else {
    return a.x[k];
  }
}

// One row per warp (blockDim (32, kForwardRows)), held in registers; with kResidual the row
// is x + residual, written to a.sum as it is read.
template <typename T, int V, int kIters, bool kResidual>
__global__ void __launch_bounds__(32 * kForwardRows)
    layer_norm_warp(ForwardArgs<T> a, LayerNormLayout l) {
  using U = Stats<T>;
  const int64_t step = int64_t{gridDim.x} * kForwardRows;
  for (int64_t row = int64_t{blockIdx.x} * kForwardRows + threadIdx.y; row < l.rows; row += step) {
    const int64_t base = row * l.cols;
    U v[kIters][V];
    U sum = 0;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int64_t col = pack_col(i, V);
      if (col < l.cols) {
        Pack<T, V> p = *reinterpret_cast<const Pack<T, V>*>(a.x + base + col);
        if constexpr (kResidual) {
          const Pack<T, V> r = *reinterpret_cast<const Pack<T, V>*>(a.residual + base + col);
#pragma unroll
          for (int j = 0; j < V; ++j)
            p.v[j] = from_compute<T>(to_compute(p.v[j]) + to_compute(r.v[j]));
          *reinterpret_cast<Pack<T, V>*>(a.sum + base + col) = p;
        }
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
    const U inv = U(1) / sqrt(warp_sum(squares) / U(l.cols) + a.epsilon);
    if (threadIdx.x == 0) a.mean[row] = m, a.inv_std[row] = inv;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int64_t col = pack_col(i, V);
      if (col < l.cols) {
        Pack<T, V> p;
#pragma unroll
        for (int j = 0; j < V; ++j) {
          p.v[j] =
              from_compute<T>(v[i][j] * inv * __ldg(a.gamma + col + j) + __ldg(a.beta + col + j));
        }
        *reinterpret_cast<Pack<T, V>*>(a.y + base + col) = p;
      }
    }
  }
}

// One row per block of kLongThreads: the statistics, then y, each pass over the row (with
// kResidual, the first writes a.sum).
template <typename T, bool kResidual>
__global__ void __launch_bounds__(kLongThreads)
    layer_norm_long(ForwardArgs<T> a, LayerNormLayout l) {
  using U = Stats<T>;
  __shared__ U shared[kLongThreads / 32];
  for (int64_t row = blockIdx.x; row < l.rows; row += gridDim.x) {
    const int64_t base = row * l.cols;
    U sum = 0;
    for (int64_t c = threadIdx.x; c < l.cols; c += kLongThreads) {
      const T e = row_element<kResidual>(a, base + c);
      if constexpr (kResidual) a.sum[base + c] = e;
      sum += to_compute(e);
    }
    const U m = block_sum(sum, shared) / U(l.cols);
    U squares = 0;
    for (int64_t c = threadIdx.x; c < l.cols; c += kLongThreads) {
      const U d = to_compute(row_element<kResidual>(a, base + c)) - m;
      squares += d * d;
    }
    const U inv = U(1) / sqrt(block_sum(squares, shared) / U(l.cols) + a.epsilon);
    if (threadIdx.x == 0) a.mean[row] = m, a.inv_std[row] = inv;
    for (int64_t c = threadIdx.x; c < l.cols; c += kLongThreads) {
      const U d = to_compute(row_element<kResidual>(a, base + c)) - m;
      a.y[base + c] = from_compute<T>(d * inv * a.gamma[c] + a.beta[c]);
    }
  }
}

template <typename T, int V, bool kResidual>
absl::Status layer_norm_rows(const GpuState& state, const ForwardArgs<T>& a,
                             const LayerNormLayout& l) {
  constexpr OpId kOp = kResidual ? OpId::kAddLayerNorm : OpId::kLayerNorm;
  const int iters = warp_iters<V>(l.cols);
  if (iters == 0) {
    return launch(kOp, state, grid_for(l.rows, 1), kLongThreads, &layer_norm_long<T, kResidual>, a,
                  l);
  }
  return with_iters<V>(iters, [&](auto k) {
    return launch(kOp, state, grid_for(l.rows, kForwardRows), dim3(32, kForwardRows),
                  &layer_norm_warp<T, V, decltype(k)::value, kResidual>, a, l);
  });
}

// LayerNorm, or AddLayerNorm (kResidual: inputs x, residual, gamma, beta; outputs y, sum,
// mean, inv_std).
template <typename T, bool kResidual>
absl::Status run_layer_norm(const KernelContext& ctx) {
  using U = Stats<T>;
  constexpr int k = kResidual ? 1 : 0;  // the inputs and outputs after x and y move by one
  const LayerNormLayout l = internal::layer_norm_layout(*ctx.inputs[0].shape, ctx.attrs->axis);
  if (l.rows == 0) return absl::OkStatus();
  const ForwardArgs<T> a = {static_cast<const T*>(ctx.inputs[0].data),
                            kResidual ? static_cast<const T*>(ctx.inputs[1].data) : nullptr,
                            static_cast<const U*>(ctx.inputs[1 + k].data),
                            static_cast<const U*>(ctx.inputs[2 + k].data),
                            static_cast<T*>(ctx.outputs[0].data),
                            kResidual ? static_cast<T*>(ctx.outputs[1].data) : nullptr,
                            static_cast<U*>(ctx.outputs[1 + k].data),
                            static_cast<U*>(ctx.outputs[2 + k].data),
                            U(ctx.attrs->epsilon)};
  constexpr int kVec = 16 / sizeof(T);
  const bool vector =
      kResidual ? vector_rows<T>(l, {a.x, a.y, a.residual, a.sum}) : vector_rows<T>(l, {a.x, a.y});
  if (vector) return layer_norm_rows<T, kVec, kResidual>(gpu_state(ctx), a, l);
  return layer_norm_rows<T, 1, kResidual>(gpu_state(ctx), a, l);
}

}  // namespace

MT_OP_KERNELS(LayerNorm) {
  return add_gpu_kernels(registry, OpId::kLayerNorm, FloatTypes{}, [](auto tag) -> KernelFn {
    return &run_layer_norm<typename decltype(tag)::type, false>;
  });
}
MT_OP_KERNELS(AddLayerNorm) {
  return add_gpu_kernels(registry, OpId::kAddLayerNorm, FloatTypes{}, [](auto tag) -> KernelFn {
    return &run_layer_norm<typename decltype(tag)::type, true>;
  });
}

}  // namespace mt::cuda
