#pragma once
// Internal to kernels/cuda/ (.cu files only): the combining rules of Sum (and Mean), Max,
// Min, Prod, Any and All, and Mean's final division, which reduce_kernel
// (reduction_kernels.cu) and reduce_all_kernel (reduce_all.h) share. Any and All run on the
// bools' bytes as uint8_t (0 or 1), whose warp shuffles return int: their combine takes
// either type.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cuda/device_math.h"

namespace mt::cuda {

struct SumReducer {
  template <typename T>
  static T identity() {
    return T(0);
  }
  template <typename T>
  __device__ static T combine(T a, T b) {
    return add_op(a, b);
  }
};

struct MaxReducer {  // NaN wins, as in TensorFlow and on the CPU
  template <typename T>
  static T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  template <typename T>
  __device__ static T combine(T a, T b) {
    return (b > a || b != b) ? b : a;
  }
};

struct MinReducer {  // NaN wins, as in TensorFlow and on the CPU
  template <typename T>
  static T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  template <typename T>
  __device__ static T combine(T a, T b) {
    return (b < a || b != b) ? b : a;
  }
};

struct ProdReducer {  // integers wrap
  template <typename T>
  static T identity() {
    return T(1);
  }
  template <typename T>
  __device__ static T combine(T a, T b) {
    return mul_op(a, b);
  }
};

struct AnyReducer {
  template <typename T>
  static T identity() {
    return T(0);
  }
  template <typename T, typename U>
  __device__ static T combine(T a, U b) {
    return static_cast<T>((a | b) != 0);
  }
};

struct AllReducer {
  template <typename T>
  static T identity() {
    return T(1);
  }
  template <typename T, typename U>
  __device__ static T combine(T a, U b) {
    return static_cast<T>((a & b) != 0);
  }
};

// Returns Mean's quotient (truncating for integers), or `sum` when mean_count is 0.
template <typename Acc>
__device__ __forceinline__ Acc finish(Acc sum, int64_t mean_count) {
  if (mean_count == 0) return sum;
  if constexpr (std::is_integral_v<Acc>) {
    return static_cast<Acc>(int64_t{sum} / mean_count);
  } else {
    return sum / static_cast<Acc>(mean_count);
  }
}

}  // namespace mt::cuda
