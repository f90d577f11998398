// Shape functions of batch normalisation (MT_BATCH_NORM_OPS).
//
// Note [Batch normalisation]
// FusedBatchNormV3 normalises each channel of a 4-D x (NHWC, or NCHW with
// attrs.channels_first) as TensorFlow's op does: y = scale * (x - m) / sqrt(v + epsilon) +
// offset. Training (attrs.is_training), m and v are the batch's mean and biased variance
// over the channel's count = N * H * W elements, returned as reserve_space_1 and
// reserve_space_2; batch_mean and batch_variance are the running statistics
// (1 - f) * mean + f * m and (1 - f) * variance + f * v * count / max(count - 1, 1) with f =
// attrs.exponential_avg_factor (mean and variance may be empty when f is 1). In inference
// m and v are the given mean and variance, returned unchanged in all four places.
// FusedBatchNormGradV3 takes (dy, x, scale, reserve_space_1, reserve_space_2) and returns,
// with r = 1 / sqrt(reserve_space_2 + epsilon) and xhat = (x - reserve_space_1) * r,
// offset_backprop = sum(dy), scale_backprop = sum(dy * xhat) and x_backprop =
// scale * r * (dy - (offset_backprop + xhat * scale_backprop) / count) in training,
// scale * r * dy in inference. x, y, dy and dx are any float dtype; the statistics are
// batch_norm_stats_dtype(x's) (kernels/batch_norm.h), float32 for the 2-byte floats.
#include "kernels/batch_norm.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

absl::Status check_rank4(OpId op, const char* what, const Shape& shape) {
  if (shape.rank() == 4) return absl::OkStatus();
  return op_error(op, what, " must be 4-dimensional, got shape ", shape.to_string());
}

// Checks a per-channel input: its dtype, rank 1 and `channels` elements (`when`, if set,
// starts the message of a wrong count).
absl::Status check_channel_input(OpId op, const char* what, const TensorMeta& t, DType dtype,
                                 int64_t channels, const char* when = nullptr) {
  if (t.dtype != dtype) {
    return op_error(op, what, " must be ", dtype_name(dtype), ", got ", dtype_name(t.dtype));
  }
  if (t.shape->rank() != 1) {
    return op_error(op, what, " must be 1-dimensional, got shape ", t.shape->to_string());
  }
  if (t.shape->dim(0) == channels) return absl::OkStatus();
  return op_error(op, when == nullptr ? "" : when, what,
                  " must have the same number of elements as the channels of x, got ",
                  t.shape->dim(0), " and ", channels);
}

}  // namespace

absl::Status infer_fused_batch_norm(OpId op, absl::Span<const TensorMeta> inputs,
                                    const OpAttrs& attrs, OutputMetas* out) {
  const TensorMeta& x = inputs[0];
  MT_RETURN_IF_ERROR(check_dtype(op, x.dtype));
  MT_RETURN_IF_ERROR(check_rank4(op, "x", *x.shape));
  const DType u = batch_norm_stats_dtype(x.dtype);
  const int64_t channels = x.shape->dim(attrs.channels_first ? 1 : 3);
  MT_RETURN_IF_ERROR(check_channel_input(op, "scale", inputs[1], u, channels));
  MT_RETURN_IF_ERROR(check_channel_input(op, "offset", inputs[2], u, channels));
  // Training with a factor of 1 reads neither the mean nor the variance: they may be empty.
  const bool reads_stats = !attrs.is_training || attrs.exponential_avg_factor != 1;
  const char* when =
      attrs.is_training ? "When exponential_avg_factor != 1, " : "When is_training=false, ";
  for (int i : {3, 4}) {
    const char* what = i == 3 ? "mean" : "variance";
    const bool empty = inputs[i].shape->rank() == 1 && inputs[i].shape->dim(0) == 0;
    if (!reads_stats && empty && inputs[i].dtype == u) continue;
    MT_RETURN_IF_ERROR(check_channel_input(op, what, inputs[i], u, channels, when));
  }
  const Shape stats = Shape::make({channels}).value();
  out->push_back(OutputMeta{*x.shape, x.dtype});
  for (int i = 0; i < 4; ++i) out->push_back(OutputMeta{stats, u});
  return absl::OkStatus();
}

absl::Status infer_fused_batch_norm_grad(OpId op, absl::Span<const TensorMeta> inputs,
                                         const OpAttrs& attrs, OutputMetas* out) {
  const TensorMeta &dy = inputs[0], &x = inputs[1];
  MT_RETURN_IF_ERROR(check_dtype(op, dy.dtype));
  MT_RETURN_IF_ERROR(check_same_dtype(op, dy.dtype, x.dtype));
  MT_RETURN_IF_ERROR(check_rank4(op, "y_backprop", *dy.shape));
  MT_RETURN_IF_ERROR(check_rank4(op, "x", *x.shape));
  if (*dy.shape != *x.shape) {
    return op_error(op, "x and y_backprop must have the same shape, got ", x.shape->to_string(),
                    " and ", dy.shape->to_string());
  }
  const DType u = batch_norm_stats_dtype(x.dtype);
  const int64_t channels = x.shape->dim(attrs.channels_first ? 1 : 3);
  MT_RETURN_IF_ERROR(check_channel_input(op, "scale", inputs[2], u, channels));
  MT_RETURN_IF_ERROR(check_channel_input(op, "reserve_space_1", inputs[3], u, channels));
  MT_RETURN_IF_ERROR(check_channel_input(op, "reserve_space_2", inputs[4], u, channels));
  const Shape stats = Shape::make({channels}).value();
  out->push_back(OutputMeta{*x.shape, x.dtype});
  out->push_back(OutputMeta{stats, u});
  out->push_back(OutputMeta{stats, u});
  return absl::OkStatus();
}

}  // namespace mt::internal
