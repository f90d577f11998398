#include "runtime/ops/attention_ops.h"

#include <cmath>
#include <vector>

#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

namespace mt {

OpAttrs internal::attention_attrs(const Tensor& q, const nn::DotProductAttentionOptions& options) {
  OpAttrs attrs;
  attrs.causal = options.causal;
  attrs.scale = 1;
  if (options.scale.has_value()) {
    attrs.scale = *options.scale;
  } else if (q.shape().rank() == 4 && q.shape().dim(3) > 0) {
    attrs.scale = 1 / std::sqrt(static_cast<double>(q.shape().dim(3)));
  }
  return attrs;
}

namespace nn {
namespace {

// Every output of `op`, in a vector (GCC's -Warray-bounds misreads an InlinedVector indexed
// past its inline size).
std::vector<Tensor> outputs(OpId op, absl::Span<const Tensor* const> inputs, const OpAttrs& attrs) {
  const internal::Tensors out = internal::value_or_throw(internal::execute_all(op, inputs, attrs));
  return std::vector<Tensor>(out.begin(), out.end());
}

}  // namespace

DotProductAttentionResult dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                const DotProductAttentionOptions& options) {
  const Tensor* inputs[] = {&q, &k, &v};
  std::vector<Tensor> out =
      outputs(OpId::kDotProductAttention, inputs, internal::attention_attrs(q, options));
  return {std::move(out[0]), std::move(out[1])};
}

DotProductAttentionGradResult dot_product_attention_grad(
    const Tensor& d_o, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
    const Tensor& lse, const DotProductAttentionOptions& options) {
  const Tensor* inputs[] = {&d_o, &q, &k, &v, &o, &lse};
  std::vector<Tensor> out =
      outputs(OpId::kDotProductAttentionGrad, inputs, internal::attention_attrs(q, options));
  return {std::move(out[0]), std::move(out[1]), std::move(out[2])};
}

}  // namespace nn
}  // namespace mt
