// GPU kernels of LayerNormGrad (Note [Layer normalisation] in kernels/layer_norm_shape.cc), in
// float32 for the 2-byte floats (float64 in float64): Note [Layer norm on the GPU] in
// layer_norm_rows.h.
#include <algorithm>
#include <cmath>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/layer_norm_rows.h"

namespace mt::cuda {
namespace {

using layer_norm::block_sum;
using layer_norm::kBackwardRows;
using layer_norm::kLongThreads;
using layer_norm::LayerNormLayout;
using layer_norm::Pack;
using layer_norm::pack_col;
using layer_norm::Stats;
using layer_norm::vector_rows;
using layer_norm::warp_iters;
using layer_norm::warp_sum;
using layer_norm::with_iters;

// One row per warp (blockDim (32, kBackwardRows)), x and dy held in registers; writes dx
// and, per block, one partial row of dgamma ([0, cols)) and dbeta ([cols, 2 cols)) into
// `partials` (Note [Layer norm on the GPU]).
template <typename T, int V, int kIters>
__global__ void __launch_bounds__(32 * kBackwardRows, 2)
    layer_norm_grad_warp(const T* __restrict__ dy, const T* __restrict__ x,
                         const Stats<T>* __restrict__ gamma, const Stats<T>* __restrict__ mean,
                         const Stats<T>* __restrict__ inv_std, LayerNormLayout l,
                         T* __restrict__ dx, Stats<T>* __restrict__ partials) {
  using U = Stats<T>;
  __shared__ U shared[2][32 * V * kIters];
  U dgamma[kIters][V] = {}, dbeta[kIters][V] = {};
  const int64_t step = int64_t{gridDim.x} * kBackwardRows;
  for (int64_t row = int64_t{blockIdx.x} * kBackwardRows + threadIdx.y; row < l.rows; row += step) {
    const int64_t base = row * l.cols;
    const U m = mean[row], inv = inv_std[row];
    U xhat[kIters][V], g[kIters][V];
    U sum_g = 0, sum_gx = 0;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int64_t col = pack_col(i, V);
      if (col < l.cols) {
        const Pack<T, V> px = *reinterpret_cast<const Pack<T, V>*>(x + base + col);
        const Pack<T, V> pd = *reinterpret_cast<const Pack<T, V>*>(dy + base + col);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const U d = to_compute(pd.v[j]);
          xhat[i][j] = (to_compute(px.v[j]) - m) * inv;
          g[i][j] = d * __ldg(gamma + col + j);
          sum_g += g[i][j];
          sum_gx += g[i][j] * xhat[i][j];
          dgamma[i][j] += d * xhat[i][j];
          dbeta[i][j] += d;
        }
      }
    }
    const U mean_g = warp_sum(sum_g) / U(l.cols), mean_gx = warp_sum(sum_gx) / U(l.cols);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int64_t col = pack_col(i, V);
      if (col < l.cols) {
        Pack<T, V> p;
#pragma unroll
        for (int j = 0; j < V; ++j) {
          p.v[j] = from_compute<T>(inv * (g[i][j] - mean_g - xhat[i][j] * mean_gx));
        }
        *reinterpret_cast<Pack<T, V>*>(dx + base + col) = p;
      }
    }
  }
  // The block's warps add their columns' sums in warp order; the last writes the partial row.
  U* out = partials + int64_t{blockIdx.x} * 2 * l.cols;
  for (int w = 0; w < kBackwardRows; ++w) {
    if (threadIdx.y == w) {
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const int64_t k = pack_col(i, V) + j;
          if (k >= l.cols) continue;
          const U sg = w == 0 ? dgamma[i][j] : shared[0][k] + dgamma[i][j];
          const U sb = w == 0 ? dbeta[i][j] : shared[1][k] + dbeta[i][j];
          if (w + 1 < kBackwardRows) {
            shared[0][k] = sg, shared[1][k] = sb;
          } else {
            out[k] = sg, out[l.cols + k] = sb;
          }
        }
      }
    }
    __syncthreads();
  }
}

// One row per block of kLongThreads: dx alone (dgamma and dbeta: layer_norm_grad_columns).
template <typename T>
__global__ void __launch_bounds__(kLongThreads)
    layer_norm_grad_long(const T* __restrict__ dy, const T* __restrict__ x,
                         const Stats<T>* __restrict__ gamma, const Stats<T>* __restrict__ mean,
                         const Stats<T>* __restrict__ inv_std, LayerNormLayout l,
                         T* __restrict__ dx) {
  using U = Stats<T>;
  __shared__ U shared[kLongThreads / 32];
  for (int64_t row = blockIdx.x; row < l.rows; row += gridDim.x) {
    const int64_t base = row * l.cols;
    const U m = mean[row], inv = inv_std[row];
    U sum_g = 0, sum_gx = 0;
    for (int64_t c = threadIdx.x; c < l.cols; c += kLongThreads) {
      const U g = to_compute(dy[base + c]) * gamma[c];
      sum_g += g;
      sum_gx += g * (to_compute(x[base + c]) - m) * inv;
    }
    const U mean_g = block_sum(sum_g, shared) / U(l.cols);
    const U mean_gx = block_sum(sum_gx, shared) / U(l.cols);
    for (int64_t c = threadIdx.x; c < l.cols; c += kLongThreads) {
      const U xhat = (to_compute(x[base + c]) - m) * inv;
      dx[base + c] =
          from_compute<T>(inv * (to_compute(dy[base + c]) * gamma[c] - mean_g - xhat * mean_gx));
    }
  }
}

