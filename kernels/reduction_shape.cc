// Shape functions of the reductions: Sum, Mean and Max.
#include "absl/strings/str_join.h"
#include "kernels/shape_fns.h"

namespace mt::internal {

absl::Status reduction_mask(OpId op, const Shape& input, const OpAttrs& attrs, AxisMask* mask) {
  const int rank = input.rank();
  mask->assign(rank, attrs.reduce_all);
  if (attrs.reduce_all) return absl::OkStatus();
  for (int64_t axis : attrs.axes) {
    if (axis < -rank || axis >= rank) {
      return op_error(op, "axis ", axis, " is out of range for input of shape ", input.to_string(),
                      "; expected an axis in [", -rank, ", ", rank, ")");
    }
    const int64_t dim = axis < 0 ? axis + rank : axis;
    if ((*mask)[dim]) {
      return op_error(op, "axes [", absl::StrJoin(attrs.axes, ", "), "] name dimension ", dim,
                      " twice");
    }
    (*mask)[dim] = true;
  }
  return absl::OkStatus();
}

absl::Status infer_reduction(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                             OutputMetas* out) {
  const TensorMeta& in = inputs[0];
  MT_RETURN_IF_ERROR(check_dtype(op, in.dtype));
  AxisMask mask;
  MT_RETURN_IF_ERROR(reduction_mask(op, *in.shape, attrs, &mask));
  Shape::Dims dims;
  for (int i = 0; i < in.shape->rank(); ++i) {
    if (!mask[i]) {
      dims.push_back(in.shape->dim(i));
    } else if (attrs.keep_dims) {
      dims.push_back(1);
    }
  }
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  out->push_back(OutputMeta{std::move(shape), in.dtype});
  return absl::OkStatus();
}

}  // namespace mt::internal

namespace mt::internal {

absl::Status infer_arg_reduction(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                                 OutputMetas* out) {
  const TensorMeta& in = inputs[0];
  MT_RETURN_IF_ERROR(check_dtype(op, in.dtype));
  if (attrs.dst_dtype != DType::kInt32 && attrs.dst_dtype != DType::kInt64) {
    return op_error(op, "output_type must be int32 or int64, got ", dtype_name(attrs.dst_dtype));
  }
  const int rank = in.shape->rank();
  if (attrs.axis < -rank || attrs.axis >= rank) {
    return op_error(op, "axis ", attrs.axis, " is out of range for input of shape ",
                    in.shape->to_string(), "; expected an axis in [", -rank, ", ", rank, ")");
  }
  const int axis = static_cast<int>(attrs.axis < 0 ? attrs.axis + rank : attrs.axis);
  if (in.shape->dim(axis) == 0) {
    return op_error(op, "reduction axis ", axis, " is empty in shape ", in.shape->to_string());
  }
  Shape::Dims dims;
  for (int i = 0; i < rank; ++i) {
    if (i != axis) dims.push_back(in.shape->dim(i));
  }
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  out->push_back(OutputMeta{std::move(shape), attrs.dst_dtype});
  return absl::OkStatus();
}

// UnsortedSegmentSum(data, segment_ids), attrs.depth segments: the ids' shape is a prefix of
// the data's; the output is (depth,) + the rest of the data's shape.
absl::Status infer_segment_sum(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                               OutputMetas* out) {
  const TensorMeta& data = inputs[0];
  const TensorMeta& ids = inputs[1];
  MT_RETURN_IF_ERROR(check_dtype(op, data.dtype));
  if (ids.dtype != DType::kInt32 && ids.dtype != DType::kInt64) {
    return op_error(op, "segment_ids must be int32 or int64, got ", dtype_name(ids.dtype));
  }
  if (attrs.depth < 0) return op_error(op, "num_segments must be >= 0, got ", attrs.depth);
  bool prefix = ids.shape->rank() <= data.shape->rank();
  for (int d = 0; prefix && d < ids.shape->rank(); ++d) {
    prefix = ids.shape->dim(d) == data.shape->dim(d);
  }
  if (!prefix) {
    return op_error(op, "segment_ids.shape = ", ids.shape->to_string(),
                    " does not prefix data.shape = ", data.shape->to_string());
  }
  Shape::Dims dims = {attrs.depth};
  for (int d = ids.shape->rank(); d < data.shape->rank(); ++d) dims.push_back(data.shape->dim(d));
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  out->push_back(OutputMeta{std::move(shape), data.dtype});
  return absl::OkStatus();
}

}  // namespace mt::internal
