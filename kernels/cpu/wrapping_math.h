#pragma once
// The integer arithmetic every CPU kernel shares, with no dependency beyond the standard
// library so that the per-ISA loops (isa/*.cc) can include it.
//
// Note [Integer overflow]: integer arithmetic wraps around, as TensorFlow's does on every
// machine it runs on, but without the undefined behaviour of signed overflow in C++: it is
// done in the unsigned type and converted back (a modular conversion since C++20).

#include <type_traits>

namespace mt::cpu {

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

// The type a kernel computes T in: Unsigned<T> for integers, T itself otherwise.
template <typename T>
using ComputeType = typename std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                                                std::make_unsigned<T>, std::type_identity<T>>::type;

template <typename T>
inline T add_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(Unsigned<T>(a) + Unsigned<T>(b));
  return a + b;
}

template <typename T>
inline T sub_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(Unsigned<T>(a) - Unsigned<T>(b));
  return a - b;
}

template <typename T>
inline T mul_op(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(Unsigned<T>(a) * Unsigned<T>(b));
  return a * b;
}

}  // namespace mt::cpu
