#pragma once
// log, sin and cos for the Box-Muller transform, giving the same bits on the host and on a
// GPU (Note [Same bits on every device]). Host and device code; no CUDA header.
//
//   double s, c;
//   portable_sincos(1.0, &s, &c);
//   double l = portable_log(0.5);  // -0.6931...
//
// Note [Same bits on every device]
// The C library's logf/sincosf and CUDA's differ in the last bit for some inputs, so normal
// samples built on them would differ between devices. These functions use only IEEE
// operations that every device rounds the same way (+, -, *, /, and fused multiply-add where
// written as fma_rn). The leading terms are summed in double-double and rounded once, so the
// results are correctly rounded doubles in all but rare cases (about 1 in 10^5 inputs).
// Compilers may fuse a product into a following addition, which changes the rounding, so
// every product that meets an addition goes through mul_rn, which no compiler can fuse (an
// nvcc intrinsic on a GPU, an empty asm on x86-64 hosts); the CPU fill is also built with
// -ffp-contract=off (kernels/CMakeLists.txt). Products by powers of two are exact and may
// be written plainly.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/philox.h"

namespace mt::internal {

// Returns a * b rounded once, never fused into a later addition.
MT_HOST_DEVICE inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#elif defined(__x86_64__)
  double p = a * b;
  __asm__("" : "+x"(p));  // the product must exist in a register: nothing left to fuse
  return p;
#else
  return a * b;
#endif
}

// Returns round(a * b + c), one rounding on every device.
MT_HOST_DEVICE inline double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Returns c0 + z * (c1 + z * (c2 + ...)), Horner's rule with fused multiply-adds.
MT_HOST_DEVICE inline double horner(double, double c0) { return c0; }
template <typename... Rest>
MT_HOST_DEVICE inline double horner(double z, double c0, Rest... rest) {
  return fma_rn(z, horner(z, rest...), c0);
}

// An unevaluated sum hi + lo with |lo| <= half a unit in the last place of hi.
struct DoubleDouble {
  double hi;
  double lo;
};

// Returns a + b exactly, for |a| >= |b| or a == 0 (Dekker's fast two-sum).
MT_HOST_DEVICE inline DoubleDouble fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

// Returns a + b exactly (Knuth's two-sum).
MT_HOST_DEVICE inline DoubleDouble two_sum(double a, double b) {
  const double s = a + b;
  const double b_part = s - a;
  return {s, (a - (s - b_part)) + (b - b_part)};
}

// Returns a * b exactly.
MT_HOST_DEVICE inline DoubleDouble two_product(double a, double b) {
  const double p = mul_rn(a, b);
  return {p, fma_rn(a, b, -p)};
}

// Returns (a.hi + a.lo) * (c.hi + c.lo) to about 100 bits, for small a.lo and c.lo.
MT_HOST_DEVICE inline DoubleDouble dd_multiply(DoubleDouble a, DoubleDouble c) {
  const DoubleDouble p = two_product(a.hi, c.hi);
  return {p.hi, fma_rn(a.hi, c.lo, fma_rn(a.lo, c.hi, p.lo))};
}

// Returns log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1] as a double-double: 2 atanh(s)
// with s = f / (2 + f), the series' first two terms in double-double.
MT_HOST_DEVICE inline DoubleDouble log1p_reduced(double f) {
  const DoubleDouble d = fast_two_sum(2.0, f);
  const double s = f / d.hi;
  const double s_lo = fma_rn(-s, d.lo, fma_rn(-s, d.hi, f)) / d.hi;
  DoubleDouble z = two_product(s, s);
  z.lo = fma_rn(2.0 * s, s_lo, z.lo);
  DoubleDouble s3 = two_product(s, z.hi);
  s3.lo = fma_rn(s, z.lo, fma_rn(s_lo, z.hi, s3.lo));
  const DoubleDouble cubic = dd_multiply(s3, {0.6666666666666666, 3.700743415417188e-17});
  const double rest =
      mul_rn(mul_rn(s3.hi, z.hi),
             horner(z.hi, 0.4, 0.2857142857142857, 0.2222222222222222, 0.18181818181818182,
                    0.15384615384615385, 0.13333333333333333, 0.11764705882352941,
                    0.10526315789473684, 0.09523809523809523, 0.08695652173913043, 0.08));
  const DoubleDouble head = fast_two_sum(2.0 * s, cubic.hi);
  return {head.hi, head.lo + (2.0 * s_lo + (cubic.lo + rest))};
}

