#include "runtime/ops/conv_ops.h"

#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

namespace mt {
namespace internal {

OpAttrs conv_attrs(const nn::Conv2DOptions& options) {
  OpAttrs attrs;
  attrs.strides = options.strides;
  attrs.padding = options.padding;
  attrs.explicit_paddings = options.explicit_paddings;
  attrs.dilations = options.dilations;
  attrs.channels_first = options.channels_first;
  return attrs;
}

OpAttrs pool_attrs(const nn::PoolOptions& options) {
  OpAttrs attrs;
  attrs.ksize = options.ksize;
  attrs.strides = options.strides;
  attrs.padding = options.padding;
  attrs.explicit_paddings = options.explicit_paddings;
  attrs.channels_first = options.channels_first;
  return attrs;
}

}  // namespace internal

namespace nn {
namespace {

Tensor run(OpId op, std::initializer_list<const Tensor*> inputs, const OpAttrs& attrs) {
  return internal::value_or_throw(
      internal::execute(op, absl::MakeConstSpan(inputs.begin(), inputs.size()), attrs));
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& filter, const Conv2DOptions& options) {
  return run(OpId::kConv2D, {&input, &filter}, internal::conv_attrs(options));
}

Tensor conv2d_backprop_input(const std::vector<int64_t>& input_sizes, const Tensor& filter,
                             const Tensor& out_backprop, const Conv2DOptions& options) {
  OpAttrs attrs = internal::conv_attrs(options);
  attrs.dims.assign(input_sizes.begin(), input_sizes.end());
  return run(OpId::kConv2DBackpropInput, {&filter, &out_backprop}, attrs);
}

Tensor conv2d_backprop_filter(const Tensor& input, const std::vector<int64_t>& filter_sizes,
                              const Tensor& out_backprop, const Conv2DOptions& options) {
  OpAttrs attrs = internal::conv_attrs(options);
  attrs.dims.assign(filter_sizes.begin(), filter_sizes.end());
  return run(OpId::kConv2DBackpropFilter, {&input, &out_backprop}, attrs);
}

Tensor max_pool2d(const Tensor& input, const PoolOptions& options) {
  return run(OpId::kMaxPool, {&input}, internal::pool_attrs(options));
}

Tensor avg_pool2d(const Tensor& input, const PoolOptions& options) {
  return run(OpId::kAvgPool, {&input}, internal::pool_attrs(options));
}

Tensor max_pool_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                     const PoolOptions& options) {
  return run(OpId::kMaxPoolGrad, {&orig_input, &orig_output, &grad}, internal::pool_attrs(options));
}

Tensor avg_pool_grad(const std::vector<int64_t>& orig_input_shape, const Tensor& grad,
                     const PoolOptions& options) {
  OpAttrs attrs = internal::pool_attrs(options);
  attrs.dims.assign(orig_input_shape.begin(), orig_input_shape.end());
  return run(OpId::kAvgPoolGrad, {&grad}, attrs);
}

}  // namespace nn
}  // namespace mt
