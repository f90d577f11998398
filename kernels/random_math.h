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
// written as fma), with the classic fdlibm reductions and polynomials; their error is under
// about one unit in the last place of a double. Compilers may fuse a product into a
// following addition, which changes the rounding: on a GPU every such product goes through
// mul_rn (an intrinsic nvcc never fuses); on the host the files that include this are built
// with -ffp-contract=off (kernels/CMakeLists.txt).

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/philox.h"

namespace mt::internal {

// Returns a * b rounded once, never fused into a later addition.
MT_HOST_DEVICE inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
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

// Returns the natural logarithm of `x`, a positive normal double.
MT_HOST_DEVICE inline double portable_log(double x) {
  constexpr double kLn2High = 6.93147180369123816490e-01;  // ln 2 in two parts; k * high
  constexpr double kLn2Low = 1.90821492927058770002e-10;   // is exact for |k| < 2^11
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  int k = static_cast<int>(bits >> 52) - 1023;
  bits = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52);
  double m;  // x = m * 2^k with m in [sqrt(1/2), sqrt(2))
  std::memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    k += 1;
  }
  // log(m) = log(1 + f) = 2 atanh(s) with s = f / (2 + f), as fdlibm's e_log.c.
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = mul_rn(s, s), w = mul_rn(z, z);
  const double t1 =
      mul_rn(w, fma_rn(w, fma_rn(w, 1.531383769920937332e-01, 2.222219843214978396e-01),
                       3.999999999940941908e-01));
  const double t2 =
      mul_rn(z, fma_rn(w,
                       fma_rn(w, fma_rn(w, 1.479819860511658591e-01, 1.818357216161805012e-01),
                              2.857142874366239149e-01),
                       6.666666666666735130e-01));
  const double r = t2 + t1;
  const double half_f_squared = mul_rn(0.5 * f, f);
  const double dk = k;
  const double tail = fma_rn(s, half_f_squared + r, mul_rn(dk, kLn2Low));
  return mul_rn(dk, kLn2High) - ((half_f_squared - tail) - f);
}

// Returns sin(r) for |r| <= pi/4 (fdlibm's k_sin.c polynomial).
MT_HOST_DEVICE inline double sin_kernel(double r) {
  const double z = mul_rn(r, r);
  double p = fma_rn(z, 1.58969099521155010221e-10, -2.50507602534068634195e-08);
  p = fma_rn(z, p, 2.75573137070700676789e-06);
  p = fma_rn(z, p, -1.98412698298579493134e-04);
  p = fma_rn(z, p, 8.33333333332248946124e-03);
  p = fma_rn(z, p, -1.66666666666666324348e-01);
  return fma_rn(mul_rn(r, z), p, r);
}

// Returns cos(r) for |r| <= pi/4 (fdlibm's k_cos.c polynomial).
MT_HOST_DEVICE inline double cos_kernel(double r) {
  const double z = mul_rn(r, r);
  double q = fma_rn(z, -1.13596475577881948265e-11, 2.08757232129817482790e-09);
  q = fma_rn(z, q, -2.75573143513906633035e-07);
  q = fma_rn(z, q, 2.48015872894767294178e-05);
  q = fma_rn(z, q, -1.38888888888741095749e-03);
  q = fma_rn(z, q, 4.16666666666666019037e-02);
  const double half_z = 0.5 * z;
  const double w = 1.0 - half_z;
  return w + fma_rn(mul_rn(z, z), q, (1.0 - w) - half_z);
}

// Sets *s and *c to sin(x) and cos(x), for 0 <= x <= 8 (the Box-Muller angles lie in
// [0, 2 pi]). x is reduced by the multiple of pi/2 nearest to it, in three exact parts.
MT_HOST_DEVICE inline void portable_sincos(double x, double* s, double* c) {
  constexpr double kPiOver2Part1 = 1.57079632673412561417e+00;  // 33 bits each
  constexpr double kPiOver2Part2 = 6.07710050630396597660e-11;
  constexpr double kPiOver2Part3 = 2.02226624879595063154e-21;
  const double kd = std::floor(mul_rn(x, 6.36619772367581382433e-01) + 0.5);
  double r = fma_rn(-kd, kPiOver2Part1, x);
  r = fma_rn(-kd, kPiOver2Part2, r);
  r = fma_rn(-kd, kPiOver2Part3, r);
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
