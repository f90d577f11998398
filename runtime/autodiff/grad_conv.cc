// The gradients of Conv2D, MaxPool and AvgPool (Note [Gradients beside their rows] in
// grad_fns.h): TensorFlow's, through the gradient ops of MT_CONV_OPS with the forward call's
// attributes and the shape each writes.
#include "runtime/autodiff/grad_fns.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

namespace mt::internal {
namespace {

std::vector<int64_t> dims_of(const Tensor& t) {
  return {t.shape().dims().begin(), t.shape().dims().end()};
}

Tensor call_op(OpId op, std::initializer_list<const Tensor*> inputs, const OpAttrs& attrs) {
  return value_or_throw(execute(op, absl::MakeConstSpan(inputs.begin(), inputs.size()), attrs));
}

// The forward call's attributes, writing a tensor of `shape`'s dimensions.
OpAttrs writing(const OpAttrs& forward, const Tensor& shape) {
  OpAttrs attrs = forward;
  const std::vector<int64_t> dims = dims_of(shape);
  attrs.dims.assign(dims.begin(), dims.end());
  return attrs;
}

}  // namespace

template <>
Grads Grad<OpId::kConv2D>::run(const GradContext& c) {
  const Tensor &x = c.inputs[0], &f = c.inputs[1], &g = c.output_grads[0];
  Tensor dx, df;
  if (c.needs(0)) dx = call_op(OpId::kConv2DBackpropInput, {&f, &g}, writing(c.attrs, x));
  if (c.needs(1)) df = call_op(OpId::kConv2DBackpropFilter, {&x, &g}, writing(c.attrs, f));
  return {dx, df};
}

template <>
Grads Grad<OpId::kMaxPool>::run(const GradContext& c) {
  return {call_op(OpId::kMaxPoolGrad, {&c.inputs[0], &c.outputs[0], &c.output_grads[0]}, c.attrs)};
}

template <>
Grads Grad<OpId::kAvgPool>::run(const GradContext& c) {
  return {call_op(OpId::kAvgPoolGrad, {&c.output_grads[0]}, writing(c.attrs, c.inputs[0]))};
}

}  // namespace mt::internal
