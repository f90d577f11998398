#pragma once
// TopKV2's order, shared by the kernels of both backends (Note [Pads and top k] in
// kernels/pad_shape.cc): the larger value first, a NaN above every number, and on ties the
// lower index first.
//
//   ranks_before(3.0f, 0, 3.0f, 2);  // true: equal values, lower index

#include <cstdint>
#include <type_traits>

#include "kernels/philox.h"  // MT_HOST_DEVICE

namespace mt::internal {

// Returns whether value `a` at index `ia` comes before value `b` at index `ib` in a top k;
// C is the value's compute type (float for the 2-byte floats).
template <typename C>
MT_HOST_DEVICE inline bool ranks_before(C a, int64_t ia, C b, int64_t ib) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool a_nan = a != a, b_nan = b != b;
    if (a_nan || b_nan) return a_nan && b_nan ? ia < ib : a_nan;
  }
  if (a != b) return a > b;
  return ia < ib;
}

}  // namespace mt::internal
