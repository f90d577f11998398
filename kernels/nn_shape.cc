// Shape functions of the neural-network ops: Softmax, LogSoftmax, BiasAdd and
// SparseSoftmaxCrossEntropyWithLogits.
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

absl::Status infer_bias_add(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                            OutputMetas* out) {
  const TensorMeta& value = inputs[0];
  const TensorMeta& bias = inputs[1];
  MT_RETURN_IF_ERROR(check_same_dtype(op, value.dtype, bias.dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, value.dtype));
  if (value.shape->rank() < 2) {
    return op_error(op, "value must have >= 2 dimensions, got shape ", value.shape->to_string());
  }
  if (bias.shape->rank() != 1) {
    return op_error(op, "bias must be 1-D, got shape ", bias.shape->to_string());
  }
  const int64_t channels = value.shape->dim(value.shape->rank() - 1);
  if (bias.shape->dim(0) != channels) {
    return op_error(op, "bias has ", bias.shape->dim(0), " elements but the last dimension of ",
                    value.shape->to_string(), " is ", channels);
  }
  out->push_back(OutputMeta{*value.shape, value.dtype});
  return absl::OkStatus();
}

absl::Status infer_sparse_xent(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                               OutputMetas* out) {
  const TensorMeta& logits = inputs[0];
  const TensorMeta& labels = inputs[1];
  MT_RETURN_IF_ERROR(check_dtype(op, logits.dtype));
  if (labels.dtype != DType::kInt32 && labels.dtype != DType::kInt64) {
    return op_error(op, "labels must be int32 or int64, got ", dtype_name(labels.dtype));
  }
  if (logits.shape->rank() != 2) {
    return op_error(op, "logits must be 2-D [batch, classes], got shape ",
                    logits.shape->to_string());
  }
  if (labels.shape->rank() != 1 || labels.shape->dim(0) != logits.shape->dim(0)) {
    return op_error(op, "labels must be 1-D with one label per row of logits, got shapes ",
                    labels.shape->to_string(), " and ", logits.shape->to_string());
  }
  if (logits.shape->dim(1) == 0) {
    return op_error(op, "logits must have at least one class, got shape ",
                    logits.shape->to_string());
  }
  out->push_back(OutputMeta{*labels.shape, logits.dtype});  // the loss
  out->push_back(OutputMeta{*logits.shape, logits.dtype});  // its gradient
  return absl::OkStatus();
}

}  // namespace mt::internal