// Block (32, 8) of grid (columns / 32, parts): the sums of dy * xhat and dy of 32 columns over
// part p = blockIdx.y of the rows, into g_out and b_out at p * stride (partial rows, or
// dgamma and dbeta themselves with one part).
template <typename T>
__global__ void __launch_bounds__(256)
    layer_norm_grad_columns(const T* __restrict__ dy, const T* __restrict__ x,
                            const Stats<T>* __restrict__ mean, const Stats<T>* __restrict__ inv_std,
                            LayerNormLayout l, int64_t rows_per_part, Stats<T>* g_out,
                            Stats<T>* b_out, int64_t stride) {
  using U = Stats<T>;
  __shared__ U shared[2][8][33];
  const int64_t c = int64_t{blockIdx.x} * 32 + threadIdx.x;
  const int64_t r0 = int64_t{blockIdx.y} * rows_per_part;
  const int64_t r1 = r0 + rows_per_part < l.rows ? r0 + rows_per_part : l.rows;
  U g = 0, b = 0;
  if (c < l.cols) {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += 8) {
      const U d = to_compute(dy[r * l.cols + c]);
      g += d * (to_compute(x[r * l.cols + c]) - mean[r]) * inv_std[r];
      b += d;
    }
  }
  shared[0][threadIdx.y][threadIdx.x] = g;
  shared[1][threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y != 0 || c >= l.cols) return;
  for (int k = 1; k < 8; ++k) g += shared[0][k][threadIdx.x], b += shared[1][k][threadIdx.x];
  g_out[blockIdx.y * stride + c] = g;
  b_out[blockIdx.y * stride + c] = b;
}

// Threads along the partial rows in a block of layer_norm_param_sums: enough loads in flight
// that adding some hundred partial rows takes a few memory latencies, not one per row.
inline constexpr int kSumLanes = 32;

// Block (32, kSumLanes) of grid columns / 32: dgamma and dbeta, the `parts` partial rows
// added in a fixed order in double.
template <typename U>
__global__ void __launch_bounds__(32 * kSumLanes)
    layer_norm_param_sums(const U* __restrict__ partials, int64_t parts, int64_t cols,
                          U* __restrict__ dgamma, U* __restrict__ dbeta) {
  __shared__ double shared[2][kSumLanes][33];
  const int64_t c = int64_t{blockIdx.x} * 32 + threadIdx.x;
  double g = 0, b = 0;
  if (c < cols) {
#pragma unroll 4
    for (int64_t p = threadIdx.y; p < parts; p += kSumLanes) {
      g += partials[2 * p * cols + c];
      b += partials[(2 * p + 1) * cols + c];
    }
  }
  shared[0][threadIdx.y][threadIdx.x] = g;
  shared[1][threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols) return;
  for (int k = 1; k < kSumLanes; ++k) {
    g += shared[0][k][threadIdx.x], b += shared[1][k][threadIdx.x];
  }
  dgamma[c] = U(g), dbeta[c] = U(b);
}

// The pointers of a LayerNormGrad call.
template <typename T>
struct GradArgs {
  const T *dy, *x;
  const Stats<T>*gamma, *mean, *inv_std;
  T* dx;
  Stats<T>*dgamma, *dbeta;
};

// Returns how many blocks of layer_norm_grad_warp<T, V, kIters> a multiprocessor holds at
// once (its registers decide), asked of the runtime once; at least 1.
template <typename T, int V, int kIters>
int64_t resident_blocks() {
  static const int64_t blocks = [] {
    int n = 0;
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &n, &layer_norm_grad_warp<T, V, kIters>, 32 * kBackwardRows, 0);
    if (e != cudaSuccess) cudaGetLastError();  // not left for the next launch's check
    return e == cudaSuccess && n > 0 ? int64_t{n} : int64_t{1};
  }();
  return blocks;
}

