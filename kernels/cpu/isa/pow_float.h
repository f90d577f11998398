#pragma once
// float32 pow for one ISA level, many lanes at a time (BinaryFn<OpId::kPow>::loop). std::pow
// is one call per element; this is the rate of the other costly element-wise ops.
//
// Note [Vectorised pow]: for finite x != 0 and finite y, |x|^y = 2^(y log2|x|), computed in
// double: log2|x| = e + log2(m) with m in [sqrt(1/2), sqrt(2)) and a degree-14 polynomial
// (relative error 7e-13), then 2^t = 2^k 2^r with r in [-1/2, 1/2] and a degree-9 polynomial
// (2e-14). The double result is rounded once to float: within 1 ulp of the correctly
// rounded value (checked over 16M inputs per range in pow_float_test.cc; about one in 10^4
// differs by that ulp). A negative x keeps or flips the sign for an integer y and gives NaN
// otherwise, lane by lane. Zero, infinite and NaN operands take std::pow afterwards, block
// by block, so IEEE's special cases (pow(x, 0) = 1 for any x, pow(1, NaN) = 1, ...) are
// exactly the C library's. The lanes are GCC vector types sized to the level's registers;
// the double half of the work runs on half the float lanes at a time.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "kernels/cpu/isa/isa_eigen.h"

// The vector types' ABI differs between levels; they never cross a call (always_inline).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace mt::cpu::MT_ISA_NS::pow_float {

#if defined(__AVX512F__)
inline constexpr int kBytes = 64;
#elif defined(__AVX__)
inline constexpr int kBytes = 32;
#else
inline constexpr int kBytes = 16;
#endif
inline constexpr int kLanes = kBytes / 4;

using Floats = float __attribute__((vector_size(kBytes)));
using Ints = int32_t __attribute__((vector_size(kBytes)));
using HalfFloats = float __attribute__((vector_size(kBytes / 2)));
using HalfInts = int32_t __attribute__((vector_size(kBytes / 2)));
using Doubles = double __attribute__((vector_size(kBytes)));
using Longs = int64_t __attribute__((vector_size(kBytes)));

template <int kOffset, typename V, int... kIs>
[[gnu::always_inline]] inline auto lanes(V v, std::integer_sequence<int, kIs...>) {
  return __builtin_shufflevector(v, v, (kIs + kOffset)...);
}
template <typename V>
[[gnu::always_inline]] inline auto low_half(V v) {
  return lanes<0>(v, std::make_integer_sequence<int, kLanes / 2>{});
}
template <typename V>
[[gnu::always_inline]] inline auto high_half(V v) {
  return lanes<kLanes / 2>(v, std::make_integer_sequence<int, kLanes / 2>{});
}
template <int... kIs>
[[gnu::always_inline]] inline Floats join(HalfFloats low, HalfFloats high,
                                          std::integer_sequence<int, kIs...>) {
  return __builtin_shufflevector(low, high, kIs...);
}

// log2(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1], a Chebyshev fit of log2(1 + f) / f.
[[gnu::always_inline]] inline Doubles log2_1p(Doubles f) {
  const Doubles f2 = f * f, f4 = f2 * f2, f8 = f4 * f4;
  const Doubles p01 = 0x1.71547652b8881p+0 + f * -0x1.7154765288ff6p-1;
  const Doubles p23 = 0x1.ec709dbe31aa5p-2 + f * -0x1.715476be12574p-2;
  const Doubles p45 = 0x1.2776c8be2f0d5p-2 + f * -0x1.ec705b1709463p-3;
  const Doubles p67 = 0x1.a61572e69a6d9p-3 + f * -0x1.715c98acf6f05p-3;
  const Doubles p89 = 0x1.4889df540eb2bp-3 + f * -0x1.2717358227b8dp-3;
  const Doubles p1011 = 0x1.08902f8e08dc4p-3 + f * -0x1.eb801d0697b72p-4;
  const Doubles p1213 = 0x1.028afd197a9a9p-3 + f * -0x1.f463f36ac78bfp-4;
  const Doubles q0 = p01 + f2 * p23, q1 = p45 + f2 * p67, q2 = p89 + f2 * p1011;
  const Doubles q3 = p1213 + f2 * 0x1.f8fbc19b02187p-5;
  return f * ((q0 + f4 * q1) + f8 * (q2 + f4 * q3));
}

// 2^r for r in [-1/2, 1/2], a Chebyshev fit.
[[gnu::always_inline]] inline Doubles exp2_small(Doubles r) {
  const Doubles r2 = r * r, r4 = r2 * r2;
  const Doubles p01 = 0x1.000000000003dp+0 + r * 0x1.62e42fefa39f7p-1;
  const Doubles p23 = 0x1.ebfbdff8149f2p-3 + r * 0x1.c6b08d7044119p-5;
  const Doubles p45 = 0x1.3b2ab72b175eep-7 + r * 0x1.5d87fe908f88ap-10;
  const Doubles p67 = 0x1.43088e257f341p-13 + r * 0x1.ffcb76789860fp-17;
  const Doubles p89 = 0x1.63ef969a64d3cp-20 + r * 0x1.b6571de2f2351p-24;
  return (p01 + r2 * p23) + r4 * ((p45 + r2 * p67) + r4 * p89);
}

