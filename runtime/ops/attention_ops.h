#pragma once
// Dot-product attention (the DotProductAttention and DotProductAttentionGrad rows; Note
// [Dot-product attention] in kernels/attention_shape.cc): softmax(scale * q k^T) v for each
// query head, fused, in Keras 3's layout (batch, sequence, heads, depth).
//
//   nn::DotProductAttentionResult r = nn::dot_product_attention(q, k, v, {.causal = true});
//   r.o;    // (batch, queries, heads, value_depth)
//   r.lse;  // (batch, heads, queries): each row's log-sum-exp of its scores, float32

#include <optional>

#include "kernels/op_attrs.h"
#include "runtime/eager/tensor.h"

namespace mt::nn {

// DotProductAttention's attributes.
struct DotProductAttentionOptions {
  // The factor of q . k; none: 1 / sqrt(depth), Keras's and TensorFlow's default.
  std::optional<double> scale;
  // Whether query i sees only keys j <= i (top-left aligned, as Keras's use_causal_mask).
  bool causal = false;
};

// The outputs of DotProductAttention: o, and each query row's log-sum-exp of its scores
// (float32; float64 for float64 inputs), which the gradient reads.
struct DotProductAttentionResult {
  Tensor o, lse;
};

// Returns the attention of q [batch, queries, heads, depth] over k [batch, keys, kv_heads,
// depth] and v [batch, keys, kv_heads, value_depth], one float dtype; kv_heads divides heads,
// query head h reading kv head h / (heads / kv_heads). Differentiable in q, k and v (and
// through lse). Throws InvalidArgument for bad shapes or dtypes or a scale not finite.
DotProductAttentionResult dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                const DotProductAttentionOptions& options = {});

// DotProductAttentionGrad's outputs: the gradients of q, k and v.
struct DotProductAttentionGradResult {
  Tensor dq, dk, dv;
};

// Returns the gradient of dot_product_attention's o given d_o, its q, k and v and its o and
// lse, with the forward call's options.
DotProductAttentionGradResult dot_product_attention_grad(
    const Tensor& d_o, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
    const Tensor& lse, const DotProductAttentionOptions& options = {});

}  // namespace mt::nn

namespace mt::internal {
// The OpAttrs of a call on q with these options (the default scale from q's last dimension).
OpAttrs attention_attrs(const Tensor& q, const nn::DotProductAttentionOptions& options);
}  // namespace mt::internal
