// GPU kernels of FusedBatchNormV3 and FusedBatchNormGradV3 (Note [Batch normalisation] in
// kernels/batch_norm_shape.cc): one block per channel takes its sums in double over the
// channel's elements (a block reduction; the statistics in two passes), then a thread per
// element writes y or x_backprop.
#include <cmath>

#include "kernels/batch_norm.h"
#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

using internal::BatchNormLayout;

template <typename T>
using Stats = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Element k of channel c.
__device__ __forceinline__ int64_t element(const BatchNormLayout& l, int64_t c, int64_t k) {
  return ((k / l.inner) * l.channels + c) * l.inner + k % l.inner;
}

// Returns the block's sum of `v` (every thread gets it).
__device__ double block_sum(double v, double* shared) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  double total = 0;
  for (int w = 0; w < kThreads / 32; ++w) total += shared[w];
  return total;
}

// Block c: the batch's mean and biased variance of channel c, and the four statistics.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    batch_stats(const T* __restrict__ x, BatchNormLayout l, const Stats<T>* old_mean,
                const Stats<T>* old_var, double factor, Stats<T>* batch_mean, Stats<T>* batch_var,
                Stats<T>* saved_mean, Stats<T>* saved_var) {
  using U = Stats<T>;
  __shared__ double shared[kThreads / 32];
  const int64_t c = blockIdx.x, n = l.outer * l.inner;
  double sum = 0;
  for (int64_t k = threadIdx.x; k < n; k += kThreads) sum += to_compute(x[element(l, c, k)]);
  const double mean = block_sum(sum, shared) / n;
  double squares = 0;
  for (int64_t k = threadIdx.x; k < n; k += kThreads) {
    const double d = to_compute(x[element(l, c, k)]) - mean;
    squares += d * d;
  }
  const double var = block_sum(squares, shared) / n;
  if (threadIdx.x != 0) return;
  const double bessel = n > 1 ? double(n) / (n - 1) : 1.0;
  const bool blend = factor != 1;
  batch_mean[c] = U(blend ? (1 - factor) * old_mean[c] + factor * mean : mean);
  batch_var[c] = U(blend ? (1 - factor) * old_var[c] + factor * var * bessel : var * bessel);
  saved_mean[c] = U(mean);
  saved_var[c] = U(var);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    batch_norm_apply(const T* __restrict__ x, BatchNormLayout l, const Stats<T>* scale,
                     const Stats<T>* offset, const Stats<T>* mean, const Stats<T>* var,
                     double epsilon, T* __restrict__ y) {
  using U = Stats<T>;
  const int64_t total = l.outer * l.channels * l.inner;
  for (int64_t j = int64_t{blockIdx.x} * kThreads + threadIdx.x; j < total;
       j += int64_t{gridDim.x} * kThreads) {
    const int64_t c = (j / l.inner) % l.channels;
    const U r = U(1) / sqrt(var[c] + U(epsilon));
    y[j] = from_compute<T>(Compute<T>((U(to_compute(x[j])) - mean[c]) * r * scale[c] + offset[c]));
  }
}

// Block c: sum(dy) and sum(dy * xhat) of channel c.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    batch_norm_grad_sums(const T* __restrict__ dy, const T* __restrict__ x, BatchNormLayout l,
                         const Stats<T>* mean, const Stats<T>* var, double epsilon,
                         Stats<T>* dscale, Stats<T>* doffset) {
  using U = Stats<T>;
  __shared__ double shared[kThreads / 32];
  const int64_t c = blockIdx.x, n = l.outer * l.inner;
  const double r = 1 / sqrt(double(var[c]) + epsilon);
  double sum_dy = 0, sum_dyx = 0;
  for (int64_t k = threadIdx.x; k < n; k += kThreads) {
    const int64_t j = element(l, c, k);
    const double g = to_compute(dy[j]);
    sum_dy += g;
    sum_dyx += g * (to_compute(x[j]) - double(mean[c])) * r;
  }
  sum_dy = block_sum(sum_dy, shared);
  sum_dyx = block_sum(sum_dyx, shared);
  if (threadIdx.x == 0) doffset[c] = U(sum_dy), dscale[c] = U(sum_dyx);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    batch_norm_grad_apply(const T* __restrict__ dy, const T* __restrict__ x, BatchNormLayout l,
                          const Stats<T>* scale, const Stats<T>* mean, const Stats<T>* var,
                          const Stats<T>* dscale, const Stats<T>* doffset, double epsilon,
                          bool training, T* __restrict__ dx) {
  using U = Stats<T>;
  const int64_t total = l.outer * l.channels * l.inner;
  const U n = U(l.outer * l.inner);
  for (int64_t j = int64_t{blockIdx.x} * kThreads + threadIdx.x; j < total;
       j += int64_t{gridDim.x} * kThreads) {
    const int64_t c = (j / l.inner) % l.channels;
    const U r = U(1) / sqrt(var[c] + U(epsilon));
    U g = U(to_compute(dy[j]));
    if (training) {
      const U xhat = (U(to_compute(x[j])) - mean[c]) * r;
      g -= (doffset[c] + xhat * dscale[c]) / n;
    }
    dx[j] = from_compute<T>(Compute<T>(scale[c] * r * g));
  }
}

template <typename T>
absl::Status run_batch_norm(const KernelContext& ctx) {
  using U = Stats<T>;
  constexpr OpId kOp = OpId::kFusedBatchNormV3;
  const OpAttrs& a = *ctx.attrs;
  const BatchNormLayout l = internal::batch_norm_layout(*ctx.inputs[0].shape, a.channels_first);
  const GpuState& state = gpu_state(ctx);
  const T* x = static_cast<const T*>(ctx.inputs[0].data);
  auto in = [&](int i) { return static_cast<const U*>(ctx.inputs[i].data); };
  auto out = [&](int i) { return static_cast<U*>(ctx.outputs[i].data); };
  const U *mean = in(3), *var = in(4);
  if (a.is_training) {
    if (l.channels > 0) {
      MT_RETURN_IF_ERROR(launch(kOp, state, static_cast<unsigned>(l.channels), kThreads,
                                &batch_stats<T>, x, l, in(3), in(4), a.exponential_avg_factor,
                                out(1), out(2), out(3), out(4)));
    }
    mean = out(3), var = out(4);
  } else {
    const size_t bytes = l.channels * sizeof(U);
    for (int i : {1, 2}) {
      for (U* dst : {out(i), out(i + 2)}) {
        MT_RETURN_IF_ERROR(cuda_status(
            kOp, "cudaMemcpyAsync",
            cudaMemcpyAsync(dst, in(i + 2), bytes, cudaMemcpyDeviceToDevice, state.stream)));
      }
    }
  }
  const int64_t total = l.outer * l.channels * l.inner;
  if (total == 0) return absl::OkStatus();
  return launch(kOp, state, grid_for(total, kThreads), kThreads, &batch_norm_apply<T>, x, l, in(1),
                in(2), mean, var, a.epsilon, static_cast<T*>(ctx.outputs[0].data));
}

template <typename T>
absl::Status run_batch_norm_grad(const KernelContext& ctx) {
  using U = Stats<T>;
  constexpr OpId kOp = OpId::kFusedBatchNormGradV3;
  const OpAttrs& a = *ctx.attrs;
  const BatchNormLayout l = internal::batch_norm_layout(*ctx.inputs[1].shape, a.channels_first);
  if (l.channels == 0) return absl::OkStatus();
  const GpuState& state = gpu_state(ctx);
  const T* dy = static_cast<const T*>(ctx.inputs[0].data);
  const T* x = static_cast<const T*>(ctx.inputs[1].data);
  auto in = [&](int i) { return static_cast<const U*>(ctx.inputs[i].data); };
  U* dscale = static_cast<U*>(ctx.outputs[1].data);
  U* doffset = static_cast<U*>(ctx.outputs[2].data);
  MT_RETURN_IF_ERROR(launch(kOp, state, static_cast<unsigned>(l.channels), kThreads,
                            &batch_norm_grad_sums<T>, dy, x, l, in(3), in(4), a.epsilon, dscale,
                            doffset));
  const int64_t total = l.outer * l.channels * l.inner;
  if (total == 0) return absl::OkStatus();
  return launch(kOp, state, grid_for(total, kThreads), kThreads, &batch_norm_grad_apply<T>, dy, x,
                l, in(2), in(3), in(4), static_cast<const U*>(dscale),
                static_cast<const U*>(doffset), a.epsilon, a.is_training,
                static_cast<T*>(ctx.outputs[0].data));
}

}  // namespace

MT_OP_KERNELS(FusedBatchNormV3) {
  return add_gpu_kernels(registry, OpId::kFusedBatchNormV3, FloatTypes{}, [](auto tag) -> KernelFn {
    return &run_batch_norm<typename decltype(tag)::type>;
  });
}
MT_OP_KERNELS(FusedBatchNormGradV3) {
  return add_gpu_kernels(
      registry, OpId::kFusedBatchNormGradV3, FloatTypes{},
      [](auto tag) -> KernelFn { return &run_batch_norm_grad<typename decltype(tag)::type>; });
}

}  // namespace mt::cuda
