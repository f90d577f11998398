// Shape functions of the data ops: _EagerConst, Fill, Identity and Cast.
#include <limits>

#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

// Returns an error when Fill's value does not fit its integer dtype.
absl::Status check_fill_value(DType dtype, const Scalar& value) {
  if (dtype != DType::kInt32) return absl::OkStatus();
  if (value.i >= std::numeric_limits<int32_t>::min() &&
      value.i <= std::numeric_limits<int32_t>::max()) {
    return absl::OkStatus();
  }
  return op_error(OpId::kFill, "value ", value.i, " is out of range for int32");
}

}  // namespace

absl::Status infer_data_op(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                           OutputMetas* out) {
  const TensorMeta& in = inputs[0];
  MT_RETURN_IF_ERROR(check_dtype(op, in.dtype));
  if (op == OpId::kFill) MT_RETURN_IF_ERROR(check_fill_value(in.dtype, attrs.value));
  if (op != OpId::kCast) {
    out->push_back(OutputMeta{*in.shape, in.dtype});
    return absl::OkStatus();
  }
  const int dst = static_cast<int>(attrs.dst_dtype);
  if (dst >= kNumDTypes) {
    return op_error(op, "invalid destination dtype ", dst);
  }
  out->push_back(OutputMeta{*in.shape, attrs.dst_dtype});
  return absl::OkStatus();
}

// The assignments to a variable: the value has the variable's dtype and shape; no output.
absl::Status infer_assign(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                          OutputMetas*) {
  const TensorMeta& var = inputs[0];
  const TensorMeta& value = inputs[1];
  MT_RETURN_IF_ERROR(check_same_dtype(op, var.dtype, value.dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, var.dtype));
  if (*var.shape != *value.shape) {
    return op_error(op, "Trying to assign to variable with tensor with wrong shape. Expected ",
                    var.shape->to_string(), " got ", value.shape->to_string());
  }
  return absl::OkStatus();
}

}  // namespace mt::internal
