#pragma once
// Internal to kernels/cuda/ (.cu files only): mt::bfloat16 and mt::float16 (core/half.h) in
// device code, where they are raw bits that the kernels widen to float32 and round back.
//
// Note [Half arithmetic on the GPU]: every op on a 2-byte dtype runs in float32: a load
// widens (exact), the op computes in float, a store rounds to nearest even. For +, -, * and
// / the float32 result rounded again to bfloat16 or float16 is the correctly rounded one
// (float32 keeps more than 2p + 2 significand bits for both p = 8 and p = 11, so the double
// rounding is harmless), hence these match the CPU kernels bit for bit; Neg and Abs flip or
// clear the sign bit. Reductions, AddN and MatMul accumulate in float32 and round once, as
// TensorFlow's GPU kernels do. Rounding keeps NaN's sign and payload as core/half.h does.
//
//   const float x = to_compute(in[i]);           // bfloat16 -> float, exact
//   out[i] = from_compute<bfloat16>(x * 2.f);    // rounds to nearest even

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "core/half.h"

namespace mt::cuda {

// Whether T is one of the 2-byte floating-point types.
template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>;

// Whether T is a floating-point type, 2-byte ones included.
template <typename T>
inline constexpr bool kIsFloating = std::is_floating_point_v<T> || kIsHalf<T>;

// The type arithmetic on T runs in: float for the 2-byte types, T itself otherwise.
template <typename T>
using Compute = std::conditional_t<kIsHalf<T>, float, T>;

// Returns x widened to Compute<T> (exact).
template <typename T>
__host__ __device__ __forceinline__ Compute<T> to_compute(T x) {
  if constexpr (std::is_same_v<T, bfloat16>) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(uint32_t{x.bits} << 16);
#else
    return static_cast<float>(x);
#endif
  } else if constexpr (std::is_same_v<T, float16>) {
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(x.bits));
#else
    return static_cast<float>(x);
#endif
  } else {
    return x;
  }
}

// Returns the bfloat16 bits nearest to `f` (ties to even); NaN keeps its sign and payload's
// top bits, made quiet (as internal::float_to_bfloat16_bits).
__device__ __forceinline__ uint16_t bfloat16_bits(float f) {
  uint32_t bits = __float_as_uint(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// Returns the float16 bits nearest to `f` (ties to even, the hardware conversion); NaN keeps
// its sign and payload's top bits, made quiet (as internal::float_to_float16_bits).
__device__ __forceinline__ uint16_t float16_bits(float f) {
  const uint32_t bits = __float_as_uint(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7e00u | ((bits >> 13) & 0x3ffu));
  }
  return __half_as_ushort(__float2half_rn(f));
}

// Returns v rounded to T (nearest even for the 2-byte types; a plain conversion otherwise).
template <typename T>
__device__ __forceinline__ T from_compute(Compute<T> v) {
  if constexpr (kIsHalf<T>) {
    T r;
    r.bits = std::is_same_v<T, bfloat16> ? bfloat16_bits(v) : float16_bits(v);
    return r;
  } else {
    return v;
  }
}

// Returns a 2-byte value with bits `b`.
template <typename T>
__device__ __forceinline__ T half_from_bits(uint16_t b) {
  T r;
  r.bits = b;
  return r;
}

}  // namespace mt::cuda
