#pragma once
// Padding and the k largest elements, with TensorFlow's names and semantics (Note [Pads and
// top k] in kernels/pad_shape.cc). Each runs on the CPU and on GPUs.
//
//   mt::Tensor p = mt::pad(x, {{1, 1}, {2, 0}});                       // Pad: zeros around
//   mt::Tensor m = mt::pad(x, {{1, 1}, {0, 0}}, mt::PadMode::kReflect);  // MirrorPad
//   mt::math::TopKResult t = mt::math::top_k(logits, 5);                 // TopKV2
//
// Errors throw mt::Error with code InvalidArgument and TensorFlow's message prefixed by the
// op name: "[TopKV2] input must have at least k columns. Had 3, needed 5".

#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/eager/tensor.h"

namespace mt {

// tf.pad's modes: a constant outside the input (Pad, PadV2), or the input mirrored at each
// edge without the edge element (REFLECT) or with it (SYMMETRIC) (MirrorPad).
enum class PadMode { kConstant, kReflect, kSymmetric };

// (before, after) for each dimension of the input, in order.
using Paddings = std::vector<std::pair<int64_t, int64_t>>;

// Returns `input` grown by `paddings` (tf.pad): with `constant_values` around it (Pad for
// 0, PadV2 otherwise, converted to the dtype as fill converts), or mirrored (MirrorPad: each
// padding below the dimension for kReflect, at most the dimension for kSymmetric).
Tensor pad(const Tensor& input, const Paddings& paddings, PadMode mode = PadMode::kConstant,
           double constant_values = 0);

// Returns MirrorPad's gradient (MirrorPadGrad): `grad`, of the padded shape, with each
// padded element's value added into the element it mirrors, shrunk to the unpadded shape.
// `mode` is kReflect or kSymmetric.
Tensor mirror_pad_grad(const Tensor& grad, const Paddings& paddings, PadMode mode);

namespace math {

// TopKV2's outputs: the values, and their int32 indices in the last axis.
struct TopKResult {
  Tensor values;
  Tensor indices;
};

// Returns the `k` largest elements of each last-axis row of `input` (tf.math.top_k), the
// larger first and on ties the lower index first; a NaN ranks above every number.
// `sorted` false is accepted and gives the same order (TensorFlow leaves it open).
TopKResult top_k(const Tensor& input, int64_t k = 1, bool sorted = true);

}  // namespace math
}  // namespace mt
