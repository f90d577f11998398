#pragma once
// The element functors of the CPU's element-wise ops, one per row of MT_UNARY_OPS and
// MT_BINARY_OPS (kernels/op_table.h), for one ISA level (Note [Kernels per ISA] in
// cpu_isa.h). elementwise_loops.cc turns each into the loops of every dtype of its row; a
// missing specialisation is a compile error there.
//
// A functor gives either `T operator()(T...)` for one element, which a plain loop the
// compiler vectorises calls, or `template <typename T> static void loop(const T* in,
// T* out, int64_t n)` for a whole run (Exp, which uses Eigen's vectorised exp; a binary
// functor's takes each operand's stride too: Pow on float32). bfloat16
// and float16 never reach these: their loops widen to float32 (half_loops.cc).
//
//   template <>
//   struct UnaryFn<OpId::kSquare> {
//     template <typename T>
//     T operator()(T x) const { return mul_op(x, x); }
//   };
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/cpu/isa/pow_float.h"

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

template <>
struct BinaryFn<OpId::kMaximum> {  // a NaN of either operand propagates, as NumPy
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return a > b || a != a ? a : b;
    return a > b ? a : b;
  }
};
template <>
struct BinaryFn<OpId::kMinimum> {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return a < b || a != a ? a : b;
    return a < b ? a : b;
  }
};
template <>
struct BinaryFn<OpId::kSquaredDifference> {
  template <typename T>
  T operator()(T a, T b) const {
    const T d = sub_op(a, b);
    return mul_op(d, d);
  }
};

// Returns floor(x), exactly std::floor's value, through rint (which GCC vectorises under
// -ftrapping-math, where it leaves std::floor scalar): rint rounds to nearest, and a result
// above x is one too high. -0.0, NaN and infinities pass through.
template <typename T>
inline T floor_op(T x) {
  const T r = std::rint(x);
  return r > x ? r - T(1) : r;
}

// Note [Integer floor division]: FloorDiv and FloorMod round the quotient toward -inf.
// x / -1 is done as a negation (the lowest integer stays itself, as Neg), x / 0 gives 0
// here: the CPU kernel rejects a zero divisor before the loop runs (binary_kernels.cc), and
// the GPU keeps these values. Floats: floor(a / b) and TensorFlow's fmod-based modulo.
template <typename T>
inline T floordiv_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if (b == -1) return neg_op(a);
    const T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
  } else {
    return floor_op(a / b);
  }
}
template <typename T>
inline T floormod_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0 || b == -1) return 0;
    const T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
  } else {
    const T r = std::fmod(a, b);
    return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
  }
}
template <>
struct BinaryFn<OpId::kFloorDiv> {
  template <typename T>
  T operator()(T a, T b) const {
    return floordiv_op(a, b);
  }
};
template <>
struct BinaryFn<OpId::kFloorMod> {
  template <typename T>
  T operator()(T a, T b) const {
    return floormod_op(a, b);
  }
};

// Integer a ** b by squaring, wrapping on overflow. A negative b gives the truncated value
// (1 for a = 1, +-1 for a = -1, else 0): the CPU kernel rejects it first; the GPU keeps it.
template <typename T>
inline T int_pow(T a, T b) {
  if (b < 0) return a == 1 ? T(1) : a == -1 ? T(b % 2 == 0 ? 1 : -1) : T(0);
  T result = 1;
  for (T base = a; b != 0; b >>= 1) {
    if (b & 1) result = mul_op(result, base);
    base = mul_op(base, base);
  }
  return result;
}
template <>
struct BinaryFn<OpId::kPow> {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return int_pow(a, b);
    return std::pow(a, b);
  }
  // float32 (and the 2-byte floats, which widen to it): Note [Vectorised pow].
  template <typename T>
  requires std::is_same_v<T, float>
  static void loop(const T* a, int64_t sa, const T* b, int64_t sb, T* out, int64_t n) {
    pow_float::pow_loop(a, sa, b, sb, out, n);
  }
};
template <>
struct BinaryFn<OpId::kLogicalAnd> {  // bool only
  template <typename T>
  T operator()(T a, T b) const {
    return a && b;
  }
};
template <>
struct BinaryFn<OpId::kLogicalOr> {
  template <typename T>
  T operator()(T a, T b) const {
    return a || b;
  }
};

// The comparisons give bool (the CPU binary kernels size their output by the functor's
// result type); a NaN compares unequal to everything, as IEEE says.
#define MT_COMPARISON_FN(Name, expr)  \
  template <>                         \
  struct BinaryFn<OpId::k##Name> {    \
    template <typename T>             \
    bool operator()(T a, T b) const { \
      return expr;                    \
    }                                 \
  };
MT_COMPARISON_FN(Equal, a == b)
MT_COMPARISON_FN(NotEqual, a != b)
MT_COMPARISON_FN(Less, a < b)
MT_COMPARISON_FN(LessEqual, a <= b)
MT_COMPARISON_FN(Greater, a > b)
MT_COMPARISON_FN(GreaterEqual, a >= b)
#undef MT_COMPARISON_FN

