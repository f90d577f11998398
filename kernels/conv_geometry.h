#pragma once
// The geometry of one Conv2D or pooling call, read once from its shapes and attributes
// (kernels/conv_shape.cc validates and computes it; the CPU and CUDA kernels of Conv2D,
// Conv2DBackpropInput, Conv2DBackpropFilter, MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad
// read it). Sizes are in elements; positions follow TensorFlow:
//
//   output row oh reads input rows  oh * stride_h - pad_top + kh * dilation_h,
//   kh in [0, filter_h); a row outside [0, in_h) is padding (zero for a convolution,
//   skipped by a pool, and not counted in an average).
//
// A convolution's filter is HWIO, [filter_h, filter_w, in_c, out_c], in either data
// format; a pool has out_c == in_c and acts on each channel alone.

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/shape.h"
#include "kernels/op_attrs.h"
#include "kernels/op_id.h"

namespace mt::internal {

struct ConvGeometry {
  int64_t batch = 0;
  int64_t in_h = 0, in_w = 0, in_c = 0;
  int64_t filter_h = 0, filter_w = 0;
  int64_t out_h = 0, out_w = 0, out_c = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  bool channels_first = false;

  // The offset of element (n, h, w, c) of an input-shaped [batch, in_h, in_w, in_c] tensor
  // in its data format, and of an output-shaped one.
  int64_t input_index(int64_t n, int64_t h, int64_t w, int64_t c) const {
    return channels_first ? ((n * in_c + c) * in_h + h) * in_w + w
                          : ((n * in_h + h) * in_w + w) * in_c + c;
  }
  int64_t output_index(int64_t n, int64_t h, int64_t w, int64_t c) const {
    return channels_first ? ((n * out_c + c) * out_h + h) * out_w + w
                          : ((n * out_h + h) * out_w + w) * out_c + c;
  }
  // The offset of filter element (kh, kw, ic, oc), HWIO.
  int64_t filter_index(int64_t kh, int64_t kw, int64_t ic, int64_t oc) const {
    return ((kh * filter_w + kw) * in_c + ic) * out_c + oc;
  }
};

// Returns the geometry of a convolution of `input` with an HWIO `filter` (Conv2D, and the
// backprops with the shapes they are given), or the op's InvalidArgument error.
absl::StatusOr<ConvGeometry> conv_geometry(OpId op, const Shape& input, const Shape& filter,
                                           const OpAttrs& attrs);

// Returns the geometry of a pool over `input` (attrs.ksize; batch and channel entries 1).
absl::StatusOr<ConvGeometry> pool_geometry(OpId op, const Shape& input, const OpAttrs& attrs);

}  // namespace mt::internal
