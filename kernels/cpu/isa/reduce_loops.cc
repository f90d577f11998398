// Reduction loops for one ISA level: Sum and Max over a contiguous run (Eigen's vectorised
// reductions for floats; wrapping loops the compiler vectorises for integers), and the
// element-wise combine that reductions over outer dimensions use.
#include <limits>

#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/type_list.h"

namespace mt::cpu::MT_ISA_NS {
namespace {

template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <typename T>
void sum_loop(const void* vin, int64_t n, void* vacc) {
  const T* in = static_cast<const T*>(vin);
  T* acc = static_cast<T*>(vacc);
  if constexpr (std::is_integral_v<T>) {  // wrap, as add_op does, instead of overflowing
    Unsigned<T> sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<Unsigned<T>>(in[i]);
    *acc = add_op(*acc, static_cast<T>(sum));
  } else {
    *acc += ConstArrayMap<T>(in, n).sum();
  }
}

// Returns max(a, b) where NaN wins, as in TensorFlow.
template <typename T>
T max_op(T a, T b) {
  return (b > a || b != b) ? b : a;
}

template <typename T>
void max_loop(const void* vin, int64_t n, void* vacc) {
  const T* in = static_cast<const T*>(vin);
  T* acc = static_cast<T*>(vacc);
  if constexpr (std::is_integral_v<T>) {
    T best = std::numeric_limits<T>::lowest();
    for (int64_t i = 0; i < n; ++i) best = in[i] > best ? in[i] : best;
    *acc = max_op(*acc, best);
  } else if (n > 0) {
    *acc = max_op(*acc, ConstArrayMap<T>(in, n).template maxCoeff<Eigen::PropagateNaN>());
  }
}

template <typename T>
void sum_accumulate(const void* vin, void* vacc, int64_t n) {
  const T* in = static_cast<const T*>(vin);
  T* __restrict acc = static_cast<T*>(vacc);
  for (int64_t i = 0; i < n; ++i) acc[i] = add_op(acc[i], in[i]);
}

template <typename T>
void max_accumulate(const void* vin, void* vacc, int64_t n) {
  const T* in = static_cast<const T*>(vin);
  T* __restrict acc = static_cast<T*>(vacc);
  for (int64_t i = 0; i < n; ++i) acc[i] = max_op(acc[i], in[i]);
}

template <typename T>
void fill_type(CpuLoops& loops) {
  const int d = static_cast<int>(dtype_of<T>());
  loops.reduce[kSumReduce][d] = &sum_loop<T>;
  loops.reduce[kMaxReduce][d] = &max_loop<T>;
  loops.accumulate[kSumReduce][d] = &sum_accumulate<T>;
  loops.accumulate[kMaxReduce][d] = &max_accumulate<T>;
}

}  // namespace

// bfloat16 and float16 have loops of their own (half_loops.cc).
void fill_reduce_loops(CpuLoops& loops) {
  [&]<typename... Ts>(TypeList<Ts...>) {
    (fill_type<Ts>(loops), ...);
  }(WithoutHalf<NumericTypes>{});
}

}  // namespace mt::cpu::MT_ISA_NS