template <>
struct UnaryFn<OpId::kSquare> {
  template <typename T>
  T operator()(T x) const {
    return mul_op(x, x);
  }
};
template <>
struct UnaryFn<OpId::kSqrt> {  // IEEE sqrt (-fno-math-errno lets it vectorise)
  template <typename T>
  T operator()(T x) const {
    return std::sqrt(x);
  }
};
template <>
struct UnaryFn<OpId::kErf> {  // the C library's erf, within 1 ulp
  template <typename T>
  T operator()(T x) const {
    return std::erf(x);
  }
};
template <>
struct UnaryFn<OpId::kSin> {  // the C library's sin
  template <typename T>
  T operator()(T x) const {
    return std::sin(x);
  }
};
template <>
struct UnaryFn<OpId::kCos> {  // the C library's cos
  template <typename T>
  T operator()(T x) const {
    return std::cos(x);
  }
};
template <>
struct UnaryFn<OpId::kRsqrt> {  // 1 / sqrt(x), both correctly rounded, as on the GPU
  template <typename T>
  T operator()(T x) const {
    return T(1) / std::sqrt(x);
  }
};
template <>
struct UnaryFn<OpId::kSign> {  // -1, 0 or 1; a zero keeps its sign and NaN stays NaN
  template <typename T>
  T operator()(T x) const {
    return x > T(0) ? T(1) : x < T(0) ? T(-1) : x;
  }
};
template <>
struct UnaryFn<OpId::kFloor> {  // floating types only
  template <typename T>
  T operator()(T x) const {
    return floor_op(x);
  }
};
template <>
struct UnaryFn<OpId::kRound> {  // half to even (the default rounding mode); integers stay
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return x;
    return std::rint(x);
  }
};
template <>
struct UnaryFn<OpId::kLogicalNot> {  // bool only
  template <typename T>
  T operator()(T x) const {
    return !x;
  }
};

// Note [Eigen with a fallback]: Log, Log1p and Tanh run Eigen's vectorised function over
// blocks of kEigenBlock elements, then redo with the std:: function every element outside
// [low, high], where Eigen's version is inexact or mishandles NaN (Eigen's float log
// flushes subnormal inputs, its float tanh clamps NaN), as Exp does (Note [Eigen exp range]).
constexpr int64_t kEigenBlock = 1024;

template <typename T, typename EigenOp, typename StdOp>
void eigen_loop(const T* in_all, T* out_all, int64_t n, T low, T high, EigenOp eigen_op,
                StdOp std_op) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  for (int64_t start = 0; start < n; start += kEigenBlock) {
    const int64_t len = n - start < kEigenBlock ? n - start : kEigenBlock;
    const T* in = in_all + start;
    T* out = out_all + start;
    Eigen::Map<const Array> x(in, len);
    Eigen::Map<Array>(out, len) = eigen_op(x);
    if (x.template minCoeff<Eigen::PropagateNaN>() >= low &&
        x.template maxCoeff<Eigen::PropagateNaN>() <= high) {
      continue;  // a NaN fails both tests
    }
    for (int64_t i = 0; i < len; ++i) {
      if (!(in[i] >= low && in[i] <= high)) out[i] = std_op(in[i]);
    }
  }
}

template <>
struct UnaryFn<OpId::kLog> {
  template <typename T>
  static void loop(const T* in, T* out, int64_t n) {
    eigen_loop(
        in, out, n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
        [](const auto& x) { return x.log(); }, [](T v) { return std::log(v); });
  }
};
template <>
struct UnaryFn<OpId::kLog1p> {
  template <typename T>
  static void loop(const T* in, T* out, int64_t n) {
    eigen_loop(
        in, out, n, T(-0.5), std::numeric_limits<T>::max(), [](const auto& x) { return x.log1p(); },
        [](T v) { return std::log1p(v); });
  }
};
template <>
struct UnaryFn<OpId::kTanh> {
  template <typename T>
  static void loop(const T* in, T* out, int64_t n) {
    eigen_loop(
        in, out, n, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(),
        [](const auto& x) { return x.tanh(); }, [](T v) { return std::tanh(v); });
  }
};

// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, e^-|x| from the Exp loop: no
// overflow, and a tiny result keeps its digits. The GPU computes the same formula.
template <>
struct UnaryFn<OpId::kSigmoid> {
  template <typename T>
  static void loop(const T* in_all, T* out_all, int64_t n) {
    alignas(64) T minus_abs[kEigenBlock];
    alignas(64) T e[kEigenBlock];
    for (int64_t start = 0; start < n; start += kEigenBlock) {
      const int64_t len = n - start < kEigenBlock ? n - start : kEigenBlock;
      const T* in = in_all + start;
      T* __restrict out = out_all + start;
      for (int64_t i = 0; i < len; ++i) minus_abs[i] = -std::fabs(in[i]);
      UnaryFn<OpId::kExp>::loop(minus_abs, e, len);  // not in place: it rereads its input
      for (int64_t i = 0; i < len; ++i) {
        const T r = T(1) / (T(1) + e[i]);
        out[i] = in[i] >= T(0) ? r : e[i] * r;
      }
    }
  }
};

}  // namespace mt::cpu::MT_ISA_NS
