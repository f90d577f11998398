// The gradient of DotProductAttention (Note [Gradients beside their rows] in grad_fns.h): the
// DotProductAttentionGrad row on the saved o and lse; or, while another tape records on this
// thread (a higher-order gradient) or when a gradient reaches lse, the same formula in
// differentiable ops (Note [Dot-product attention] in kernels/attention_shape.cc), where
// lse's gradient is a term of dS: dS = P (dP - D + dlse), since d lse_i / d s_ij = P_ij.
#include <limits>

#include "kernels/attention.h"
#include "runtime/autodiff/grad_fns.h"
#include "runtime/autodiff/tape.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"
#include "runtime/ops/array_ops.h"
#include "runtime/ops/constant.h"
#include "runtime/ops/ops.h"

namespace mt::internal {
namespace {

// Returns t in `dtype` (t itself when it has it).
Tensor as(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : cast(t, dtype); }

// Swaps axes 1 and 2: (batch, sequence, heads, depth) <-> (batch, heads, sequence, depth).
Tensor swap_heads(const Tensor& t) { return transpose(t, {0, 2, 1, 3}); }

// Returns t (batch, keys, kv_heads, depth) with each kv head repeated for the `group` query
// heads that read it: (batch, keys, kv_heads * group, depth).
Tensor repeat_heads(const Tensor& t, int64_t group) {
  if (group == 1) return t;
  const Shape& s = t.shape();
  const Tensor each = reshape(t, {s.dim(0), s.dim(1), s.dim(2), 1, s.dim(3)});
  return reshape(broadcast_to(each, {s.dim(0), s.dim(1), s.dim(2), group, s.dim(3)}),
                 {s.dim(0), s.dim(1), s.dim(2) * group, s.dim(3)});
}

// Returns g (batch, keys, heads, depth) summed over the query heads of each kv head.
Tensor sum_heads(const Tensor& g, int64_t group) {
  if (group == 1) return g;
  const Shape& s = g.shape();
  return reduce_sum(reshape(g, {s.dim(0), s.dim(1), s.dim(2) / group, group, s.dim(3)}), 3);
}

// dq, dk and dv in differentiable ops, the arithmetic in lse's dtype, heads first.
Grads composite_grad(const GradContext& c) {
  const Tensor &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2];
  const DType u = attention_stats_dtype(q.dtype());
  const int64_t group = q.shape().dim(2) / k.shape().dim(2);
  const Tensor qh = swap_heads(as(q, u)), kh = swap_heads(repeat_heads(as(k, u), group));
  const Tensor vh = swap_heads(repeat_heads(as(v, u), group));
  const Tensor doh = swap_heads(as(c.output_grads[0], u)), oh = swap_heads(as(c.outputs[0], u));
  const Tensor scale = fill({}, c.attrs.scale, u);
  Tensor logits = matmul(qh, kh, false, true) * scale - expand_dims(c.outputs[1], -1);
  if (c.attrs.causal) {  // key j seen from query i when j <= i
    const Tensor seen =
        cast(linalg::band_part(ones({q.shape().dim(1), k.shape().dim(1)}, u), -1, 0), DType::kBool);
    logits = where(seen, logits, fill({}, -std::numeric_limits<double>::infinity(), u));
  }
  const Tensor p = exp(logits);
  Tensor delta = reduce_sum(doh * oh, -1, true);
  if (c.has_grad(1)) delta = delta - expand_dims(as(c.output_grads[1], u), -1);
  const Tensor ds = p * (matmul(doh, vh, false, true) - delta);
  const Tensor dq = swap_heads(matmul(ds, kh) * scale);
  const Tensor dk = sum_heads(swap_heads(matmul(ds, qh, true, false) * scale), group);
  const Tensor dv = sum_heads(swap_heads(matmul(p, doh, true, false)), group);
  return {as(dq, q.dtype()), as(dk, q.dtype()), as(dv, q.dtype())};
}

}  // namespace

template <>
Grads Grad<OpId::kDotProductAttention>::run(const GradContext& c) {
  if (tape_recording_on_thread() || c.has_grad(1)) return composite_grad(c);
  const Tensor* inputs[] = {&c.output_grads[0], &c.inputs[0],  &c.inputs[1],
                            &c.inputs[2],       &c.outputs[0], &c.outputs[1]};
  Tensors out = value_or_throw(execute_all(OpId::kDotProductAttentionGrad, inputs, c.attrs));
  return {std::move(out[0]), std::move(out[1]), std::move(out[2])};
}

}  // namespace mt::internal
