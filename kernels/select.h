#pragma once
// SelectV2 (mt::where): out[i] = condition[i] ? x[i] : y[i], the three inputs broadcast
// together as NumPy does. SelectPlan tells a kernel where each operand's element for an
// output element lives; like BroadcastPlan (broadcast.h) it is plain data, so a CUDA kernel
// takes it by value, with the output's size-1 dimensions dropped and neighbouring
// dimensions merged where every operand allows.
//
//   SelectPlan plan;
//   make_select_plan(cond_shape, x_shape, y_shape, out_shape, &plan);
//   // operand k of output element (i0, ..., ir) is at sum_j i_j * plan.strides[k][j]

#include <cstdint>

#include "core/shape.h"
#include "kernels/broadcast.h"

namespace mt {

struct SelectPlan {
  int rank = 0;                                // 0 means a single element
  int64_t dims[kMaxBroadcastRank] = {};        // output dimensions, outermost first
  int64_t strides[3][kMaxBroadcastRank] = {};  // element strides of condition, x, y
};

// Fills `plan` for the broadcast of the three shapes to `out` and returns true, or returns
// false when more than kMaxBroadcastRank dimensions remain after merging.
bool make_select_plan(const Shape& condition, const Shape& x, const Shape& y, const Shape& out,
                      SelectPlan* plan);

}  // namespace mt
