#pragma once
// Internal to kernels/cuda/ (.cu files only): reduce_all_kernel, the one-pass Sum, Mean or
// Max of a whole contiguous input to a single output.
//
// Note [One-pass full reduction]: reducing everything to one value in two passes (partials,
// then a second kernel over them: Note [GPU reduction grid]) pays a second launch and the
// drain between the kernels, about a tenth of the time of a 64 MiB bfloat16 Sum. When the
// input is one contiguous, 16-byte aligned run, a single kernel does it instead:
// - a grid of kBlocksPerSm blocks per multiprocessor strides over the input in Vec<T>s,
//   kUnroll loads in flight per thread (the n % kVec<T> elements left over go to the first
//   threads of block 0), accumulating in Compute<T>;
// - each block combines its threads with warp shuffles, writes its partial to
//   GpuState::scratch and, after a __threadfence, takes a ticket from
//   GpuState::reduce_tickets;
// - the block holding the last ticket combines the partials in block order, writes the
//   output (Mean divides there) and puts the counter back to zero for the next kernel on
//   the stream.
// The grid depends only on n and the GPU's multiprocessor count, so the order of additions,
// and with it a float result, is the same on every run on the same GPU model.
#include <cstdint>

#include "core/status.h"
#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/reducers.h"
#include "kernels/cuda/reduction_layout.h"

namespace mt::cuda {

template <typename T>
struct ReduceAllArgs {
  using Acc = Compute<T>;
  const T* in = nullptr;
  T* out = nullptr;
  int64_t n = 0;                // input elements (> 0)
  Acc* partials = nullptr;      // one per block, in GpuState::scratch
  unsigned* tickets = nullptr;  // GpuState::reduce_tickets
  Acc identity = Acc();
  int64_t mean_count = 0;  // Mean: the output is divided by it; else 0
};

// Blocks per multiprocessor of reduce_all_kernel's grid (2048 threads: a full H100 SM).
inline constexpr int64_t kReduceAllBlocksPerSm = 8;
// Vec<T> loads each thread keeps in flight.
inline constexpr int kReduceAllUnroll = 4;

// Returns `v` combined over the block's threads, valid in thread 0; `warp_values` is
// shared memory for one value per warp, free again when this returns.
template <typename R, typename Acc>
__device__ __forceinline__ Acc block_combine(Acc v, Acc identity, Acc* warp_values) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    v = R::combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  }
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / 32) ? warp_values[lane] : identity;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      v = R::combine(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
  }
  __syncthreads();
  return v;
}

template <typename R, typename T>
__global__ void __launch_bounds__(kThreads) reduce_all_kernel(ReduceAllArgs<T> a) {
  using Acc = Compute<T>;
  constexpr int kUnroll = kReduceAllUnroll;
  __shared__ Acc warp_values[kThreads / 32];
  __shared__ bool last;
  const Vec<T>* v = reinterpret_cast<const Vec<T>*>(a.in);
  const int64_t nv = a.n / kVec<T>;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t first = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  Acc acc[kUnroll];
#pragma unroll
  for (int j = 0; j < kUnroll; ++j) acc[j] = a.identity;
  int64_t i = first;
#pragma unroll 1
  for (; i + (kUnroll - 1) * stride < nv; i += kUnroll * stride) {
    Vec<T> x[kUnroll];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) x[j] = v[i + j * stride];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) {
#pragma unroll
      for (int e = 0; e < kVec<T>; ++e) acc[j] = R::combine(acc[j], to_compute(x[j].v[e]));
    }
  }
#pragma unroll 1
  for (; i < nv; i += stride) {
    const Vec<T> x = v[i];
#pragma unroll
    for (int e = 0; e < kVec<T>; ++e) acc[0] = R::combine(acc[0], to_compute(x.v[e]));
  }
  if (nv * kVec<T> + first < a.n)
    acc[0] = R::combine(acc[0], to_compute(a.in[nv * kVec<T> + first]));
#pragma unroll
  for (int width = kUnroll / 2; width > 0; width /= 2) {
#pragma unroll
    for (int j = 0; j < width; ++j) acc[j] = R::combine(acc[j], acc[j + width]);
  }
  const Acc block_value = block_combine<R>(acc[0], a.identity, warp_values);
  if (threadIdx.x == 0) {
    a.partials[blockIdx.x] = block_value;
    __threadfence();  // the partial is visible before the ticket is taken
    last = atomicAdd(a.tickets, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();  // acquire: the other blocks' partials are read after their tickets
  Acc p = a.identity;
  for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) {
    p = R::combine(p, __ldcg(&a.partials[k]));  // from L2: other blocks wrote them
  }
  p = block_combine<R>(p, a.identity, warp_values);
  if (threadIdx.x == 0) {
    a.out[0] = from_compute<T>(finish(p, a.mean_count));
    *a.tickets = 0;  // ready for the next kernel on the stream
  }
}

// Returns whether reduce_all_kernel can reduce `layout` from `in` on `state`: everything to
// one output from one contiguous, 16-byte aligned run, with tickets and scratch for a
// partial per block.
template <typename T>
bool can_reduce_all(const GpuState& state, const ReduceLayout& layout, const T* in) {
  return layout.num_out == 1 && layout.reduced.rank == 1 && layout.reduced.stride[0] == 1 &&
         state.reduce_tickets != nullptr && state.scratch_mu != nullptr && is_vec_aligned(in) &&
         state.scratch_bytes / sizeof(Compute<T>) >=
             static_cast<size_t>(sm_count(state) * kReduceAllBlocksPerSm);
}

// Enqueues reduce_all_kernel over the n > 0 elements at `in` into out[0].
template <OpId kOp, typename R, typename T>
absl::Status launch_reduce_all(const GpuState& state, const T* in, T* out, int64_t n,
                               Compute<T> identity, int64_t mean_count) {
  ReduceAllArgs<T> a;
  a.in = in;
  a.out = out;
  a.n = n;
  a.partials = static_cast<Compute<T>*>(state.scratch);
  a.tickets = state.reduce_tickets;
  a.identity = identity;
  a.mean_count = mean_count;
  const int64_t vectors = (n + kVec<T> - 1) / kVec<T>;
  const int64_t blocks = std::min<int64_t>(sm_count(state) * kReduceAllBlocksPerSm,
                                           (vectors + kThreads - 1) / kThreads);
  return launch(kOp, state, dim3(static_cast<unsigned>(blocks)), dim3(kThreads),
                &reduce_all_kernel<R, T>, a);
}

}  // namespace mt::cuda
