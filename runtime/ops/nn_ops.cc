#include "runtime/ops/nn_ops.h"

#include "absl/strings/str_cat.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"
#include "runtime/ops/array_ops.h"

namespace mt::nn {
namespace {

Tensor run(OpId op, const Tensor& x) {
  const Tensor* input = &x;
  return internal::value_or_throw(internal::execute(op, absl::MakeConstSpan(&input, 1), {}));
}

}  // namespace

Tensor softmax(const Tensor& logits) { return run(OpId::kSoftmax, logits); }

Tensor log_softmax(const Tensor& logits) { return run(OpId::kLogSoftmax, logits); }

Tensor gelu(const Tensor& features, bool approximate) {
  OpAttrs attrs;
  attrs.approximate = approximate;
  const Tensor* input = &features;
  return internal::value_or_throw(
      internal::execute(OpId::kGelu, absl::MakeConstSpan(&input, 1), attrs));
}

Tensor bias_add(const Tensor& value, const Tensor& bias) {
  const Tensor* inputs[] = {&value, &bias};
  return internal::value_or_throw(internal::execute(OpId::kBiasAdd, inputs, {}));
}

std::pair<Tensor, Tensor> sparse_softmax_cross_entropy_with_logits_and_grad(const Tensor& labels,
                                                                            const Tensor& logits) {
  const Tensor* inputs[] = {&logits, &labels};
  internal::Tensors out = internal::value_or_throw(
      internal::execute_all(OpId::kSparseSoftmaxCrossEntropyWithLogits, inputs, {}));
  return {std::move(out[0]), std::move(out[1])};
}

Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits) {
  constexpr OpId kOp = OpId::kSparseSoftmaxCrossEntropyWithLogits;
  if (labels.impl() == nullptr || logits.impl() == nullptr) {
    return sparse_softmax_cross_entropy_with_logits_and_grad(labels, logits).first;
  }
  // Rank-2 logits and rank-1 labels as the op takes them, then the loss in labels' shape.
  const Shape& ls = labels.shape();
  const Shape& xs = logits.shape();
  bool match = xs.rank() == ls.rank() + 1;
  for (int d = 0; match && d < ls.rank(); ++d) match = ls.dim(d) == xs.dim(d);
  if (!match) {
    internal::throw_if_error(absl::InvalidArgumentError(
        absl::StrCat("[", op_name(kOp), "] labels of shape ", ls.to_string(),
                     " need logits of that shape plus a class dimension, got ", xs.to_string())));
  }
  if (ls.rank() == 1)
    return sparse_softmax_cross_entropy_with_logits_and_grad(labels, logits).first;
  const int64_t classes = xs.dim(xs.rank() - 1), rows = ls.num_elements();
  const Tensor flat = sparse_softmax_cross_entropy_with_logits_and_grad(
                          reshape(labels, {rows}), reshape(logits, {rows, classes}))
                          .first;
  return reshape(flat, Ints(ls.dims().begin(), ls.dims().end()));
}

}  // namespace mt::nn