// (2^e m)^y for half the lanes.
[[gnu::always_inline]] inline HalfFloats pow_half(HalfFloats m, HalfInts e, HalfFloats y) {
  const Doubles log2x =
      __builtin_convertvector(e, Doubles) + log2_1p(__builtin_convertvector(m, Doubles) - 1.0);
  Doubles t = __builtin_convertvector(y, Doubles) * log2x;
  const Doubles lowest = Doubles{} - 1000.0, highest = Doubles{} + 1000.0;  // 0 and inf as float
  t = t < lowest ? lowest : t;
  t = t > highest ? highest : t;
  const Doubles shifted = t + 0x1.8p52;  // round(t) in the low bits of the mantissa
  const Doubles k = shifted - 0x1.8p52;
  const Doubles scale = reinterpret_cast<Doubles>((reinterpret_cast<Longs>(shifted) + 1023) << 52);
  return __builtin_convertvector(scale * exp2_small(t - k), HalfFloats);
}

// x^y for lanes with finite x != 0 and finite y; `special` gains the other lanes.
[[gnu::always_inline]] inline Floats pow_lanes(Floats x, Floats y, Ints& special) {
  const Ints bx = reinterpret_cast<Ints>(x), by = reinterpret_cast<Ints>(y);
  const Ints abs_bits = bx & 0x7fffffff;
  special |=
      (abs_bits == 0) | ((bx & 0x7f800000) == 0x7f800000) | ((by & 0x7f800000) == 0x7f800000);
  const Ints subnormal = abs_bits < 0x00800000;  // scaled by 2^23 first
  const Floats ax = reinterpret_cast<Floats>(abs_bits);
  const Ints ix = reinterpret_cast<Ints>(subnormal ? ax * 0x1p23f : ax);
  const Ints e = (ix - 0x3f3504f3) >> 23;  // 0x3f3504f3: sqrt(1/2)
  const Floats m = reinterpret_cast<Floats>(ix - (e << 23));
  const Ints exponent = e - (subnormal & 23);
  const Floats magnitude = join(pow_half(low_half(m), low_half(exponent), low_half(y)),
                                pow_half(high_half(m), high_half(exponent), high_half(y)),
                                std::make_integer_sequence<int, kLanes>{});
  // A negative base: an integer power keeps the sign or flips it, any other gives NaN.
  const Ints big = (by & 0x7fffffff) >= 0x4b800000;  // |y| >= 2^24: an even integer
  const Ints y_int = __builtin_convertvector(big ? Floats{} : y, Ints);
  const Ints integer = big | (__builtin_convertvector(y_int, Floats) == y);
  const Floats nan = Floats{} + std::numeric_limits<float>::quiet_NaN();
  const Floats negative =
      integer ? reinterpret_cast<Floats>(reinterpret_cast<Ints>(magnitude) ^ (y_int << 31)) : nan;
  return bx < 0 ? negative : magnitude;
}

// out[i] = a[i * sa] ** b[i * sb]; sa and sb are 0 (a broadcast scalar) or 1.
inline void pow_loop(const float* a, int64_t sa, const float* b, int64_t sb, float* out,
                     int64_t n) {
  constexpr int64_t kBlock = 1024;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t len = n - start < kBlock ? n - start : kBlock;
    const float* pa = a + sa * start;
    const float* pb = b + sb * start;
    float* po = out + start;
    Ints special{};
    int64_t i = 0;
    for (; i + kLanes <= len; i += kLanes) {
      Floats x = Floats{} + pa[0], y = Floats{} + pb[0];
      if (sa != 0) std::memcpy(&x, pa + i, sizeof x);
      if (sb != 0) std::memcpy(&y, pb + i, sizeof y);
      const Floats r = pow_lanes(x, y, special);
      std::memcpy(po + i, &r, sizeof r);
    }
    if (i < len) {  // the last lanes, padded with 1 ** 1
      Floats x = Floats{} + 1.f, y = Floats{} + 1.f;
      for (int64_t j = 0; i + j < len; ++j) {
        x[j] = pa[sa * (i + j)];
        y[j] = pb[sb * (i + j)];
      }
      const Floats r = pow_lanes(x, y, special);
      for (int64_t j = 0; i + j < len; ++j) po[i + j] = r[j];
    }
    bool any = false;
    for (int j = 0; j < kLanes; ++j) any |= special[j] != 0;
    if (!any) continue;
    for (int64_t j = 0; j < len; ++j) {
      const float x = pa[sa * j], y = pb[sb * j];
      if (x == 0 || !std::isfinite(x) || !std::isfinite(y)) po[j] = std::pow(x, y);
    }
  }
}

}  // namespace mt::cpu::MT_ISA_NS::pow_float

#pragma GCC diagnostic pop
