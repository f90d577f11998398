#pragma once
// The neural-network ops (tf.nn), eager like every op of runtime/ops/ops.h: they run on the
// device the placement rules choose and throw mt::Error on bad input, the message starting
// with TensorFlow's op name.
//
//   mt::Tensor p = mt::nn::softmax(logits);      // Softmax over the last axis
//   mt::Tensor l = mt::nn::log_softmax(logits);  // LogSoftmax

#include <utility>

#include "runtime/eager/tensor.h"

namespace mt::nn {

// Computes softmax over the last axis: exp(x - max) / sum(exp(x - max)) per row, for any
// floating dtype (2-byte floats compute in float32). Throws InvalidArgument for a scalar
// ("[Softmax] logits must have >= 1 dimension, got shape ()") or a non-floating dtype.
// A row holding NaN or +Inf, or only -Inf, comes out all NaN, as in TensorFlow.
Tensor softmax(const Tensor& logits);

// Computes log(softmax(logits)) over the last axis as (x - max) - log(sum(exp(x - max))),
// which stays finite where softmax underflows. Errors as softmax, naming LogSoftmax.
Tensor log_softmax(const Tensor& logits);

// Returns features * Phi(features), Phi the standard normal's distribution function
// (0.5 * x * (1 + erf(x / sqrt(2)))), or with `approximate` tf.nn.gelu's tanh form; any
// float dtype (the 2-byte ones computed in float32 and rounded once).
Tensor gelu(const Tensor& features, bool approximate = false);

// Adds the 1-D `bias` along the last axis of `value` (rank >= 2; BiasAdd, NHWC), any
// numeric dtype; InvalidArgument when the bias's length is not the last dimension.
Tensor bias_add(const Tensor& value, const Tensor& bias);

// Returns the cross-entropy loss of softmax(logits) against integer class `labels`, per
// example, as tf.nn.sparse_softmax_cross_entropy_with_logits: labels of shape S (int32 or
// int64) and logits of shape S + (classes,) give a loss of shape S. A label outside
// [0, classes) is InvalidArgument on the CPU and NaN on a GPU (Note [Sparse cross-entropy]
// in kernels/cpu/nn_kernels.cc).
Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits);

// SparseSoftmaxCrossEntropyWithLogits itself: rank-2 logits, rank-1 labels; returns the
// loss and its gradient with respect to the logits (softmax - onehot).
std::pair<Tensor, Tensor> sparse_softmax_cross_entropy_with_logits_and_grad(const Tensor& labels,
                                                                            const Tensor& logits);

}  // namespace mt::nn
