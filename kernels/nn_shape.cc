// Shape functions of the neural-network ops: Softmax and LogSoftmax.
#include "kernels/shape_fns.h"

namespace mt::internal {

absl::Status infer_softmax(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                           OutputMetas* out) {
  const TensorMeta& logits = inputs[0];
  MT_RETURN_IF_ERROR(check_dtype(op, logits.dtype));
  if (logits.shape->rank() < 1) {
    return op_error(op, "logits must have >= 1 dimension, got shape ", logits.shape->to_string());
  }
  out->push_back(OutputMeta{*logits.shape, logits.dtype});
  return absl::OkStatus();
}

}  // namespace mt::internal
