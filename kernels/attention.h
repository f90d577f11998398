#pragma once
// The layout the dot-product attention kernels read (Note [Dot-product attention] in
// kernels/attention_shape.cc): q [batch, queries, heads, depth], k [batch, keys, kv_heads,
// depth], v [batch, keys, kv_heads, value_depth], o like q with value_depth, and each query
// row's log-sum-exp lse [batch, heads, queries].
//
//   const AttentionLayout l = attention_layout(*q.shape, *k.shape, *v.shape);
//   // q row (b, i, h) starts at ((b * l.queries + i) * l.heads + h) * l.depth;
//   // it attends to the rows of kv head h / l.group

#include <cstdint>

#include "core/dtype.h"
#include "core/shape.h"

namespace mt::internal {

struct AttentionLayout {
  int64_t batch, queries, keys, heads, kv_heads, depth, value_depth;
  int64_t group;  // the query heads that share one kv head (1 without grouping)
};

// Returns the layout of a validated call on q, k and v.
inline AttentionLayout attention_layout(const Shape& q, const Shape& k, const Shape& v) {
  const int64_t group = k.dim(2) > 0 ? q.dim(2) / k.dim(2) : 1;
  return {q.dim(0), q.dim(1), k.dim(1), q.dim(2), k.dim(2), q.dim(3), v.dim(3), group};
}

// Returns whether query i may see key j: every key without `causal`, else keys j <= i
// (aligned at the top left, as Keras's causal mask and torch's is_causal).
constexpr bool attention_visible(bool causal, int64_t i, int64_t j) { return !causal || j <= i; }

// The dtype of lse for q's dtype: float64 for float64, float32 for the others (the 2-byte
// floats compute in float32).
constexpr DType attention_stats_dtype(DType q) {
  return q == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
}

}  // namespace mt::internal
