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

absl::StatusOr<OutputMeta> infer_data_op(OpId op, absl::Span<const TensorMeta> inputs,
                                         const OpAttrs& attrs) {
  MT_RETURN_IF_ERROR(check_arity(op, inputs.size(), 1));
  const TensorMeta& in = inputs[0];
  MT_RETURN_IF_ERROR(check_dtype(op, in.dtype));
  if (op == OpId::kFill) MT_RETURN_IF_ERROR(check_fill_value(in.dtype, attrs.value));
  if (op != OpId::kCast) return OutputMeta{*in.shape, in.dtype};
  const int dst = static_cast<int>(attrs.dst_dtype);
  if (dst >= kNumDTypes) {
    return op_error(op, "invalid destination dtype ", dst);
  }
  return OutputMeta{*in.shape, attrs.dst_dtype};
}

}  // namespace mt::internal
