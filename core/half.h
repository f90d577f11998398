#pragma once
// bfloat16 and float16: the two 2-byte floating-point element types, as raw bits.
//
// Each is a trivially copyable struct holding one uint16_t, laid out exactly as
// Eigen::bfloat16 / Eigen::half and CUDA's __nv_bfloat16 / __half, so a kernel may
// reinterpret_cast a buffer of one to the other. Arithmetic is not defined on them: convert to
// float, compute, convert back (what TensorFlow's kernels do, accumulating in float).
//
//   mt::bfloat16 b(1.1f);            // rounds to nearest, ties to even: 1.1015625
//   float f = static_cast<float>(b);  // exact
//   mt::float16 h = mt::float16::from_bits(0x3c00);  // 1.0
//
// bfloat16 is the top half of a float32 (8 exponent bits, 8 significand bits including the
// implicit one); float16 is IEEE binary16 (5 exponent bits, 11 significand bits, largest
// finite value 65504). Conversion from float rounds to nearest even; values past the largest
// finite value become inf and NaN stays NaN (quiet). Conversion to float is exact.
// This header includes no Eigen or CUDA header; .cu files include it.

#include <bit>
#include <cstdint>
#include <type_traits>

namespace mt {

namespace internal {

// Returns the bfloat16 bits nearest to `f` (ties to even); NaN becomes a quiet NaN.
constexpr uint16_t float_to_bfloat16_bits(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// Returns `value` shifted right by `shift` (1..31), rounded to nearest, ties to even.
constexpr uint32_t shift_right_rounded(uint32_t value, int shift) {
  const uint32_t result = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return result + ((rest > half || (rest == half && (result & 1u))) ? 1u : 0u);
}

// Returns the IEEE binary16 bits nearest to `f` (ties to even); NaN becomes a quiet NaN.
constexpr uint16_t float_to_float16_bits(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (abs >= 0x38800000u) {  // normal in binary16: rebias the exponent, round the fraction
    return static_cast<uint16_t>(sign | shift_right_rounded(abs - (112u << 23), 13));
  }
  const int exponent = static_cast<int>(abs >> 23);
  if (exponent < 102) return static_cast<uint16_t>(sign);  // below 2^-25: rounds to zero
  // Subnormal in binary16: count units of 2^-24; a carry into bit 10 gives the smallest normal.
  const uint32_t significand = (abs & 0x7fffffu) | 0x800000u;
  return static_cast<uint16_t>(sign | shift_right_rounded(significand, 126 - exponent));
}

// Returns the float equal to binary16 `h`.
constexpr float float16_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t fraction = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (fraction << 13));
  if (exponent != 0)
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (fraction << 13));
  if (fraction == 0) return std::bit_cast<float>(sign);
  uint32_t biased = 113;  // subnormal: normalise the fraction
  while ((fraction & 0x400u) == 0) {
    fraction <<= 1;
    --biased;
  }
  return std::bit_cast<float>(sign | (biased << 23) | ((fraction & 0x3ffu) << 13));
}

}  // namespace internal

struct bfloat16 {
  uint16_t bits;

  bfloat16() = default;
  constexpr explicit bfloat16(float f) : bits(internal::float_to_bfloat16_bits(f)) {}
  // Returns the bfloat16 whose bit pattern is `b`.
  static constexpr bfloat16 from_bits(uint16_t b) {
    bfloat16 v;
    v.bits = b;
    return v;
  }
  constexpr explicit operator float() const {
    return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
  }
};

struct float16 {
  uint16_t bits;

  float16() = default;
  constexpr explicit float16(float f) : bits(internal::float_to_float16_bits(f)) {}
  // Returns the float16 whose bit pattern is `b`.
  static constexpr float16 from_bits(uint16_t b) {
    float16 v;
    v.bits = b;
    return v;
  }
  constexpr explicit operator float() const { return internal::float16_bits_to_float(bits); }
};

static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2);
static_assert(sizeof(float16) == 2 && alignof(float16) == 2);
static_assert(std::is_trivially_copyable_v<bfloat16> && std::is_trivially_copyable_v<float16>);

}  // namespace mt
