// Shape functions of the arithmetic ops: MatMul, AddN, the broadcasting binary ops and
// comparisons (MT_BINARY_OPS), the unary ops (MT_UNARY_OPS) and ClipByValue.
#include "kernels/broadcast.h"
#include "kernels/select.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

// Returns how MatMul's transposes read in an error message: "", " with transpose_a", ...
const char* transpose_note(const OpAttrs& attrs) {
  if (attrs.transpose_a && attrs.transpose_b) return " with transpose_a and transpose_b";
  if (attrs.transpose_a) return " with transpose_a";
  if (attrs.transpose_b) return " with transpose_b";
  return "";
}

// The unequal-shape half of infer_binary: NumPy broadcasting.
absl::StatusOr<Shape> infer_broadcast(OpId op, const TensorMeta& a, const TensorMeta& b) {
  Shape::Dims dims;
  if (!broadcast_dims(*a.shape, *b.shape, &dims)) {
    return op_error(op, "shapes cannot be broadcast: ", a.shape->to_string(), " vs ",
                    b.shape->to_string());
  }
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  BroadcastPlan plan;
  if (shape.rank() > kMaxBroadcastRank && !make_broadcast_plan(*a.shape, *b.shape, &plan)) {
    return op_error(op, "broadcasting ", a.shape->to_string(), " with ", b.shape->to_string(),
                    " needs more than ", kMaxBroadcastRank,
                    " dimensions after merging, which is not supported");
  }
  return shape;
}

}  // namespace

absl::Status infer_matmul(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                          OutputMetas* out) {
  const TensorMeta& a = inputs[0];
  const TensorMeta& b = inputs[1];
  MT_RETURN_IF_ERROR(check_same_dtype(op, a.dtype, b.dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, a.dtype));
  if (a.shape->rank() != 2 || b.shape->rank() != 2) {
    return op_error(op, "expects rank-2 inputs, got shapes ", a.shape->to_string(), " and ",
                    b.shape->to_string());
  }
  const int64_t m = a.shape->dim(attrs.transpose_a ? 1 : 0);
  const int64_t ka = a.shape->dim(attrs.transpose_a ? 0 : 1);
  const int64_t kb = b.shape->dim(attrs.transpose_b ? 1 : 0);
  const int64_t n = b.shape->dim(attrs.transpose_b ? 0 : 1);
  if (ka != kb) {
    return op_error(op, "inner dimensions differ: ", a.shape->to_string(), " vs ",
                    b.shape->to_string(), transpose_note(attrs));
  }
  const int64_t dims[2] = {m, n};
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  out->push_back(OutputMeta{std::move(shape), a.dtype});
  return absl::OkStatus();
}

absl::Status infer_add_n(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                         OutputMetas* out) {
  if (inputs.empty()) return op_error(op, "expects at least one input");
  const TensorMeta& first = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].dtype != first.dtype) {
      return op_error(op, "dtypes differ: input 0 is ", dtype_name(first.dtype), ", input ", i,
                      " is ", dtype_name(inputs[i].dtype));
    }
    if (*inputs[i].shape != *first.shape) {
      return op_error(op, "shapes differ: input 0 has ", first.shape->to_string(), ", input ", i,
                      " has ", inputs[i].shape->to_string());
    }
  }
  MT_RETURN_IF_ERROR(check_dtype(op, first.dtype));
  out->push_back(OutputMeta{*first.shape, first.dtype});
  return absl::OkStatus();
}

namespace {

// The broadcasting binary ops, with outputs of `out_dtype`.
absl::Status infer_broadcasting(OpId op, absl::Span<const TensorMeta> inputs, DType out_dtype,
                                OutputMetas* out) {
  const TensorMeta& a = inputs[0];
  const TensorMeta& b = inputs[1];
  MT_RETURN_IF_ERROR(check_same_dtype(op, a.dtype, b.dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, a.dtype));
  if (__builtin_expect(*a.shape == *b.shape, 1)) {
    out->push_back(OutputMeta{*a.shape, out_dtype});
    return absl::OkStatus();
  }
  MT_ASSIGN_OR_RETURN(Shape shape, infer_broadcast(op, a, b));
  out->push_back(OutputMeta{std::move(shape), out_dtype});
  return absl::OkStatus();
}

}  // namespace

absl::Status infer_binary(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                          OutputMetas* out) {
  return infer_broadcasting(op, inputs, inputs[0].dtype, out);
}

absl::Status infer_comparison(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                              OutputMetas* out) {
  return infer_broadcasting(op, inputs, DType::kBool, out);
}

absl::Status infer_unary(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                         OutputMetas* out) {
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  out->push_back(OutputMeta{*inputs[0].shape, inputs[0].dtype});
  return absl::OkStatus();
}

// ClipByValue (t, clip_value_min, clip_value_max): one dtype; each bound broadcasts to t's
// shape without growing it (a scalar, t's shape, or any shape NumPy broadcasts into it).
absl::Status infer_clip_by_value(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                                 OutputMetas* out) {
  const Shape& t = *inputs[0].shape;
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  MT_RETURN_IF_ERROR(check_same_dtype(op, inputs[0].dtype, inputs[1].dtype));
  MT_RETURN_IF_ERROR(check_same_dtype(op, inputs[0].dtype, inputs[2].dtype));
  for (int i = 1; i < 3; ++i) {
    Shape::Dims dims;
    if (!broadcast_dims(t, *inputs[i].shape, &dims) || dims != t.dims()) {
      return op_error(op,
                      "clip_value_min and clip_value_max must broadcast to the shape of t "
                      "without growing it. t shape: ",
                      t.to_list_string(),
                      " clip_value_min shape: ", inputs[1].shape->to_list_string(),
                      " clip_value_max shape: ", inputs[2].shape->to_list_string());
    }
  }
  SelectPlan plan;
  if (!make_select_plan(t, *inputs[1].shape, *inputs[2].shape, t, &plan)) {
    return op_error(op, "broadcasting ", inputs[1].shape->to_string(), " and ",
                    inputs[2].shape->to_string(), " to ", t.to_string(), " needs more than ",
                    kMaxBroadcastRank, " dimensions after merging, which is not supported");
  }
  out->push_back(OutputMeta{t, inputs[0].dtype});
  return absl::OkStatus();
}

}  // namespace mt::internal
