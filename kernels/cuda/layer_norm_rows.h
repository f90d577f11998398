#pragma once
// Internal to kernels/cuda/ (.cu files only): what the layer normalisation kernels share
// (layer_norm_kernels.cu, layer_norm_grad_kernels.cu).
//
// Note [Layer norm on the GPU]: a row of up to kMaxThreadElements * 32 elements takes one
// warp and is read once into registers (128-bit loads where rows are 16-byte aligned); its
// sums are warp shuffles, so LayerNorm reads x once and writes y once, and LayerNormGrad
// reads x and dy once and writes dx once. LayerNormGrad's dgamma and dbeta take two stages:
// each thread adds dy * xhat and dy of its columns over the rows its warp visits, the warps
// of a block add theirs in shared memory in warp order and write one partial row per block
// to GpuState::scratch; a second kernel adds the partial rows in order (in double). Longer
// rows take a block each and read the row again from the cache (the statistics, then y or
// dx), and their dgamma and dbeta come from a kernel over columns. The sums' order depends
// on the grid alone, so a result is the same from run to run on one GPU.
//
//   const int iters = warp_iters<V>(l.cols);  // 0: a block per row
//   with_iters<V>(iters, [&](auto k) { return launch(..., &kernel<T, V, decltype(k)::value>); });

#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "core/check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/half_math.h"
#include "kernels/layer_norm.h"

namespace mt::cuda::layer_norm {

using internal::LayerNormLayout;

// The dtype of gamma, beta and the statistics, which is also the arithmetic's.
template <typename T>
using Stats = std::conditional_t<std::is_same_v<T, double>, double, float>;

// The most elements one thread holds in registers (Note [Layer norm on the GPU]).
inline constexpr int kMaxThreadElements = 32;
// Rows (warps) per block of the warp kernels, forward and backward.
inline constexpr int kForwardRows = 4;
inline constexpr int kBackwardRows = 8;
// Threads per block of the long-row kernels.
inline constexpr int kLongThreads = 512;

template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

template <typename C>
__device__ __forceinline__ C warp_sum(C v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Returns the sum of v over the kLongThreads threads of a block (every thread gets it).
template <typename C>
__device__ __forceinline__ C block_sum(C v, C* shared) {
  v = warp_sum(v);
  __syncthreads();  // the previous sum has read `shared`
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  C total = 0;
#pragma unroll
  for (int w = 0; w < kLongThreads / 32; ++w) total += shared[w];
  return total;
}

// Element j of pack i of a warp's row: column (i * 32 + lane) * V + j.
__device__ __forceinline__ int64_t pack_col(int i, int v) {
  return (int64_t{i} * 32 + threadIdx.x) * v;
}

// Returns the kIters of the warp kernels for rows of `cols` elements in packs of V, or 0
// when the rows are too long for one warp's registers. 3 and 6 fit GPT-2's 768 exactly (24
// elements a thread in float32 and the 2-byte floats), which leaves registers for two
// blocks of the gradient's kernel on each multiprocessor.
template <int V>
int warp_iters(int64_t cols) {
  const int64_t packs = (cols + V - 1) / V;
  for (int k : {1, 2, 3, 4, 6, 8}) {
    if (k * V <= kMaxThreadElements && packs <= 32 * k) return k;
  }
  return 0;
}

// Calls launch(std::integral_constant<int, kIters>) for the kIters of warp_iters<V>.
template <int V, typename Launch>
absl::Status with_iters(int iters, Launch launch) {
  switch (iters) {
    case 1:
      return launch(std::integral_constant<int, 1>{});
    case 2:
      return launch(std::integral_constant<int, 2>{});
    case 3:
      if constexpr (3 * V <= kMaxThreadElements) return launch(std::integral_constant<int, 3>{});
      break;
    case 4:
      if constexpr (4 * V <= kMaxThreadElements) return launch(std::integral_constant<int, 4>{});
      break;
    case 6:
      if constexpr (6 * V <= kMaxThreadElements) return launch(std::integral_constant<int, 6>{});
      break;
    case 8:
      if constexpr (8 * V <= kMaxThreadElements) return launch(std::integral_constant<int, 8>{});
      break;
  }
  MT_CHECK(false);
  return absl::OkStatus();
}

// Returns whether every pointer is 16-byte aligned and rows are whole packs of kVec.
template <typename T>
bool vector_rows(const LayerNormLayout& l, std::initializer_list<const void*> pointers) {
  for (const void* p : pointers) {
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  }
  return l.cols % (16 / sizeof(T)) == 0;
}

}  // namespace mt::cuda::layer_norm
