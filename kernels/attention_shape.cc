// Shape functions of dot-product attention (MT_ATTENTION_OPS).
//
// Note [Dot-product attention]
// DotProductAttention takes q [B, T, H, D], k [B, S, Hk, D] and v [B, S, Hk, Dv] (Keras 3's
// dot_product_attention layout, the one MultiHeadAttention's projections give, so neither
// needs a transpose) and returns o [B, T, H, Dv] and lse [B, H, T]: for query row i of head
// h, with scores s_j = attrs.scale * q_i . k_j over the keys j it sees,
//   o_i = sum_j exp(s_j - lse_i) v_j,   lse_i = log sum_j exp(s_j).
// Query head h reads kv head h / (H / Hk): Hk divides H (grouped-query attention; Hk = H is
// plain multi-head attention). With attrs.causal, query i sees keys j <= i, aligned at the
// top left as Keras's use_causal_mask, its is_causal and torch's is_causal are (with T != S
// too). So every row sees key 0 and no row is fully masked unless there are no keys; a row
// that sees no key (S = 0) gives o = 0 and lse = -inf, and its gradient is zero, which is
// what the composite gives (a softmax over an empty axis, then a product of no terms), on
// every device, never NaN. A row whose every score is -inf (from infinite inputs) is NaN, as
// in the composite; an infinite or NaN input may also reach, through a block's products, keys
// or queries its row or column does not see, and which ones depends on each device's blocks.
// DotProductAttentionGrad takes (do, q, k, v, o, lse) and returns (dq, dk, dv): with P_ij =
// exp(s_ij - lse_i) and D_i = do_i . o_i, dv_j = sum_i P_ij do_i, dS_ij = P_ij (do_i . v_j -
// D_i), dq_i = scale sum_j dS_ij k_j and dk_j = scale sum_i dS_ij q_i (a kv head adds over the
// query heads it serves). q, k, v, o, do and the gradients are any float dtype; lse is
// attention_stats_dtype(q's) (kernels/attention.h): float32 for the 2-byte floats, whose
// arithmetic is float32 throughout, rounded once into o and the gradients. The scale must
// be finite (the API's default is 1 / sqrt(D)) and D and Dv at least 1.
#include <cmath>

#include "kernels/attention.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

// Returns an error unless `t` is rank 4; `what` names it and its axes.
absl::Status check_rank4(OpId op, const char* what, const TensorMeta& t) {
  if (t.shape->rank() == 4) return absl::OkStatus();
  return op_error(op, what, " must have rank 4, got shape ", t.shape->to_string());
}

// Returns an error unless dimension `axis` of a and b agree.
absl::Status check_dim(OpId op, const char* a_name, const Shape& a, const char* b_name,
                       const Shape& b, int axis, const char* dim) {
  if (a.dim(axis) == b.dim(axis)) return absl::OkStatus();
  return op_error(op, a_name, " and ", b_name, " must have the same ", dim, ", got shapes ",
                  a.to_string(), " and ", b.to_string());
}

