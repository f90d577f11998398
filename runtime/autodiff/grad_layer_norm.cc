// The gradient of LayerNorm (Note [Gradients beside their rows] in grad_fns.h): the
// LayerNormGrad row on the saved statistics, or, while another tape records on this thread
// (a higher-order gradient), the same formula in differentiable ops (Note [Layer
// normalisation] in kernels/layer_norm_shape.cc). Gradients reaching mean and inv_std add
// their terms: d mean / dx = 1 / n and d inv_std / dx = -inv_std^2 * xhat / n. AddLayerNorm's
// is LayerNorm's at its sum.
#include <vector>

#include "kernels/layer_norm.h"
#include "runtime/autodiff/grad_fns.h"
#include "runtime/autodiff/tape.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"
#include "runtime/ops/array_ops.h"
#include "runtime/ops/constant.h"
#include "runtime/ops/ops.h"

namespace mt::internal {
namespace {

// The axes LayerNorm normalised (`begin` to the last) and the leading ones, of x's rank.
struct NormAxes {
  std::vector<int64_t> norm, lead;
  std::vector<int64_t> stats_shape;  // x's shape with 1 for each normalised axis
};

NormAxes norm_axes(const Shape& x, int64_t axis) {
  NormAxes a;
  const int begin = layer_norm_begin_axis(x.rank(), axis);
  for (int i = 0; i < x.rank(); ++i) {
    (i < begin ? a.lead : a.norm).push_back(i);
    a.stats_shape.push_back(i < begin ? x.dim(i) : 1);
  }
  return a;
}

// Returns t in `dtype` (t itself when it has it).
Tensor as(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : cast(t, dtype); }

// dx, dgamma, dbeta in differentiable ops, the arithmetic in the statistics' dtype u.
Grads composite_grad(const GradContext& c, const NormAxes& a, DType u) {
  const Tensor x = as(c.inputs[0], u), dy = as(c.output_grads[0], u);
  const Tensor mean = reshape(c.outputs[1], a.stats_shape);
  const Tensor inv = reshape(c.outputs[2], a.stats_shape);
  const Tensor xhat = (x - mean) * inv;
  const Tensor g = dy * c.inputs[1];
  const Tensor dx = inv * (g - reduce_mean(g, Axes(a.norm), true) -
                           xhat * reduce_mean(g * xhat, Axes(a.norm), true));
  return {as(dx, c.inputs[0].dtype()), reduce_sum(dy * xhat, Axes(a.lead)),
          reduce_sum(dy, Axes(a.lead))};
}

}  // namespace

template <>
Grads Grad<OpId::kLayerNorm>::run(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const DType u = layer_norm_stats_dtype(x.dtype());
  const NormAxes a = norm_axes(x.shape(), c.attrs.axis);
  Grads d;
  if (tape_recording_on_thread()) {
    d = composite_grad(c, a, u);
  } else {
    const Tensor* inputs[] = {&c.output_grads[0], &x, &c.inputs[1], &c.outputs[1], &c.outputs[2]};
    Tensors out = value_or_throw(execute_all(OpId::kLayerNormGrad, inputs, c.attrs));
    d = {std::move(out[0]), std::move(out[1]), std::move(out[2])};
  }
  if (c.has_grad(1) || c.has_grad(2)) {
    // (d_mean - d_inv_std * inv_std^2 * xhat) / n over each row.
    const Tensor mean = reshape(c.outputs[1], a.stats_shape);
    const Tensor inv = reshape(c.outputs[2], a.stats_shape);
    const double n = static_cast<double>(layer_norm_layout(x.shape(), c.attrs.axis).cols);
    const Tensor xhat = (as(x, u) - mean) * inv;
    const Tensor extra = (reshape(c.output_grads[1], a.stats_shape) -
                          reshape(c.output_grads[2], a.stats_shape) * inv * inv * xhat) *
                         fill({}, 1 / n, u);
    d[0] = as(as(d[0], u) + extra, x.dtype());
  }
  return d;
}

// AddLayerNorm: LayerNorm's gradient at sum (its outputs y, mean and inv_std), plus the
// gradient reaching sum itself; x and residual both get it.
template <>
Grads Grad<OpId::kAddLayerNorm>::run(const GradContext& c) {
  const Tensor inputs[] = {c.outputs[1], c.inputs[2], c.inputs[3]};
  const Tensor outputs[] = {c.outputs[0], c.outputs[2], c.outputs[3]};
  const Tensor grads[] = {c.output_grads[0], c.output_grads[2], c.output_grads[3]};
  const uint64_t given = (c.given & 1u) | ((c.given >> 1) & 6u);  // outputs 0, 2, 3
  const GradContext norm{OpId::kLayerNorm, c.attrs, inputs, outputs, grads, ~uint64_t{0}, given};
  Grads d = Grad<OpId::kLayerNorm>::run(norm);
  const Tensor dsum = c.has_grad(1) ? d[0] + c.output_grads[1] : d[0];
  return {dsum, dsum, std::move(d[1]), std::move(d[2])};
}

}  // namespace mt::internal
