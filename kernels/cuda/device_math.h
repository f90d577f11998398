#pragma once
// Internal to kernels/cuda/ (.cu files only): the arithmetic the GPU kernels share.
//
// - Integer add, sub and mul wrap around in the unsigned type, as the CPU kernels do
//   (Note [Integer overflow] in kernels/cpu/cpu_kernels.h), so both devices agree bit for
//   bit on every input. bfloat16 and float16 compute in float32 (Note [Half arithmetic on
//   the GPU] in half_math.h).
// - Vec<T> is 16 bytes of T, for 128-bit loads and stores (LDG.E.128 / STG.E.128).
// - IndexDivider splits a flat index into coordinates without a 64-bit division per
//   element: below 2^31 it multiplies and shifts (Granlund and Montgomery, as PyTorch's
//   IntDivider does).

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/half_math.h"

namespace mt::cuda {

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

template <typename T>
__device__ __forceinline__ T add_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return T(Unsigned<T>(a) + Unsigned<T>(b));
  } else if constexpr (kIsHalf<T>) {
    return from_compute<T>(to_compute(a) + to_compute(b));
  } else {
    return a + b;
  }
}

template <typename T>
__device__ __forceinline__ T sub_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return T(Unsigned<T>(a) - Unsigned<T>(b));
  } else if constexpr (kIsHalf<T>) {
    return from_compute<T>(to_compute(a) - to_compute(b));
  } else {
    return a - b;
  }
}

template <typename T>
__device__ __forceinline__ T mul_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return T(Unsigned<T>(a) * Unsigned<T>(b));
  } else if constexpr (kIsHalf<T>) {
    return from_compute<T>(to_compute(a) * to_compute(b));
  } else {
    return a * b;
  }
}

template <typename T>  // floating types only
__device__ __forceinline__ T div_op(T a, T b) {
  if constexpr (kIsHalf<T>) {
    return from_compute<T>(to_compute(a) / to_compute(b));
  } else {
    return a / b;
  }
}

// Elements of T in 16 bytes.
template <typename T>
inline constexpr int kVec = static_cast<int>(16 / sizeof(T));

template <typename T>
struct alignas(16) Vec {
  T v[kVec<T>];
};

// Returns whether `p` may be read as Vec<T> (16-byte aligned).
inline bool is_vec_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Divides by a fixed divisor d >= 1; make it on the host, use it on the device.
struct IndexDivider {
  uint64_t d = 1;
  uint32_t magic = 1;
  uint32_t shift = 0;
  bool fast = false;  // every numerator and d are below 2^31

  // Returns a divider by `divisor` for numerators below `limit`.
  static IndexDivider make(int64_t divisor, int64_t limit) {
    IndexDivider div;
    div.d = static_cast<uint64_t>(divisor);
    constexpr int64_t kFastLimit = int64_t{1} << 31;
    div.fast = divisor <= kFastLimit && limit <= kFastLimit;
    if (!div.fast) return div;
    while ((uint64_t{1} << div.shift) < div.d) ++div.shift;
    div.magic = static_cast<uint32_t>(
        ((uint64_t{1} << 32) * ((uint64_t{1} << div.shift) - div.d)) / div.d + 1);
    return div;
  }

  __device__ __forceinline__ uint64_t div(uint64_t x) const {
    if (fast) {
      const uint32_t x32 = static_cast<uint32_t>(x);
      return (__umulhi(x32, magic) + x32) >> shift;
    }
    return x / d;
  }
};

}  // namespace mt::cuda
