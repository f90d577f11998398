// Element-wise loops for one ISA level: the binary ops, the unary ops and AddN. Plain loops
// the compiler vectorises for the level's flags; Exp uses Eigen's vectorised exp.
#include <cmath>
#include <cstring>

#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/type_list.h"

namespace mt::cpu::MT_ISA_NS {
namespace {

struct AddFn {
  template <typename T>
  T operator()(T a, T b) const {
    return add_op(a, b);
  }
};
struct SubFn {
  template <typename T>
  T operator()(T a, T b) const {
    return sub_op(a, b);
  }
};
struct MulFn {
  template <typename T>
  T operator()(T a, T b) const {
    return mul_op(a, b);
  }
};
struct DivFn {  // floating types only
  template <typename T>
  T operator()(T a, T b) const {
    return a / b;
  }
};

template <typename Fn, typename T>
void binary_loop(const void* va, int64_t sa, const void* vb, int64_t sb, void* vout, int64_t n) {
  const T* a = static_cast<const T*>(va);
  const T* b = static_cast<const T*>(vb);
  T* __restrict out = static_cast<T*>(vout);
  const Fn fn;
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = fn(a[i], b[i]);
  } else if (sa == 0) {
    const T x = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = fn(x, b[i]);
  } else {
    const T y = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = fn(a[i], y);
  }
}

// Returns -x; -0.0 for 0.0, and the lowest integer stays itself (Note [Integer overflow]).
template <typename T>
T neg_op(T x) {
  if constexpr (std::is_integral_v<T>) return sub_op(T(0), x);
  return -x;
}

struct NegFn {
  template <typename T>
  T operator()(T x) const {
    return neg_op(x);
  }
};
struct AbsFn {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
    return x < 0 ? neg_op(x) : x;
  }
};
struct ReluFn {  // max(x, 0); NaN passes through
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? T(0) : x;
  }
};

template <typename Fn, typename T>
void unary_loop(const void* vin, void* vout, int64_t n) {
  const T* in = static_cast<const T*>(vin);
  T* __restrict out = static_cast<T*>(vout);
  const Fn fn;
  for (int64_t i = 0; i < n; ++i) out[i] = fn(in[i]);
}

// Note [Eigen exp range]: Eigen 3.4's vectorised exp is exact to about an ulp only where the
// result is a normal number: it returns inf from 88.38 on (float; the largest float is
// exp(88.72)) and 0 or ~3e-39 below -87.3, where the result is subnormal, exp(-inf)
// included; for double the edges are 709.4 and -708.4. Each block whose inputs reach
// outside [kLow, kHigh] is recomputed element by element with std::exp there.
template <typename T>
void exp_loop(const void* vin, void* vout, int64_t n) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  constexpr int64_t kBlock = 1024;
  constexpr T kLow = std::is_same_v<T, float> ? T(-87) : T(-708);
  constexpr T kHigh = std::is_same_v<T, float> ? T(88) : T(709);
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t len = n - start < kBlock ? n - start : kBlock;
    const T* in = static_cast<const T*>(vin) + start;
    T* out = static_cast<T*>(vout) + start;
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

// Elements per AddN block: 8 KiB of float32, small enough to stay in L1 beside the inputs.
constexpr int64_t kAddNBlock = 2048;

template <typename T>
void add_n_loop(const void* const* inputs, int64_t count, int64_t begin, int64_t end, void* vout) {
  T* out = static_cast<T*>(vout);
  for (int64_t start = begin; start < end; start += kAddNBlock) {
    const int64_t len = end - start < kAddNBlock ? end - start : kAddNBlock;
    T* __restrict o = out + start;
    const T* first = static_cast<const T*>(inputs[0]) + start;
    if (count == 1) {
      std::memcpy(o, first, len * sizeof(T));
      continue;
    }
    const T* second = static_cast<const T*>(inputs[1]) + start;
    for (int64_t j = 0; j < len; ++j) o[j] = add_op(first[j], second[j]);
    for (int64_t k = 2; k < count; ++k) {
      const T* in = static_cast<const T*>(inputs[k]) + start;
      for (int64_t j = 0; j < len; ++j) o[j] = add_op(o[j], in[j]);
    }
  }
}

template <typename T>
void fill_numeric(CpuLoops& loops) {
  const int d = static_cast<int>(dtype_of<T>());
  loops.binary[kAdd][d] = &binary_loop<AddFn, T>;
  loops.binary[kSub][d] = &binary_loop<SubFn, T>;
  loops.binary[kMul][d] = &binary_loop<MulFn, T>;
  loops.unary[kNeg][d] = &unary_loop<NegFn, T>;
  loops.unary[kAbs][d] = &unary_loop<AbsFn, T>;
  loops.unary[kRelu][d] = &unary_loop<ReluFn, T>;
  loops.add_n[d] = &add_n_loop<T>;
  if constexpr (std::is_floating_point_v<T>) {
    loops.binary[kDiv][d] = &binary_loop<DivFn, T>;
    loops.unary[kExp][d] = &exp_loop<T>;
  }
}

}  // namespace

// bfloat16 and float16 have loops of their own (half_loops.cc).
void fill_elementwise_loops(CpuLoops& loops) {
  [&]<typename... Ts>(TypeList<Ts...>) {
    (fill_numeric<Ts>(loops), ...);
  }(WithoutHalf<NumericTypes>{});
}

}  // namespace mt::cpu::MT_ISA_NS