// dx by rows of a block each, then dgamma and dbeta over columns in `parts` partial rows of
// `partials`, or straight into dgamma and dbeta when `partials` is null (one part).
template <typename T>
absl::Status grad_long_rows(const GpuState& state, const GradArgs<T>& a, const LayerNormLayout& l,
                            Stats<T>* partials, int64_t parts) {
  constexpr OpId kOp = OpId::kLayerNormGrad;
  MT_RETURN_IF_ERROR(launch(kOp, state, grid_for(l.rows, 1), kLongThreads, &layer_norm_grad_long<T>,
                            a.dy, a.x, a.gamma, a.mean, a.inv_std, l, a.dx));
  if (partials == nullptr) parts = 1;
  const int64_t rows_per_part = (l.rows + parts - 1) / parts;
  const dim3 grid(static_cast<unsigned>((l.cols + 31) / 32), static_cast<unsigned>(parts));
  if (partials == nullptr) {
    return launch(kOp, state, grid, dim3(32, 8), &layer_norm_grad_columns<T>, a.dy, a.x, a.mean,
                  a.inv_std, l, rows_per_part, a.dgamma, a.dbeta, int64_t{0});
  }
  MT_RETURN_IF_ERROR(launch(kOp, state, grid, dim3(32, 8), &layer_norm_grad_columns<T>, a.dy, a.x,
                            a.mean, a.inv_std, l, rows_per_part, partials, partials + l.cols,
                            2 * l.cols));
  return launch(kOp, state, grid.x, dim3(32, kSumLanes), &layer_norm_param_sums<Stats<T>>,
                static_cast<const Stats<T>*>(partials), parts, l.cols, a.dgamma, a.dbeta);
}

template <typename T, int V>
absl::Status layer_norm_grad_rows(const GpuState& state, const GradArgs<T>& a,
                                  const LayerNormLayout& l, Stats<T>* partials, int64_t max_parts) {
  constexpr OpId kOp = OpId::kLayerNormGrad;
  const int iters = warp_iters<V>(l.cols);
  if (iters == 0) {
    const int64_t parts = std::min<int64_t>({max_parts, 2 * sm_count(state), (l.rows + 63) / 64});
    return grad_long_rows<T>(state, a, l, partials, std::max<int64_t>(parts, 1));
  }
  return with_iters<V>(iters, [&](auto k) {
    constexpr int kIters = decltype(k)::value;
    // One wave of the blocks the multiprocessors hold at once: a second, partial wave would
    // leave most of them idle while it runs.
    const int64_t blocks =
        std::min<int64_t>({max_parts, resident_blocks<T, V, kIters>() * sm_count(state),
                           (l.rows + kBackwardRows - 1) / kBackwardRows});
    MT_RETURN_IF_ERROR(launch(kOp, state, static_cast<unsigned>(blocks), dim3(32, kBackwardRows),
                              &layer_norm_grad_warp<T, V, kIters>, a.dy, a.x, a.gamma, a.mean,
                              a.inv_std, l, a.dx, partials));
    return launch(kOp, state, static_cast<unsigned>((l.cols + 31) / 32), dim3(32, kSumLanes),
                  &layer_norm_param_sums<Stats<T>>, static_cast<const Stats<T>*>(partials), blocks,
                  l.cols, a.dgamma, a.dbeta);
  });
}

template <typename T>
absl::Status run_layer_norm_grad(const KernelContext& ctx) {
  using U = Stats<T>;
  constexpr OpId kOp = OpId::kLayerNormGrad;
  const LayerNormLayout l = internal::layer_norm_layout(*ctx.inputs[1].shape, ctx.attrs->axis);
  const GpuState& state = gpu_state(ctx);
  auto in = [&](int i) { return static_cast<const U*>(ctx.inputs[i].data); };
  const GradArgs<T> a = {static_cast<const T*>(ctx.inputs[0].data),
                         static_cast<const T*>(ctx.inputs[1].data),
                         in(2),
                         in(3),
                         in(4),
                         static_cast<T*>(ctx.outputs[0].data),
                         static_cast<U*>(ctx.outputs[1].data),
                         static_cast<U*>(ctx.outputs[2].data)};
  if (l.rows == 0) {  // no row: dgamma and dbeta are zeros
    U* const zeroed[] = {a.dgamma, a.dbeta};
    for (U* out : zeroed) {
      MT_RETURN_IF_ERROR(cuda_status(kOp, "cudaMemsetAsync",
                                     cudaMemsetAsync(out, 0, l.cols * sizeof(U), state.stream)));
    }
    return absl::OkStatus();
  }
  // The partial rows of dgamma and dbeta live in the scratch (Note [Scratch between launches]
  // in reduction_kernels.cu); without room for one, the column kernel sums straight into them.
  const int64_t room =
      state.scratch == nullptr ? 0 : state.scratch_bytes / (2 * l.cols * sizeof(U));
  if (room == 0) return grad_long_rows<T>(state, a, l, nullptr, 1);
  MT_CHECK(state.scratch_mu != nullptr);
  internal::MutexLock lock(state.scratch_mu);  // Note [Scratch between launches]
  U* partials = static_cast<U*>(state.scratch);
  constexpr int kVec = 16 / sizeof(T);
  if (vector_rows<T>(l, {a.dy, a.x, a.dx})) {
    return layer_norm_grad_rows<T, kVec>(state, a, l, partials, room);
  }
  return layer_norm_grad_rows<T, 1>(state, a, l, partials, room);
}

}  // namespace

MT_OP_KERNELS(LayerNormGrad) {
  return add_gpu_kernels(registry, OpId::kLayerNormGrad, FloatTypes{}, [](auto tag) -> KernelFn {
    return &run_layer_norm_grad<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
