// Reduction loops for one ISA level: Sum, Max, Min and Prod over a contiguous run (float sums
// in eight independent Eigen packets, float max and min through Eigen's vectorised
// reductions, products in order; wrapping loops the compiler vectorises for integers), Any
// and All over bools, and the element-wise combine that reductions over outer dimensions use.
#include <limits>

#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/type_list.h"

namespace mt::cpu::MT_ISA_NS {
namespace {

template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// Independent vector sums that float_sum keeps: enough to hide an add's latency (4 cycles)
// on the two add ports of a current x86 core.
constexpr int kSumAccumulators = 8;

// Returns the sum of in[0 .. n): kSumAccumulators packets of partial sums over the whole
// packets, each strided by kSumAccumulators packets, combined as a tree, then the packets
// left over, the lanes and the elements left over in order. The order depends on n and the ISA
// level's packet width only.
template <typename T>
T float_sum(const T* in, int64_t n) {
  namespace ei = Eigen::internal;
  using Packet = typename ei::packet_traits<T>::type;
  constexpr int64_t kLanes = ei::packet_traits<T>::size;
  constexpr int64_t kStep = kLanes * kSumAccumulators;
  Packet acc[kSumAccumulators];
  for (Packet& p : acc) p = ei::pset1<Packet>(T(0));
  int64_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    for (int j = 0; j < kSumAccumulators; ++j) {
      acc[j] = ei::padd(acc[j], ei::ploadu<Packet>(in + i + j * kLanes));
    }
  }
  for (int width = kSumAccumulators / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) acc[j] = ei::padd(acc[j], acc[j + width]);
  }
  for (; i + kLanes <= n; i += kLanes) acc[0] = ei::padd(acc[0], ei::ploadu<Packet>(in + i));
  T lanes[kLanes];  // summed in lane order (Eigen's predux trips GCC's -Wuninitialized)
  ei::pstoreu(lanes, acc[0]);
  T sum = 0;
  for (T lane : lanes) sum += lane;
  for (; i < n; ++i) sum += in[i];
  return sum;
}

template <typename T>
void sum_loop(const void* vin, int64_t n, void* vacc) {
  const T* in = static_cast<const T*>(vin);
  T* acc = static_cast<T*>(vacc);
  if constexpr (std::is_integral_v<T>) {  // wrap, as add_op does, instead of overflowing
    Unsigned<T> sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<Unsigned<T>>(in[i]);
    *acc = add_op(*acc, static_cast<T>(sum));
  } else {
    *acc += float_sum(in, n);
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

// Returns min(a, b) where NaN wins, as in TensorFlow.
template <typename T>
T min_op(T a, T b) {
  return (b < a || b != b) ? b : a;
}

template <typename T>
void min_loop(const void* vin, int64_t n, void* vacc) {
  const T* in = static_cast<const T*>(vin);
  T* acc = static_cast<T*>(vacc);
  if constexpr (std::is_integral_v<T>) {
    T best = std::numeric_limits<T>::max();
    for (int64_t i = 0; i < n; ++i) best = in[i] < best ? in[i] : best;
    *acc = min_op(*acc, best);
  } else if (n > 0) {
    *acc = min_op(*acc, ConstArrayMap<T>(in, n).template minCoeff<Eigen::PropagateNaN>());
  }
}

// Multiplies in order (integers wrap, as mul_op does), so the result depends on n only.
template <typename T>
void prod_loop(const void* vin, int64_t n, void* vacc) {
  const T* in = static_cast<const T*>(vin);
  T* acc = static_cast<T*>(vacc);
  T p = *acc;
  for (int64_t i = 0; i < n; ++i) p = mul_op(p, in[i]);
  *acc = p;
}

template <typename T>
void min_accumulate(const void* vin, void* vacc, int64_t n) {
  const T* in = static_cast<const T*>(vin);
  T* __restrict acc = static_cast<T*>(vacc);
  for (int64_t i = 0; i < n; ++i) acc[i] = min_op(acc[i], in[i]);
}

template <typename T>
void prod_accumulate(const void* vin, void* vacc, int64_t n) {
  const T* in = static_cast<const T*>(vin);
  T* __restrict acc = static_cast<T*>(vacc);
  for (int64_t i = 0; i < n; ++i) acc[i] = mul_op(acc[i], in[i]);
}

// Any (kAll false) and All over bools.
template <bool kAll>
void bool_loop(const void* vin, int64_t n, void* vacc) {
  const bool* in = static_cast<const bool*>(vin);
  bool* acc = static_cast<bool*>(vacc);
  bool r = *acc;
  for (int64_t i = 0; i < n; ++i) r = kAll ? (r && in[i]) : (r || in[i]);
  *acc = r;
}

template <bool kAll>
void bool_accumulate(const void* vin, void* vacc, int64_t n) {
  const bool* in = static_cast<const bool*>(vin);
  bool* __restrict acc = static_cast<bool*>(vacc);
  for (int64_t i = 0; i < n; ++i) acc[i] = kAll ? (acc[i] && in[i]) : (acc[i] || in[i]);
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
  constexpr int kSum = static_cast<int>(OpId::kSum), kMax = static_cast<int>(OpId::kMax);
  loops.reduce[kSum][d] = &sum_loop<T>;
  loops.reduce[kMax][d] = &max_loop<T>;
  loops.accumulate[kSum][d] = &sum_accumulate<T>;
  loops.accumulate[kMax][d] = &max_accumulate<T>;
  constexpr int kMin = static_cast<int>(OpId::kMin), kProd = static_cast<int>(OpId::kProd);
  loops.reduce[kMin][d] = &min_loop<T>;
  loops.reduce[kProd][d] = &prod_loop<T>;
  loops.accumulate[kMin][d] = &min_accumulate<T>;
  loops.accumulate[kProd][d] = &prod_accumulate<T>;
}

}  // namespace

// bfloat16 and float16 have loops of their own (half_loops.cc).
void fill_reduce_loops(CpuLoops& loops) {
  [&]<typename... Ts>(TypeList<Ts...>) {
    (fill_type<Ts>(loops), ...);
  }(WithoutHalf<NumericTypes>{});
  const int b = static_cast<int>(DType::kBool);
  loops.reduce[static_cast<int>(OpId::kAny)][b] = &bool_loop<false>;
  loops.reduce[static_cast<int>(OpId::kAll)][b] = &bool_loop<true>;
  loops.accumulate[static_cast<int>(OpId::kAny)][b] = &bool_accumulate<false>;
  loops.accumulate[static_cast<int>(OpId::kAll)][b] = &bool_accumulate<true>;
}

}  // namespace mt::cpu::MT_ISA_NS
