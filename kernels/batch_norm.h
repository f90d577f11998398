#pragma once
// The layout the batch normalisation kernels read (Note [Batch normalisation] in
// kernels/batch_norm_shape.cc): a 4-D tensor as [outer, channels, inner] with the channel
// the middle index, so that NHWC is [N * H * W, C, 1] and NCHW [N, C, H * W].
//
//   const BatchNormLayout l = batch_norm_layout(*x.shape, attrs.channels_first);
//   // element (o, c, i) is at (o * l.channels + c) * l.inner + i

#include <cstdint>

#include "core/dtype.h"
#include "core/shape.h"

namespace mt::internal {

struct BatchNormLayout {
  int64_t outer;
  int64_t channels;
  int64_t inner;
  // The elements each channel's statistics are taken over.
  int64_t count() const { return outer * inner; }
};

inline BatchNormLayout batch_norm_layout(const Shape& x, bool channels_first) {
  if (channels_first) return {x.dim(0), x.dim(1), x.dim(2) * x.dim(3)};
  return {x.dim(0) * x.dim(1) * x.dim(2), x.dim(3), 1};
}

// The dtype of scale, offset and the statistics for an x of `x`: float64 for float64,
// float32 for the others (the 2-byte floats included, as TensorFlow's U).
constexpr DType batch_norm_stats_dtype(DType x) {
  return x == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
}

}  // namespace mt::internal
