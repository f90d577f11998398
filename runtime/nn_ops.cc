#include "runtime/nn_ops.h"

#include "runtime/error.h"
#include "runtime/execute.h"

namespace mt::nn {
namespace {

Tensor run(OpId op, const Tensor& x) {
  const Tensor* input = &x;
  return internal::value_or_throw(internal::execute(op, absl::MakeConstSpan(&input, 1), {}));
}

}  // namespace

Tensor softmax(const Tensor& logits) { return run(OpId::kSoftmax, logits); }

Tensor log_softmax(const Tensor& logits) { return run(OpId::kLogSoftmax, logits); }

}  // namespace mt::nn
