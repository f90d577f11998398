#pragma once
// Layer normalisation (the LayerNorm and LayerNormGrad rows; Note [Layer normalisation] in
// kernels/layer_norm_shape.cc): each row of x normalised over its trailing axes, then
// scaled by gamma and shifted by beta, as Keras's LayerNormalization does.
//
//   nn::LayerNormResult r = nn::layer_norm(x, gamma, beta);  // over the last axis
//   r.y;  // (x - r.mean) * r.inv_std * gamma + beta

#include "kernels/op_attrs.h"
#include "runtime/eager/tensor.h"

namespace mt::nn {

// LayerNorm's attributes (Keras's defaults).
struct LayerNormOptions {
  int64_t begin_axis = -1;  // the first normalised axis (negative from the end) to the last
  double epsilon = 0.001;   // added to the variance; finite and >= 0
};

// The outputs of LayerNorm: y, and each row's mean and 1 / sqrt(variance + epsilon) (the
// shape of x's leading axes).
struct LayerNormResult {
  Tensor y, mean, inv_std;
};

// Normalises each row of `x` (any float dtype) over the axes from options.begin_axis to the
// last; gamma and beta have those axes' shape and are float32 (float64 for a float64 x).
// Differentiable in x, gamma and beta (and through mean and inv_std). Throws
// InvalidArgument for bad shapes, dtypes, axis or epsilon.
LayerNormResult layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                           const LayerNormOptions& options = {});

// The outputs of AddLayerNorm: LayerNorm's of sum = x + residual, and sum.
struct AddLayerNormResult {
  Tensor y, sum, mean, inv_std;
};

// Returns layer_norm(x + residual, gamma, beta) and x + residual in one pass over the rows
// (the residual stream's add before a transformer block's layer norm): sum is x + residual
// rounded to x's dtype, as add gives it. x and residual have the same shape and dtype.
// Differentiable in x, residual, gamma and beta. Throws InvalidArgument as layer_norm, and
// for a residual of another shape or dtype.
AddLayerNormResult add_layer_norm(const Tensor& x, const Tensor& residual, const Tensor& gamma,
                                  const Tensor& beta, const LayerNormOptions& options = {});

// LayerNormGrad's outputs: the gradients of x, gamma and beta.
struct LayerNormGradResult {
  Tensor dx, dgamma, dbeta;
};

// The gradient of layer_norm's y given dy, its x and gamma and its mean and inv_std, with
// the forward call's options.
LayerNormGradResult layer_norm_grad(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& mean, const Tensor& inv_std,
                                    const LayerNormOptions& options = {});

}  // namespace mt::nn

namespace mt::internal {
// The OpAttrs of a call with these options.
OpAttrs layer_norm_attrs(const nn::LayerNormOptions& options);
}  // namespace mt::internal