// Checks the dtypes and shapes of q, k and v and the scale of a call.
absl::Status check_qkv(OpId op, const TensorMeta& q, const TensorMeta& k, const TensorMeta& v,
                       const OpAttrs& attrs) {
  MT_RETURN_IF_ERROR(check_dtype(op, q.dtype));
  MT_RETURN_IF_ERROR(check_same_dtype(op, q.dtype, k.dtype));
  MT_RETURN_IF_ERROR(check_same_dtype(op, q.dtype, v.dtype));
  MT_RETURN_IF_ERROR(check_rank4(op, "q (batch, queries, heads, depth)", q));
  MT_RETURN_IF_ERROR(check_rank4(op, "k (batch, keys, kv_heads, depth)", k));
  MT_RETURN_IF_ERROR(check_rank4(op, "v (batch, keys, kv_heads, value_depth)", v));
  const Shape &qs = *q.shape, &ks = *k.shape, &vs = *v.shape;
  MT_RETURN_IF_ERROR(check_dim(op, "q", qs, "k", ks, 0, "batch"));
  MT_RETURN_IF_ERROR(check_dim(op, "k", ks, "v", vs, 0, "batch"));
  MT_RETURN_IF_ERROR(check_dim(op, "k", ks, "v", vs, 1, "number of keys"));
  MT_RETURN_IF_ERROR(check_dim(op, "k", ks, "v", vs, 2, "number of heads"));
  MT_RETURN_IF_ERROR(check_dim(op, "q", qs, "k", ks, 3, "depth"));
  if (ks.dim(2) == 0 || qs.dim(2) % ks.dim(2) != 0) {
    return op_error(op, "the heads of k and v must divide those of q, got ", ks.dim(2), " and ",
                    qs.dim(2), " (shapes ", qs.to_string(), " and ", ks.to_string(), ")");
  }
  if (qs.dim(3) == 0 || vs.dim(3) == 0) {
    return op_error(op, "q, k and v must have a depth of at least 1, got shapes ", qs.to_string(),
                    ", ", ks.to_string(), " and ", vs.to_string());
  }
  if (!std::isfinite(attrs.scale)) {
    return op_error(op, "scale must be a finite number, got ", attrs.scale);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status infer_attention(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                             OutputMetas* out) {
  const TensorMeta &q = inputs[0], &k = inputs[1], &v = inputs[2];
  MT_RETURN_IF_ERROR(check_qkv(op, q, k, v, attrs));
  const Shape& qs = *q.shape;
  MT_ASSIGN_OR_RETURN(Shape o, Shape::make({qs.dim(0), qs.dim(1), qs.dim(2), v.shape->dim(3)}));
  MT_ASSIGN_OR_RETURN(Shape lse, Shape::make({qs.dim(0), qs.dim(2), qs.dim(1)}));
  out->push_back(OutputMeta{o, q.dtype});
  out->push_back(OutputMeta{lse, attention_stats_dtype(q.dtype)});
  return absl::OkStatus();
}

absl::Status infer_attention_grad(OpId op, absl::Span<const TensorMeta> inputs,
                                  const OpAttrs& attrs, OutputMetas* out) {
  const TensorMeta &d_o = inputs[0], &q = inputs[1], &k = inputs[2], &v = inputs[3];
  const TensorMeta &o = inputs[4], &lse = inputs[5];
  MT_RETURN_IF_ERROR(check_qkv(op, q, k, v, attrs));
  MT_RETURN_IF_ERROR(check_same_dtype(op, q.dtype, d_o.dtype));
  MT_RETURN_IF_ERROR(check_same_dtype(op, q.dtype, o.dtype));
  const Shape& qs = *q.shape;
  MT_ASSIGN_OR_RETURN(Shape want_o,
                      Shape::make({qs.dim(0), qs.dim(1), qs.dim(2), v.shape->dim(3)}));
  for (const auto& [name, t] : {std::pair<const char*, const TensorMeta*>{"do", &d_o}, {"o", &o}}) {
    if (*t->shape != want_o) {
      return op_error(op, name, " must have the output's shape ", want_o.to_string(), ", got ",
                      t->shape->to_string());
    }
  }
  const DType u = attention_stats_dtype(q.dtype);
  if (lse.dtype != u) {
    return op_error(op, "lse must be ", dtype_name(u), " for q of this dtype, got ",
                    dtype_name(lse.dtype));
  }
  MT_ASSIGN_OR_RETURN(Shape want_lse, Shape::make({qs.dim(0), qs.dim(2), qs.dim(1)}));
  if (*lse.shape != want_lse) {
    return op_error(op, "lse must have shape (batch, heads, queries) ", want_lse.to_string(),
                    ", got ", lse.shape->to_string());
  }
  out->push_back(OutputMeta{qs, q.dtype});
  out->push_back(OutputMeta{*k.shape, q.dtype});
  out->push_back(OutputMeta{*v.shape, q.dtype});
  return absl::OkStatus();
}

}  // namespace mt::internal
