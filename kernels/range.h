#pragma once
// Range's length, shared by its wrapper (which sizes the output) and its shape function
// (which checks the size it was given), with TensorFlow's errors.
//
//   range_size(DType::kInt32, Scalar{0, 0}, Scalar{0, 5}, Scalar{0, 2});  // 3: 0, 2, 4

#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "kernels/op_attrs.h"

namespace mt::internal {

// Returns how many elements start, start + delta, ... lie before `limit`: the `i` fields for
// the integer dtypes, `f` for the others. InvalidArgument for a zero delta, a delta of the
// wrong sign for limit, or more than int64 elements.
absl::StatusOr<int64_t> range_size(DType dtype, const Scalar& start, const Scalar& limit,
                                   const Scalar& delta);

// Returns `v` rounded to float, an infinity past float's largest finite value (where a plain
// conversion is undefined behaviour).
inline float narrow_to_float(double v) {
  constexpr double kMax = std::numeric_limits<float>::max();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (v > kMax) return kInf;
  if (v < -kMax) return -kInf;
  return static_cast<float>(v);
}

// Returns `v` rounded to T, as a double (through float for the 2-byte types): what a Range
// element of dtype T holds, on every backend.
template <typename T>
double round_to_dtype(double v) {
  if constexpr (dtype_kind(dtype_of<T>()) == DTypeKind::kHalf) {
    return static_cast<double>(static_cast<float>(T(narrow_to_float(v))));
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<double>(narrow_to_float(v));
  } else {
    return v;
  }
}

}  // namespace mt::internal
