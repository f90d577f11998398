// The gradients of the reductions and of the nn ops (Note [Gradients beside their rows] in
// grad_fns.h), TensorFlow's formulas.
#include "kernels/shape_fns.h"
#include "runtime/autodiff/grad_fns.h"
#include "runtime/autodiff/grad_util.h"
#include "runtime/eager/error.h"
#include "runtime/ops/array_ops.h"
#include "runtime/ops/nn_ops.h"
#include "runtime/ops/ops.h"

namespace mt::internal {
namespace {

// The reduced input's shape with every reduced dimension kept as 1, and the reduced axes.
struct Reduced {
  Ints kept;
  std::vector<int64_t> axes;
};

Reduced reduced(const GradContext& c) {
  const Shape& in = c.inputs[0].shape();
  AxisMask mask;
  throw_if_error(reduction_mask(c.op, in, c.attrs, &mask));
  Reduced r;
  for (int d = 0; d < in.rank(); ++d) {
    r.kept.push_back(mask[d] ? 1 : in.dim(d));
    if (mask[d]) r.axes.push_back(d);
  }
  return r;
}

// Returns `t` (a reduction's output or its gradient) broadcast back to the input's shape.
Tensor expand(const Tensor& t, const Reduced& r, const Shape& shape) {
  return broadcast_to(reshape(t, r.kept), Ints(shape.dims().begin(), shape.dims().end()));
}

Tensor sum_over(const Tensor& t, const Reduced& r) {
  return reduce_sum(t, Axes(absl::MakeConstSpan(r.axes)), true);
}

// Max and Min: the gradient is shared by the elements equal to the result.
Grads extremum_grads(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Reduced r = reduced(c);
  const Tensor hits = cast(equal(x, expand(c.outputs[0], r, x.shape())), x.dtype());
  const Tensor count = sum_over(hits, r);
  return {div(mul(expand(c.output_grads[0], r, x.shape()), hits),
              broadcast_to(count, Ints(x.shape().dims().begin(), x.shape().dims().end())))};
}

}  // namespace

template <>
Grads Grad<OpId::kSum>::run(const GradContext& c) {
  return {expand(c.output_grads[0], reduced(c), c.inputs[0].shape())};
}

template <>
Grads Grad<OpId::kMean>::run(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const int64_t out = c.outputs[0].num_elements();
  const double count = out == 0 ? 1.0 : static_cast<double>(x.num_elements()) / out;
  return {div(expand(c.output_grads[0], reduced(c), x.shape()), scalar_like(x, count))};
}

template <>
Grads Grad<OpId::kMax>::run(const GradContext& c) {
  return extremum_grads(c);
}
template <>
Grads Grad<OpId::kMin>::run(const GradContext& c) {
  return extremum_grads(c);
}

// The product of the other elements of each group: y / x without zeros; with one zero in a
// group, that element gets the product of the others and the rest 0; with more, all 0.
template <>
Grads Grad<OpId::kProd>::run(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Reduced r = reduced(c);
  const Ints shape(x.shape().dims().begin(), x.shape().dims().end());
  const Tensor zero = zeros_like(x), one = ones_like(x);
  const Tensor is_zero = equal(x, zero);
  const Tensor zeros = broadcast_to(sum_over(cast(is_zero, x.dtype()), r), shape);
  const Tensor nonzero_prod = broadcast_to(
      reduce_prod(where(is_zero, one, x), Axes(absl::MakeConstSpan(r.axes)), true), shape);
  const Tensor y = expand(c.outputs[0], r, x.shape());
  const Tensor no_zero = div(y, where(is_zero, one, x));
  const Tensor lone_zero = where(is_zero, nonzero_prod, zero);
  const Tensor others =
      where(equal(zeros, zero), no_zero, where(equal(zeros, one), lone_zero, zero));
  return {mul(expand(c.output_grads[0], r, x.shape()), others)};
}

// softmax: (g - sum(g * y)) * y over the last axis; log_softmax: g - exp(y) * sum(g).
template <>
Grads Grad<OpId::kSoftmax>::run(const GradContext& c) {
  const Tensor &g = c.output_grads[0], &y = c.outputs[0];
  return {mul(sub(g, reduce_sum(mul(g, y), -1, true)), y)};
}
template <>
Grads Grad<OpId::kLogSoftmax>::run(const GradContext& c) {
  const Tensor &g = c.output_grads[0], &y = c.outputs[0];
  return {sub(g, mul(exp(y), reduce_sum(g, -1, true)))};
}

// Gelu: g * d/dx of TensorFlow's formula. Exact: Phi(x) + x * phi(x), that is
// 0.5 * (1 + erf(x / sqrt(2))) + x * exp(-x^2 / 2) / sqrt(2 pi). Tanh form, with
// u = c * (x + a * x^3) and t = tanh(u): 0.5 * (1 + t) + 0.5 * x * (1 - t^2) * c * (1 + 3 a x^2).
template <>
Grads Grad<OpId::kGelu>::run(const GradContext& c) {
  const Tensor &g = c.output_grads[0], &x = c.inputs[0];
  const auto k = [&](double v) { return scalar_like(x, v); };
  const Tensor x2 = square(x);
  if (c.attrs.approximate) {
    const double sqrt_2_over_pi = 0.7978845608028654, a = 0.044715;
    const Tensor t = tanh(mul(k(sqrt_2_over_pi), add(x, mul(k(a), mul(x, x2)))));
    const Tensor outer = mul(k(0.5), add(k(1), t));
    const Tensor inner = mul(mul(mul(k(0.5), x), sub(k(1), square(t))),
                             mul(k(sqrt_2_over_pi), add(k(1), mul(k(3 * a), x2))));
    return {mul(g, add(outer, inner))};
  }
  const Tensor cdf = mul(k(0.5), add(k(1), erf(mul(x, k(0.7071067811865476)))));
  const Tensor pdf = mul(k(0.3989422804014327), exp(mul(k(-0.5), x2)));
  return {mul(g, add(cdf, mul(x, pdf)))};
}

template <>
Grads Grad<OpId::kBiasAdd>::run(const GradContext& c) {
  const Tensor& g = c.output_grads[0];
  std::vector<int64_t> axes;
  for (int d = 0; d + 1 < g.shape().rank(); ++d) axes.push_back(d);
  return {g, reduce_sum(g, Axes(absl::MakeConstSpan(axes)))};
}

// The loss's gradient times the op's own second output (softmax - onehot); the labels get
// none. A gradient flowing into that second output is not propagated (first order only).
template <>
Grads Grad<OpId::kSparseSoftmaxCrossEntropyWithLogits>::run(const GradContext& c) {
  return {mul(expand_dims(c.output_grads[0], -1), c.outputs[1]), Tensor()};
}

}  // namespace mt::internal
