#pragma once
// The element functors of the CPU's element-wise ops, one per row of MT_UNARY_OPS and
// MT_BINARY_OPS (kernels/op_table.h), for one ISA level (Note [Kernels per ISA] in
// cpu_isa.h). elementwise_loops.cc turns each into the loops of every dtype of its row; a
// missing specialisation is a compile error there.
//
// A functor gives either `T operator()(T...)` for one element, which a plain loop the
// compiler vectorises calls, or `template <typename T> static void loop(const T* in,
// T* out, int64_t n)` for a whole run (Exp, which uses Eigen's vectorised exp). bfloat16
// and float16 never reach these: their loops widen to float32 (half_loops.cc).
//
//   template <>
//   struct UnaryFn<OpId::kSquare> {
//     template <typename T>
//     T operator()(T x) const { return mul_op(x, x); }
//   };
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/isa/isa_eigen.h"

namespace mt::cpu::MT_ISA_NS {

template <OpId kOp>
struct UnaryFn;
template <OpId kOp>
struct BinaryFn;

// Returns -x; -0.0 for 0.0, and the lowest integer stays itself (Note [Integer overflow]).
template <typename T>
inline T neg_op(T x) {
  if constexpr (std::is_integral_v<T>) return sub_op(T(0), x);
  return -x;
}

template <>
struct BinaryFn<OpId::kAddV2> {
  template <typename T>
  T operator()(T a, T b) const {
    return add_op(a, b);
  }
};
template <>
struct BinaryFn<OpId::kSub> {
  template <typename T>
  T operator()(T a, T b) const {
    return sub_op(a, b);
  }
};
template <>
struct BinaryFn<OpId::kMul> {
  template <typename T>
  T operator()(T a, T b) const {
    return mul_op(a, b);
  }
};
template <>
struct BinaryFn<OpId::kRealDiv> {  // floating types only
  template <typename T>
  T operator()(T a, T b) const {
    return a / b;
  }
};

template <>
struct UnaryFn<OpId::kNeg> {
  template <typename T>
  T operator()(T x) const {
    return neg_op(x);
  }
};
template <>
struct UnaryFn<OpId::kAbs> {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
    return x < 0 ? neg_op(x) : x;
  }
};
template <>
struct UnaryFn<OpId::kRelu> {  // max(x, 0); NaN passes through
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? T(0) : x;
  }
};

// Note [Eigen exp range]: Eigen 3.4's vectorised exp is exact to about an ulp only where the
// result is a normal number: it returns inf from 88.38 on (float; the largest float is
// exp(88.72)) and 0 or ~3e-39 below -87.3, where the result is subnormal, exp(-inf)
// included; for double the edges are 709.4 and -708.4. Each block whose inputs reach
// outside [kLow, kHigh] is recomputed element by element with std::exp there.
template <>
struct UnaryFn<OpId::kExp> {
  template <typename T>
  static void loop(const T* in_all, T* out_all, int64_t n) {
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    constexpr int64_t kBlock = 1024;
    constexpr T kLow = std::is_same_v<T, float> ? T(-87) : T(-708);
    constexpr T kHigh = std::is_same_v<T, float> ? T(88) : T(709);
    for (int64_t start = 0; start < n; start += kBlock) {
      const int64_t len = n - start < kBlock ? n - start : kBlock;
      const T* in = in_all + start;
      T* out = out_all + start;
      Eigen::Map<const Array> x(in, len);
      Eigen::Map<Array>(out, len) = x.exp();
      if (x.template minCoeff<Eigen::PropagateNaN>() >= kLow &&
          x.template maxCoeff<Eigen::PropagateNaN>() <= kHigh) {
        continue;  // a NaN fails both tests
      }
      for (int64_t i = 0; i < len; ++i) {
        if (!(in[i] >= kLow && in[i] <= kHigh)) out[i] = std::exp(in[i]);
      }
    }
  }
};

}  // namespace mt::cpu::MT_ISA_NS
