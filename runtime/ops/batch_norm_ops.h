#pragma once
// Batch normalisation (TensorFlow's FusedBatchNormV3 and its gradient; Note [Batch
// normalisation] in kernels/batch_norm_shape.cc): per-channel statistics of a 4-D x.
//
//   nn::FusedBatchNormResult r = nn::fused_batch_norm(x, gamma, beta, empty, empty);
//   // r.y normalised with the batch's statistics; r.batch_variance has Bessel's correction

#include "kernels/op_attrs.h"
#include "runtime/eager/tensor.h"

namespace mt::nn {

// FusedBatchNormV3's attributes (TensorFlow's defaults).
struct FusedBatchNormOptions {
  double epsilon = 0.001;             // added to the variance
  double exponential_avg_factor = 1;  // the batch's weight in the running statistics
  bool channels_first = false;        // data_format "NCHW" (else "NHWC")
  bool is_training = true;            // normalise with the batch's statistics
};

// The five outputs of FusedBatchNormV3. Training: batch_mean and batch_variance are the
// running statistics updated with the batch's (the variance unbiased), reserve_space_1 and
// reserve_space_2 the batch's mean and biased variance; inference: all four are the given
// mean and variance.
struct FusedBatchNormResult {
  Tensor y, batch_mean, batch_variance, reserve_space_1, reserve_space_2;
};

// Normalises each channel of `x` (4-D, any float dtype) and scales and offsets it; scale,
// offset, mean and variance are 1-D of the channels, float32 (float64 for a float64 x).
// mean and variance may have no element when training with exponential_avg_factor 1.
// Differentiable in x, scale and offset. Throws InvalidArgument for bad shapes or dtypes.
FusedBatchNormResult fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset,
                                      const Tensor& mean, const Tensor& variance,
                                      const FusedBatchNormOptions& options = {});

// FusedBatchNormGradV3's outputs: the gradients of x, scale and offset.
struct FusedBatchNormGradResult {
  Tensor x_backprop, scale_backprop, offset_backprop;
};

// The gradient of fused_batch_norm given the gradient of y, its x and scale and its
// reserve_space_1 and reserve_space_2, with the forward call's options.
FusedBatchNormGradResult fused_batch_norm_grad(const Tensor& y_backprop, const Tensor& x,
                                               const Tensor& scale, const Tensor& reserve_space_1,
                                               const Tensor& reserve_space_2,
                                               const FusedBatchNormOptions& options = {});

}  // namespace mt::nn

namespace mt::internal {
// The OpAttrs of a call with these options.
OpAttrs batch_norm_attrs(const nn::FusedBatchNormOptions& options);
}  // namespace mt::internal
