#pragma once
// NumPy broadcasting for binary ops: the output shape of two operands, and a plan that
// tells a kernel where each operand's element for an output element lives.
//
// Shapes are aligned at their trailing dimensions; each pair of dimensions must be equal
// or contain a 1, and the output takes the larger. (2, 3) with (3,) gives (2, 3); (4, 1)
// with (1, 5) gives (4, 5); (2, 3) with (4,) cannot be broadcast.
//
// The plan is plain data (fixed arrays, no pointers) so that a CUDA kernel can take it by
// value. It is coalesced: output dimensions of size 1 are dropped and neighbouring
// dimensions that every operand either spans or broadcasts are merged, so (8, 4, 5) plus
// (4, 5) becomes dims {8, 20} with strides {0, 1} for the second operand. After
// coalescing, the innermost stride of each operand is 1 (spans it) or 0 (broadcasts it).
//
//   Shape::Dims out;
//   if (!broadcast_dims(a, b, &out)) return error;
//   BroadcastPlan plan;
//   if (!make_broadcast_plan(a, b, &plan)) return error;   // more than 8 dims remain

#include <cstdint>

#include "core/shape.h"

namespace mt {

// The most dimensions a plan holds after coalescing (as TensorFlow's BCast kernels).
inline constexpr int kMaxBroadcastRank = 8;

// An output with no element gets rank 1 and dims[0] == 0: nothing is indexed (the callers
// return before), and the dimensions beside its 0 are never multiplied.
struct BroadcastPlan {
  int rank = 0;                                // 0 means a single element
  int64_t dims[kMaxBroadcastRank] = {};        // output dimensions, outermost first
  int64_t strides[2][kMaxBroadcastRank] = {};  // element strides of each operand; 0 broadcasts
};

// Writes the broadcast of `a` and `b` to `out` and returns true, or returns false when a
// pair of dimensions is neither equal nor contains a 1. Allocates nothing up to rank 6.
bool broadcast_dims(const Shape& a, const Shape& b, Shape::Dims* out);

// Fills `plan` for operands `a` and `b` and returns true, or returns false when more than
// kMaxBroadcastRank dimensions remain after coalescing. Requires broadcastable shapes.
bool make_broadcast_plan(const Shape& a, const Shape& b, BroadcastPlan* plan);

}  // namespace mt
