// bfloat16 and float16: conversion from float rounds to nearest even, to float is exact.
#include "core/half.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace mt {
namespace {

// Returns the bfloat16 bits nearest to the finite `f` (ties to even), by comparing the two
// candidates in double: the reference for the bit trick in core/half.h.
uint16_t nearest_bfloat16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t low = static_cast<uint16_t>(bits >> 16);
  const uint16_t high = static_cast<uint16_t>(low + 1);
  const double lo = static_cast<float>(bfloat16::from_bits(low));
  const double hi = static_cast<float>(bfloat16::from_bits(high));
  const double x = f;
  if (std::fabs(x - lo) != std::fabs(hi - x))
    return std::fabs(x - lo) < std::fabs(hi - x) ? low : high;
  return (low & 1) == 0 ? low : high;
}

TEST(HalfTest, Float16RoundTripsEveryBitPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float16 h = float16::from_bits(static_cast<uint16_t>(b));
    const float f = static_cast<float>(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(float16(f)))) << b;
    } else {
      EXPECT_EQ(float16(f).bits, b) << b;
    }
  }
}

TEST(HalfTest, Float16RoundsLikeTheCompilersFloat16) {
  // GCC's _Float16 conversion rounds to nearest even in hardware or libgcc: the reference.
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(b));
    if (std::isnan(f)) continue;
    const _Float16 want = static_cast<_Float16>(f);
    ASSERT_EQ(float16(f).bits, std::bit_cast<uint16_t>(want)) << f;
  }
}

TEST(HalfTest, Bfloat16RoundsToNearestEven) {
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(b));
    if (!std::isfinite(f) || std::fabs(f) > 3.38e38f) continue;  // near max rounds to inf
    ASSERT_EQ(bfloat16(f).bits, nearest_bfloat16(f)) << f;
  }
  EXPECT_EQ(bfloat16(std::numeric_limits<float>::max()).bits, 0x7f80);  // rounds up to inf
  const bfloat16 nan(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(static_cast<float>(nan)));
  // A NaN whose payload sits only in the low 16 bits must not become inf.
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(std::bit_cast<float>(0x7f800001u)))));
}

TEST(HalfTest, LayoutMatchesTwoRawBytes) {
  EXPECT_EQ(float16(1.f).bits, 0x3c00);
  EXPECT_EQ(bfloat16(1.f).bits, 0x3f80);
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x7bff)), 65504.f);
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x0001)), 0x1p-24f);
}

}  // namespace
}  // namespace mt
