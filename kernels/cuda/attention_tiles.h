#pragma once
// Internal to kernels/cuda/ (.cu files only): what the dot-product attention kernels share
// (attention_kernels.cu, attention_grad_kernels.cu).
//
// Note [Attention on the GPU]: a block of kBlockThreads threads holds tiles of kBlock rows
// (queries or keys) of one head in shared memory, widened to the arithmetic's type (float32;
// float64 for float64), each row padded with zeros to kHead (32, 64, 128 or 256, the
// smallest that holds both depths). Its threads form 16 groups of 16 lanes: group y owns
// tile rows y * kRows + r (r < kRows) and lane x the columns x + 16 c, so a score tile
// (kBlock x kBlock) is kRows x kRows scores a thread, and a row's maximum and sum are
// shuffles among 16 lanes. The forward pass (FlashAttention's): a block per tile of query
// rows visits the key tiles they see, keeping each row's running maximum and sum of
// exponentials in registers with its output row; the heaviest tiles (the last, with
// causal) go first. Query and key tiles are the same size and aligned, so a row sees the
// first key of every key tile it visits. The backward pass (FlashAttention-2's, recomputing P from
// lse): dk and dv take a block per key tile, over the query heads of its kv head and the query
// tiles that see it; dq a block per query tile, over the key tiles it sees. No two blocks write one
// element, so there are no atomics and a result is the same from run to run. kRows is 4 (tiles of
// 64) unless the backward pass's four tiles would pass kSharedBudget, then 2 or
// 1. Scores use exp2 with log2(e) folded into the scale. The arithmetic is scalar FMAs
// (no tensor cores yet).
//
//   using G = Tile<float, 64>;  // tiles of 64 rows of 64, 4 x 4 scores a thread

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/fault_injection.h"
#include "kernels/attention.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/half_math.h"

namespace mt::cuda::attention {

using internal::AttentionLayout;

inline constexpr int kBlockThreads = 256;
inline constexpr int kLanes = 16;  // lanes of a row group; kBlockThreads / kLanes groups
// The most shared memory a backward block takes (an A100 offers 163 KiB, an H100 227 KiB).
inline constexpr size_t kSharedBudget = 160 * 1024;
inline constexpr double kLog2e = 1.4426950408889634;
inline constexpr double kLn2 = 0.6931471805599453;

// Returns the shared memory of a block of `rows` rows a thread (tiles of 16 * rows) holding
// `tiles` tiles of kHead, the P tile and `vectors` row vectors, of C.
template <typename C, int kHead>
constexpr size_t shared_bytes(int rows, int tiles, int vectors) {
  const size_t block = kLanes * rows, vec = 16 / sizeof(C);
  return sizeof(C) * (tiles * block * (kHead + vec) + block * (block + vec) + vectors * block);
}

// Returns 4, 2 or 1: the most rows a thread whose backward pass fits kSharedBudget.
template <typename C, int kHead>
constexpr int rows_per_thread() {
  for (int rows = 4; rows > 1; rows /= 2) {
    if (shared_bytes<C, kHead>(rows, 4, 2) <= kSharedBudget) return rows;
  }
  return 1;
}

// The tile geometry of arithmetic type C and padded depth kHead (Note [Attention on the GPU]).
template <typename C, int kDepth>
struct Tile {
  static constexpr int kHead = kDepth;
  static_assert(kHead % kLanes == 0);
  static constexpr int kVec = 16 / sizeof(C);  // elements of a 16-byte load
  static constexpr int kStride = kHead + kVec;
  static constexpr int kRows = rows_per_thread<C, kHead>();
  static constexpr int kBlock = kLanes * kRows;
  static constexpr int kPStride = kBlock + kVec;
  static constexpr int kCols = kHead / kLanes;
  static constexpr int kTile = kBlock * kStride;  // elements of a q, k, v or do tile
  static constexpr int kPTile = kBlock * kPStride;
};

template <typename C>
struct alignas(16) Vec {
  C v[16 / sizeof(C)];
};

// The arithmetic's type of T: float32, float64 for float64.
template <typename T>
using Acc = Compute<T>;

// The scores of one thread (kRows x kRows) and its rows of a depth-wide tile (kRows x kCols).
template <typename G, typename C>
using Scores = C[G::kRows][G::kRows];
template <typename G, typename C>
using Rows = C[G::kRows][G::kCols];

__device__ __forceinline__ int row_group() { return static_cast<int>(threadIdx.x) / kLanes; }
__device__ __forceinline__ int lane() { return static_cast<int>(threadIdx.x) % kLanes; }

// Loads `valid` rows (at most kBlock) of `width` elements, row r at src + r * stride, into
// `tile` widened; the rest of the tile is zeros.
template <typename G, typename T, typename C>
__device__ void load_tile(C* tile, const T* src, int64_t stride, int64_t valid, int64_t width) {
  for (int e = threadIdx.x; e < G::kBlock * G::kHead; e += kBlockThreads) {
    const int r = e / G::kHead, d = e % G::kHead;
    tile[r * G::kStride + d] = r < valid && d < width ? to_compute(src[r * stride + d]) : C(0);
  }
}

// s[r][c] = a's row (group row r) . b's row (lane column c), over kHead.
template <typename G, typename C>
__device__ __forceinline__ void tile_dot(const C* a, const C* b, Scores<G, C>& s) {
  const C* arow = a + row_group() * G::kRows * G::kStride;
  const C* brow = b + lane() * G::kStride;
#pragma unroll
  for (int r = 0; r < G::kRows; ++r) {
#pragma unroll
    for (int c = 0; c < G::kRows; ++c) s[r][c] = 0;
  }
#pragma unroll 2
  for (int d = 0; d < G::kHead; d += G::kVec) {
    Vec<C> av[G::kRows], bv[G::kRows];
#pragma unroll
    for (int r = 0; r < G::kRows; ++r) {
      av[r] = *reinterpret_cast<const Vec<C>*>(arow + r * G::kStride + d);
    }
#pragma unroll
    for (int c = 0; c < G::kRows; ++c) {
      bv[c] = *reinterpret_cast<const Vec<C>*>(brow + c * kLanes * G::kStride + d);
    }
#pragma unroll
    for (int r = 0; r < G::kRows; ++r) {
#pragma unroll
      for (int c = 0; c < G::kRows; ++c) {
#pragma unroll
        for (int e = 0; e < G::kVec; ++e) s[r][c] = fma(av[r].v[e], bv[c].v[e], s[r][c]);
      }
    }
  }
}

// out[r][c] += sum over k < kBlock of p[group row r][k] * m[k][lane column c]: p a score tile
// (kPStride apart), m a depth-wide tile.
template <typename G, typename C>
__device__ __forceinline__ void tile_accumulate(const C* p, const C* m, Rows<G, C>& out) {
  const C* prow = p + row_group() * G::kRows * G::kPStride;
  const C* mcol = m + lane();
#pragma unroll 4
  for (int k = 0; k < G::kBlock; ++k) {
    C pv[G::kRows];
#pragma unroll
    for (int r = 0; r < G::kRows; ++r) pv[r] = prow[r * G::kPStride + k];
#pragma unroll
    for (int c = 0; c < G::kCols; ++c) {
      const C mv = mcol[k * G::kStride + c * kLanes];
#pragma unroll
      for (int r = 0; r < G::kRows; ++r) out[r][c] = fma(pv[r], mv, out[r][c]);
    }
  }
}

// Writes this thread's scores s into the score tile p.
template <typename G, typename C>
__device__ __forceinline__ void store_scores(const Scores<G, C>& s, C* p) {
  C* prow = p + row_group() * G::kRows * G::kPStride + lane();
#pragma unroll
  for (int r = 0; r < G::kRows; ++r) {
#pragma unroll
    for (int c = 0; c < G::kRows; ++c) prow[r * G::kPStride + c * kLanes] = s[r][c];
  }
}

// Returns the maximum and the sum of v over the 16 lanes of a row group.
template <typename C>
__device__ __forceinline__ C lanes_max(C v) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset >>= 1) {
    v = fmax(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}
template <typename C>
__device__ __forceinline__ C lanes_sum(C v) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset >>= 1) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

