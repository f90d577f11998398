// Shape functions of layer normalisation (MT_LAYER_NORM_OPS).
//
// Note [Layer normalisation]
// LayerNorm normalises each row of x over its trailing axes, from attrs.axis (negative from
// the end; -1 is the last axis alone) to the last, as Keras's LayerNormalization does:
// with mean and biased variance var over a row's cols elements, inv_std = 1 / sqrt(var +
// epsilon) and y = (x - mean) * inv_std * gamma + beta, gamma and beta of the normalised
// axes' shape. It returns (y, mean, inv_std), the statistics of the leading axes' shape.
// AddLayerNorm takes (x, residual, gamma, beta), normalises sum = x + residual (rounded to
// x's dtype, as the AddV2 row gives it) and returns (y, sum, mean, inv_std): the residual
// stream's add and the next layer norm in one pass; its gradient is LayerNorm's at sum,
// plus the gradient reaching sum, for both x and residual.
// LayerNormGrad takes (dy, x, gamma, mean, inv_std) and returns, with xhat = (x - mean) *
// inv_std and g = dy * gamma, dx = inv_std * (g - mean(g) - xhat * mean(g * xhat)) (means
// over the row), dgamma = sum(dy * xhat) and dbeta = sum(dy) over the rows. x, y, dy and dx
// are any float dtype; gamma, beta, the statistics and dgamma, dbeta are
// layer_norm_stats_dtype(x's) (kernels/layer_norm.h): float32 for the 2-byte floats, whose
// arithmetic is float32 throughout, rounded once into y and dx. The statistics are taken in
// two passes (the mean, then the squared deviations from it). epsilon must be finite and
// >= 0, and each row must have an element.
#include <cmath>

#include "kernels/layer_norm.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

// Checks attrs.axis and epsilon against x and returns the first normalised axis.
absl::StatusOr<int> check_norm_attrs(OpId op, const Shape& x, const OpAttrs& attrs) {
  if (!std::isfinite(attrs.epsilon) || attrs.epsilon < 0) {
    return op_error(op, "epsilon must be a finite number >= 0, got ", attrs.epsilon);
  }
  if (x.rank() < 1) return op_error(op, "x must have >= 1 dimension, got shape ", x.to_string());
  const int begin = layer_norm_begin_axis(x.rank(), attrs.axis);
  if (begin < 0) {
    return op_error(op, "axis ", attrs.axis, " is out of range for x of shape ", x.to_string(),
                    " (rank ", x.rank(), ")");
  }
  if (layer_norm_layout(x, attrs.axis).cols == 0) {
    return op_error(op, "the normalised axes of x must have elements, got shape ", x.to_string(),
                    " with axis ", attrs.axis);
  }
  return begin;
}

// Returns the shape of dims [begin, end) of x.
Shape sub_shape(const Shape& x, int begin, int end) {
  absl::InlinedVector<int64_t, 6> dims;
  for (int i = begin; i < end; ++i) dims.push_back(x.dim(i));
  return Shape::make(dims).value();
}

// Checks that `t` (gamma, beta, mean or inv_std) has `dtype` and `shape`.
absl::Status check_param(OpId op, const char* what, const TensorMeta& t, DType dtype,
                         const Shape& shape, const char* of) {
  if (t.dtype != dtype) {
    return op_error(op, what, " must be ", dtype_name(dtype), " for x of this dtype, got ",
                    dtype_name(t.dtype));
  }
  if (*t.shape == shape) return absl::OkStatus();
  return op_error(op, what, " must have the shape of the ", of, " axes of x, ", shape.to_string(),
                  ", got ", t.shape->to_string());
}

// Checks x, gamma and beta of a LayerNorm or AddLayerNorm call and appends y, then
// `extra` outputs of x's shape and dtype (AddLayerNorm's sum), then mean and inv_std.
absl::Status infer_norm(OpId op, const TensorMeta& x, const TensorMeta& gamma,
                        const TensorMeta& beta, const OpAttrs& attrs, int extra, OutputMetas* out) {
  MT_RETURN_IF_ERROR(check_dtype(op, x.dtype));
  MT_ASSIGN_OR_RETURN(const int begin, check_norm_attrs(op, *x.shape, attrs));
  const DType u = layer_norm_stats_dtype(x.dtype);
  const Shape params = sub_shape(*x.shape, begin, x.shape->rank());
  MT_RETURN_IF_ERROR(check_param(op, "gamma", gamma, u, params, "normalised"));
  MT_RETURN_IF_ERROR(check_param(op, "beta", beta, u, params, "normalised"));
  const Shape stats = sub_shape(*x.shape, 0, begin);
  for (int i = 0; i <= extra; ++i) out->push_back(OutputMeta{*x.shape, x.dtype});
  out->push_back(OutputMeta{stats, u});
  out->push_back(OutputMeta{stats, u});
  return absl::OkStatus();
}

}  // namespace

absl::Status infer_layer_norm(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                              OutputMetas* out) {
  return infer_norm(op, inputs[0], inputs[1], inputs[2], attrs, 0, out);
}

absl::Status infer_add_layer_norm(OpId op, absl::Span<const TensorMeta> inputs,
                                  const OpAttrs& attrs, OutputMetas* out) {
  const TensorMeta &x = inputs[0], &residual = inputs[1];
  MT_RETURN_IF_ERROR(check_dtype(op, x.dtype));
  MT_RETURN_IF_ERROR(check_same_dtype(op, x.dtype, residual.dtype));
  if (*x.shape != *residual.shape) {
    return op_error(op, "x and residual must have the same shape, got ", x.shape->to_string(),
                    " and ", residual.shape->to_string());
  }
  return infer_norm(op, x, inputs[2], inputs[3], attrs, 1, out);
}

absl::Status infer_layer_norm_grad(OpId op, absl::Span<const TensorMeta> inputs,
                                   const OpAttrs& attrs, OutputMetas* out) {
  const TensorMeta &dy = inputs[0], &x = inputs[1];
  MT_RETURN_IF_ERROR(check_dtype(op, dy.dtype));
  MT_RETURN_IF_ERROR(check_same_dtype(op, dy.dtype, x.dtype));
  if (*dy.shape != *x.shape) {
    return op_error(op, "x and dy must have the same shape, got ", x.shape->to_string(), " and ",
                    dy.shape->to_string());
  }
  MT_ASSIGN_OR_RETURN(const int begin, check_norm_attrs(op, *x.shape, attrs));
  const DType u = layer_norm_stats_dtype(x.dtype);
  const Shape params = sub_shape(*x.shape, begin, x.shape->rank());
  const Shape stats = sub_shape(*x.shape, 0, begin);
  MT_RETURN_IF_ERROR(check_param(op, "gamma", inputs[2], u, params, "normalised"));
  MT_RETURN_IF_ERROR(check_param(op, "mean", inputs[3], u, stats, "leading"));
  MT_RETURN_IF_ERROR(check_param(op, "inv_std", inputs[4], u, stats, "leading"));
  out->push_back(OutputMeta{*x.shape, x.dtype});
  out->push_back(OutputMeta{params, u});
  out->push_back(OutputMeta{params, u});
  return absl::OkStatus();
}

}  // namespace mt::internal
