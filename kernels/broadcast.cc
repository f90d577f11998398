#include "kernels/broadcast.h"

#include <algorithm>

namespace mt {
namespace {

// Returns dimension `i` of `s` aligned at the trailing end of a shape of rank `rank`.
int64_t aligned_dim(const Shape& s, int i, int rank) {
  const int offset = rank - s.rank();
  return i < offset ? 1 : s.dim(i - offset);
}

}  // namespace

bool broadcast_dims(const Shape& a, const Shape& b, Shape::Dims* out) {
  const int rank = std::max(a.rank(), b.rank());
  out->resize(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t da = aligned_dim(a, i, rank);
    const int64_t db = aligned_dim(b, i, rank);
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

bool make_broadcast_plan(const Shape& a, const Shape& b, BroadcastPlan* plan) {
  const int rank = std::max(a.rank(), b.rank());
  BroadcastPlan p;
  if (a.num_elements() == 0 || b.num_elements() == 0) {
    // An empty output: nothing to index, and merging the other dimensions could overflow.
    p.rank = 1;
    *plan = p;
    return true;
  }
  bool spans[2][kMaxBroadcastRank] = {};  // whether each operand spans each plan dimension
  for (int i = 0; i < rank; ++i) {
    const int64_t da = aligned_dim(a, i, rank);
    const int64_t db = aligned_dim(b, i, rank);
    const int64_t d = da == 1 ? db : da;
    if (d == 1) continue;  // a size-1 output dimension moves no index
    const bool span_a = da != 1, span_b = db != 1;
    if (p.rank > 0 && spans[0][p.rank - 1] == span_a && spans[1][p.rank - 1] == span_b) {
      p.dims[p.rank - 1] *= d;  // same pattern as the dimension outside it: merge
      continue;
    }
    if (p.rank == kMaxBroadcastRank) return false;
    spans[0][p.rank] = span_a;
    spans[1][p.rank] = span_b;
    p.dims[p.rank++] = d;
  }
  for (int op = 0; op < 2; ++op) {
    int64_t stride = 1;
    for (int k = p.rank - 1; k >= 0; --k) {
      p.strides[op][k] = spans[op][k] ? stride : 0;
      if (spans[op][k]) stride *= p.dims[k];
    }
  }
  *plan = p;
  return true;
}

}  // namespace mt