// Launches kKernel<<<grid, kBlockThreads, bytes, state.stream>>>(args...) with `bytes` of
// dynamic shared memory and checks the launch, as launch() in launch.h does. Past 48 KiB a
// kernel needs its limit raised, once per device: the first launch on each device does it
// (so a graph capture, which follows an eager run, makes no such call).
template <auto kKernel, typename... Args>
absl::Status launch_shared(OpId op, const GpuState& state, unsigned grid, size_t bytes,
                           Args&&... args) {
  if (internal::should_fail(internal::FaultSite::kKernelLaunch)) {  // tests only
    return cuda_status(op, "cudaLaunchKernel", cudaErrorLaunchOutOfResources);
  }
  static std::atomic<uint64_t> raised{0};  // bit d: done on device d
  const uint64_t bit = state.physical_device < 64 ? uint64_t{1} << state.physical_device : 0;
  if ((raised.load(std::memory_order_acquire) & bit) == 0 || bit == 0) {
    MT_RETURN_IF_ERROR(
        cuda_status(op, "cudaFuncSetAttribute",
                    cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes))));
    raised.fetch_or(bit, std::memory_order_release);
  }
  kKernel<<<grid, kBlockThreads, bytes, state.stream>>>(static_cast<Args&&>(args)...);
  return check_launch(op);
}

// Returns the blocks of a grid over `work` items (each block loops over the items past it).
inline unsigned grid_over(int64_t work) {
  return static_cast<unsigned>(work < (int64_t{1} << 20) ? work : int64_t{1} << 20);
}

// Calls fn(std::integral_constant<int, kHead>) for the smallest kHead of 32, 64, 128 and 256
// that holds `depth`; Unimplemented past 256.
template <typename Fn>
absl::Status with_head(OpId op, int64_t depth, Fn fn) {
  if (depth <= 32) return fn(std::integral_constant<int, 32>{});
  if (depth <= 64) return fn(std::integral_constant<int, 64>{});
  if (depth <= 128) return fn(std::integral_constant<int, 128>{});
  if (depth <= 256) return fn(std::integral_constant<int, 256>{});
  return absl::UnimplementedError(absl::StrCat("[", op_name(op),
                                               "] the GPU kernels take depths up to 256, got ",
                                               depth, "; run the op on the CPU"));
}

}  // namespace mt::cuda::attention
