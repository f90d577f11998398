#pragma once
// Internal to kernels/cuda/ (.cu files only): the row copies of the array ops (Note [Row
// copies] in array_kernels.cu): the unit a layout allows, the launch shape, and the loads
// and stores of kUnroll units per thread.
//
//   const int unit = widest_unit(bits_of_every_address_and_length);
//   return with_unit(unit, [&](auto tag) { using U = decltype(tag); ... });

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/array_layout.h"
#include "kernels/cuda/launch.h"

namespace mt::cuda {

constexpr int kUnroll = 4;          // units in flight per thread (Note [Row copies])
constexpr int kRowBlocksPerSm = 4;  // 1024 threads per SM, 64 KiB in flight

// The unsigned type of N bytes, uint4 for 16.
template <int N>
using Unit = std::conditional_t<N == 16, uint4, internal::Word<N == 16 ? 8 : N>>;

// Returns the widest unit (16, 8, 4, 2 or 1 bytes) dividing every value OR-ed into `bits`.
inline int widest_unit(uint64_t bits) {
  int unit = 16;
  while (bits % unit != 0) unit /= 2;
  return unit;
}

// Returns fn(Unit<unit>{}) for a unit of 16, 8, 4, 2 or 1 bytes.
template <typename Fn>
absl::Status with_unit(int unit, Fn fn) {
  if (unit == 16) return fn(Unit<16>{});
  if (unit == 8) return fn(Unit<8>{});
  if (unit == 4) return fn(Unit<4>{});
  return unit == 2 ? fn(Unit<2>{}) : fn(Unit<1>{});
}

struct RowGrid {
  dim3 grid, block;
};

// Returns the launch of `rows` rows of `width` units (both >= 1) in `planes` planes
// (blockIdx.z): blockDim.x threads for kUnroll units each along a row, the rest of the
// block on further rows, and about kRowBlocksPerSm blocks per SM.
inline RowGrid row_grid(const GpuState& state, int64_t width, int64_t rows, int64_t planes) {
  int tx = 1;
  while (tx < kThreads && int64_t{tx} * kUnroll < width) tx *= 2;
  const int ty = kThreads / tx;
  const int64_t gx = (width + int64_t{tx} * kUnroll - 1) / (int64_t{tx} * kUnroll);
  const int64_t target = int64_t{sm_count(state)} * kRowBlocksPerSm;
  const int64_t gy = std::clamp<int64_t>((target + gx * planes - 1) / (gx * planes), 1,
                                         std::min<int64_t>((rows + ty - 1) / ty, 65535));
  return {dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(planes)),
          dim3(tx, ty)};
}

// Loads the units c0 + k * step (k < kUnroll) of `src` that are below `width`.
template <typename U>
__device__ __forceinline__ void load_units(const U* src, int64_t c0, int step, int64_t width,
                                           U (&v)[kUnroll]) {
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    if (c0 + int64_t{k} * step < width) v[k] = src[c0 + int64_t{k} * step];
  }
}

// Stores what load_units loaded at the same units of `dst`.
template <typename U>
__device__ __forceinline__ void store_units(U* dst, int64_t c0, int step, int64_t width,
                                            const U (&v)[kUnroll]) {
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    if (c0 + int64_t{k} * step < width) dst[c0 + int64_t{k} * step] = v[k];
  }
}

}  // namespace mt::cuda