// Returns the natural logarithm of `x`, a positive normal double: k log(2) + log(m) with
// x = m 2^k and m in [sqrt(1/2), sqrt(2)), summed in double-double and rounded once.
MT_HOST_DEVICE inline double portable_log(double x) {
  constexpr double kLn2High = 6.93147180369123816490e-01;  // ln 2 in two parts; k * high
  constexpr double kLn2Low = 1.90821492927058770002e-10;   // is exact for |k| < 2^11
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  int k = static_cast<int>(bits >> 52) - 1023;
  bits = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52);
  double m;
  std::memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    k += 1;
  }
  const DoubleDouble tail = log1p_reduced(m - 1.0);  // m - 1 is exact
  const double dk = k;
  const DoubleDouble sum = fast_two_sum(mul_rn(dk, kLn2High), tail.hi);  // |k ln 2| > |tail|
  return sum.hi + (sum.lo + (tail.lo + mul_rn(dk, kLn2Low)));
}

// Returns sin(r.hi + r.lo) for |r| <= pi/4: r - r^3/6 in double-double, the rest of the
// Taylor series to r^21 in double.
MT_HOST_DEVICE inline double sin_kernel(DoubleDouble r) {
  const DoubleDouble z = two_product(r.hi, r.hi);
  DoubleDouble r3 = two_product(r.hi, z.hi);
  r3.lo = fma_rn(r.hi, z.lo, r3.lo);
  const DoubleDouble cubic = dd_multiply(r3, {-0.16666666666666666, -9.25185853854297e-18});
  const double rest =
      mul_rn(mul_rn(r3.hi, z.hi),
             horner(z.hi, 0.008333333333333333, -0.0001984126984126984, 2.7557319223985893e-06,
                    -2.505210838544172e-08, 1.6059043836821613e-10, -7.647163731819816e-13,
                    2.8114572543455206e-15, -8.22063524662433e-18, 1.9572941063391263e-20));
  const double low = fma_rn(-0.5 * z.hi, r.lo, r.lo);  // r.lo cos(r)
  const DoubleDouble head = fast_two_sum(r.hi, cubic.hi);
  return head.hi + (head.lo + (cubic.lo + (rest + low)));
}

// Returns cos(r.hi + r.lo) for |r| <= pi/4: 1 - r^2/2 + r^4/24 in double-double, the rest
// of the Taylor series to r^20 in double.
MT_HOST_DEVICE inline double cos_kernel(DoubleDouble r) {
  DoubleDouble z = two_product(r.hi, r.hi);
  z.lo = fma_rn(2.0 * r.hi, r.lo, z.lo);
  const double w = 1.0 - 0.5 * z.hi;
  const double w_low = ((1.0 - w) - 0.5 * z.hi) - 0.5 * z.lo;  // the first two are exact
  DoubleDouble z2 = two_product(z.hi, z.hi);
  z2.lo = fma_rn(2.0 * z.hi, z.lo, z2.lo);
  const DoubleDouble quartic = dd_multiply(z2, {0.041666666666666664, 2.3129646346357427e-18});
  const double rest =
      mul_rn(mul_rn(z2.hi, z.hi),
             horner(z.hi, -0.001388888888888889, 2.48015873015873e-05, -2.755731922398589e-07,
                    2.08767569878681e-09, -1.1470745597729725e-11, 4.779477332387385e-14,
                    -1.5619206968586225e-16, 4.110317623312165e-19));
  const DoubleDouble head = fast_two_sum(w, quartic.hi);
  return head.hi + (head.lo + (w_low + (quartic.lo + rest)));
}

// Sets *s and *c to sin(x) and cos(x), for 0 <= x <= 8 (the Box-Muller angles lie in
// [0, 2 pi]). x is reduced by the multiple of pi/2 nearest to it, pi/2 in three parts.
MT_HOST_DEVICE inline void portable_sincos(double x, double* s, double* c) {
  constexpr double kPiOver2Part1 = 1.57079632673412561417e+00;  // 33 bits
  constexpr double kPiOver2Part2 = 6.07710050630396597660e-11;  // 33 bits
  constexpr double kPiOver2Part3 = 2.02226624879595063154e-21;
  const double kd = std::floor(mul_rn(x, 6.36619772367581382433e-01) + 0.5);
  const double r1 = fma_rn(-kd, kPiOver2Part1, x);  // exact, as is kd * part 2
  DoubleDouble r = two_sum(r1, -mul_rn(kd, kPiOver2Part2));
  r.lo = fma_rn(-kd, kPiOver2Part3, r.lo);
  const double sr = sin_kernel(r), cr = cos_kernel(r);
  switch (static_cast<int>(kd) & 3) {
    case 0:
      *s = sr, *c = cr;
      break;
    case 1:
      *s = cr, *c = -sr;
      break;
    case 2:
      *s = -sr, *c = -cr;
      break;
    default:
      *s = -cr, *c = sr;
      break;
  }
}

}  // namespace mt::internal
