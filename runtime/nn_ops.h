#pragma once
// The neural-network ops (tf.nn), eager like every op of runtime/ops.h: they run on the
// device the placement rules choose and throw mt::Error on bad input, the message starting
// with TensorFlow's op name.
//
//   mt::Tensor p = mt::nn::softmax(logits);      // Softmax over the last axis
//   mt::Tensor l = mt::nn::log_softmax(logits);  // LogSoftmax

#include "runtime/tensor.h"

namespace mt::nn {

// Computes softmax over the last axis: exp(x - max) / sum(exp(x - max)) per row, for any
// floating dtype (2-byte floats compute in float32). Throws InvalidArgument for a scalar
// ("[Softmax] logits must have >= 1 dimension, got shape ()") or a non-floating dtype.
// A row holding NaN or +Inf, or only -Inf, comes out all NaN, as in TensorFlow.
Tensor softmax(const Tensor& logits);

// Computes log(softmax(logits)) over the last axis as (x - max) - log(sum(exp(x - max))),
// which stays finite where softmax underflows. Errors as softmax, naming LogSoftmax.
Tensor log_softmax(const Tensor& logits);

}  // namespace mt::nn
