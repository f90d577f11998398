#pragma once
// Convolutions and pools over the two spatial dimensions of a 4-D tensor (tf.nn.conv2d,
// max_pool2d, avg_pool2d and their gradient ops), eager like every op: NHWC by default or
// NCHW, with TensorFlow's strides, padding and dilations (Note [Convolutions] in
// kernels/conv_shape.cc). They throw mt::Error on bad input, the message starting with the
// op's TensorFlow name.
//
//   mt::nn::Conv2DOptions o;
//   o.strides = {1, 2, 2, 1};
//   o.padding = mt::Padding::kSame;
//   mt::Tensor y = mt::nn::conv2d(images, filters, o);   // filters HWIO
//   mt::nn::PoolOptions p;
//   p.ksize = p.strides = {1, 2, 2, 1};
//   mt::Tensor z = mt::nn::max_pool2d(y, p);

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/op_attrs.h"
#include "runtime/eager/tensor.h"

namespace mt::nn {

// Conv2D's attributes, each in the data format's dimension order: the batch and channel
// entries of strides and dilations are 1; explicit_paddings, used with Padding::kExplicit,
// holds a (before, after) pair per dimension.
struct Conv2DOptions {
  std::array<int32_t, 4> strides = {1, 1, 1, 1};
  Padding padding = Padding::kValid;
  std::array<int32_t, 8> explicit_paddings = {};
  std::array<int32_t, 4> dilations = {1, 1, 1, 1};
  bool channels_first = false;  // data_format "NCHW"
};

// A pool's attributes, as Conv2DOptions with the window's size in ksize.
struct PoolOptions {
  std::array<int32_t, 4> ksize = {1, 1, 1, 1};
  std::array<int32_t, 4> strides = {1, 1, 1, 1};
  Padding padding = Padding::kValid;
  std::array<int32_t, 8> explicit_paddings = {};
  bool channels_first = false;
};

// Convolves `input` (4-D) with `filter` ([filter_h, filter_w, in_channels, out_channels]):
// Conv2D, floating dtypes, differentiable in both.
Tensor conv2d(const Tensor& input, const Tensor& filter, const Conv2DOptions& options = {});

// Conv2D's gradients: with respect to its input, of shape input_sizes, given the filter and
// the gradient of its output; and with respect to its filter, of shape filter_sizes.
Tensor conv2d_backprop_input(const std::vector<int64_t>& input_sizes, const Tensor& filter,
                             const Tensor& out_backprop, const Conv2DOptions& options = {});
Tensor conv2d_backprop_filter(const Tensor& input, const std::vector<int64_t>& filter_sizes,
                              const Tensor& out_backprop, const Conv2DOptions& options = {});

// The maximum and the mean of each window (padding is skipped, and not counted in a mean):
// MaxPool and AvgPool, differentiable.
Tensor max_pool2d(const Tensor& input, const PoolOptions& options);
Tensor avg_pool2d(const Tensor& input, const PoolOptions& options);

// The pools' gradients: MaxPoolGrad sends each window's gradient to its first maximum;
// AvgPoolGrad spreads it evenly over the elements the window read.
Tensor max_pool_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                     const PoolOptions& options);
Tensor avg_pool_grad(const std::vector<int64_t>& orig_input_shape, const Tensor& grad,
                     const PoolOptions& options);

}  // namespace mt::nn

namespace mt::internal {
// The OpAttrs of a call with these options.
OpAttrs conv_attrs(const nn::Conv2DOptions& options);
OpAttrs pool_attrs(const nn::PoolOptions& options);
}  // namespace mt::internal
