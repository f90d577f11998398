#pragma once
// Drawing the convolutions and pools (MT_CONV_OPS) of a random op chain (op_chain.h): a 4-D
// image of the chain (a fresh one when the drawn value is not one), NHWC or NCHW, a window
// that fits it (strides, dilations, VALID, SAME or EXPLICIT padding) and, for the gradient
// ops, an out_backprop or grad of the forward op's output shape and the shape they write in
// dims; with probability kBadAttrs one attribute or shape is made invalid, so that the
// shape function's errors are compared too (Note [Convolutions] in kernels/conv_shape.cc).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/runtime/op_chain.h"

namespace mt::testing {

// Returns the output size of a window over one spatial dimension of `in` (Note
// [Convolutions]), or -1 where the window does not fit the (padded) input.
inline int64_t window_output(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                             Padding padding, int64_t before, int64_t after) {
  if (padding == Padding::kSame) return (in + stride - 1) / stride;
  const int64_t effective = (k - 1) * dilation + 1;
  const int64_t padded = padding == Padding::kExplicit ? in + before + after : in;
  return padded >= effective ? (padded - effective) / stride + 1 : -1;
}

inline bool is_pool(OpId op) {
  return op == OpId::kMaxPool || op == OpId::kMaxPoolGrad || op == OpId::kAvgPool ||
         op == OpId::kAvgPoolGrad;
}

// The image of a conv step: `a` when it is 4-D, of at most 8 channels and of a dtype the
// op takes (or, now and then, whatever it is), else a fresh shape, N H W C in the data
// format's order, of one of the op's dtypes. The ops that read no image
// (Conv2DBackpropInput, AvgPoolGrad) take only its shape.
inline void OpChain::draw_image(Step& s, int a, DType* dtype, std::vector<int64_t>* image) {
  *dtype = reference_[a].dtype;
  *image = shape_of(a);
  const bool reads_image = s.op != OpId::kConv2DBackpropInput && s.op != OpId::kAvgPoolGrad;
  const bool nchw = s.conv.channels_first;
  const bool fits = image->size() == 4 && (*image)[nchw ? 1 : 3] <= 8;  // small filters
  if ((!fits || !dtype_in(*dtype, op_dtypes(s.op))) && chance(0.9)) {
    *dtype = pick_dtype(op_dtypes(s.op));
    const int64_t n = chance(0.05) ? 0 : uniform(1, 2), h = uniform(1, 7), w = uniform(1, 7),
                  c = uniform(1, 3);
    *image = nchw ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, h, w, c};
    if (reads_image) a = operand(*dtype, *image);
  }
  if (reads_image) s.inputs = {a};
  if (image->size() != 4) *image = {1, 1, 1, 1};  // the step fails on a's rank
}

// Draws the window of a conv step over `image`: sizes 1 to 3 (k, in N H W C order), strides
// 1 to 3, dilations 1 or 2 (Conv2D and its backprops), each padding, explicit pads below the
// window (a pool's) or up to 2, SAME where VALID or EXPLICIT would not fit; and sets the
// output's height and width (out[1], out[2]). `spoil` 2 makes the window 2 rows longer than
// the input, VALID.
inline void OpChain::draw_window(Step& s, const std::vector<int64_t>& image, int spoil, int64_t* k,
                                 int64_t* out) {
  static constexpr int32_t kStrides[] = {1, 1, 2, 3};
  const bool pool = is_pool(s.op);
  nn::Conv2DOptions& o = s.conv;
  const int h = o.channels_first ? 2 : 1, w = h + 1;
  k[1] = uniform(1, 3), k[2] = uniform(1, 3);
  o.padding = static_cast<Padding>(uniform(0, 2));
  for (int i : {1, 2}) {
    const int d = i == 1 ? h : w;
    o.strides[d] = kStrides[uniform(0, 3)];
    if (!pool) o.dilations[d] = chance(0.3) ? 2 : 1;
    if (o.padding == Padding::kExplicit) {
      for (int side : {0, 1}) o.explicit_paddings[2 * d + side] = uniform(0, pool ? k[i] - 1 : 2);
    }
  }
  auto fits = [&] {
    for (int i : {1, 2}) {
      const int d = i == 1 ? h : w;
      out[i] = window_output(image[d], k[i], o.strides[d], o.dilations[d], o.padding,
                             o.explicit_paddings[2 * d], o.explicit_paddings[2 * d + 1]);
    }
    return out[1] >= 0 && out[2] >= 0;
  };
  if (!fits() && spoil != 2) {  // SAME fits any input
    o.padding = Padding::kSame;
    o.explicit_paddings = {};
    fits();
  }
  if (spoil == 2) {
    o.padding = Padding::kValid;
    o.explicit_paddings = {};
    if (pool) k[1] = image[h] + 2;
    if (!pool) k[1] = 2, o.dilations[h] = static_cast<int32_t>(image[h] + 1);
    out[1] = 1;  // any: the step fails
    out[2] = std::max<int64_t>(out[2], 1);
  }
  s.ksize[h] = static_cast<int32_t>(k[1]);
  s.ksize[w] = static_cast<int32_t>(k[2]);
}

// A row of MT_CONV_OPS (run_conv) on an image (draw_image) with a window that fits it
// (draw_window). Drawn bad: strides over the batch or channels, a negative pad, a window
// longer than the input, or a shape that does not match.
inline Step OpChain::draw_conv(int a) {
  const std::initializer_list<OpId> ops = MT_OP_LIST(MT_CONV_OPS);
  Step s;
  s.kind = StepKind::kConv;
  s.op = ops.begin()[uniform(0, static_cast<int>(ops.size()) - 1)];
  s.conv.channels_first = chance(0.3);
  const int w = s.conv.channels_first ? 3 : 2, c = s.conv.channels_first ? 1 : 3;
  DType dtype;
  std::vector<int64_t> image;
  draw_image(s, a, &dtype, &image);
  const int spoil = chance(kBadAttrs) ? uniform(0, 3) : -1;
  int64_t k[4] = {1, 1, 1, 1}, out[4];  // N H W C
  draw_window(s, image, spoil, k, out);
  out[0] = image[0];
  out[3] = is_pool(s.op) ? image[c] : uniform(1, 3);
  add_conv_operands(s, dtype, image, out, k, spoil == 3);
  if (spoil == 0) s.conv.strides[chance(0.5) ? 0 : c] = 2;
  if (spoil == 1) s.conv.padding = Padding::kExplicit, s.conv.explicit_paddings[2 * w] = -1;
  return s;
}

// A row of MT_BATCH_NORM_OPS (run_conv) on an image (draw_image), training or inference;
// FusedBatchNormGradV3 takes a y_backprop of the image's shape first (drawn bad: one
// channel more). run_conv gives the per-channel operands.
inline Step OpChain::draw_batch_norm(int a) {
  Step s;
  s.kind = StepKind::kConv;
  s.op = chance(0.5) ? OpId::kFusedBatchNormV3 : OpId::kFusedBatchNormGradV3;
  s.conv.channels_first = chance(0.3);
  s.is_training = chance(0.7);
  DType dtype;
  std::vector<int64_t> image;
  draw_image(s, a, &dtype, &image);
  if (s.op == OpId::kFusedBatchNormGradV3) {
    std::vector<int64_t> dy = image;
    if (chance(kBadAttrs)) dy[s.conv.channels_first ? 1 : 3] += 1;
    s.inputs.insert(s.inputs.begin(), operand(dtype, dy));
  }
  return s;
}

// Adds the inputs and dims of a conv step besides its image: the filter (HWIO), an
// out_backprop or grad of the output's shape (`out`, N H W C), the shape a gradient op
// writes; `mismatch` makes one of them, or a pool's ksize, invalid.
inline void OpChain::add_conv_operands(Step& s, DType dtype, const std::vector<int64_t>& image,
                                       const int64_t* out, const int64_t* k, bool mismatch) {
  const bool nchw = s.conv.channels_first;
  const int c = nchw ? 1 : 3;
  std::vector<int64_t> filter = {k[1], k[2], image[c], out[3]};
  std::vector<int64_t> grad = nchw ? std::vector<int64_t>{out[0], out[3], out[1], out[2]}
                                   : std::vector<int64_t>{out[0], out[1], out[2], out[3]};
  if (mismatch) {
    filter[2] += 1;  // Conv2D: the filter's input channels
    grad[c] += 1;    // the gradient ops: out_backprop or grad
  }
  switch (s.op) {
    case OpId::kConv2D:
      s.inputs.push_back(operand(dtype, filter));
      break;
    case OpId::kConv2DBackpropInput:
      s.dims = image;
      s.inputs = {operand(dtype, {k[1], k[2], image[c], out[3]}), operand(dtype, grad)};
      break;
    case OpId::kConv2DBackpropFilter:
      s.dims = {k[1], k[2], image[c], out[3]};
      s.inputs.push_back(operand(dtype, grad));
      break;
    case OpId::kMaxPoolGrad:
      s.inputs.push_back(operand(dtype, grad));
      break;
    case OpId::kAvgPoolGrad:
      s.dims = image;
      s.inputs = {operand(dtype, grad)};
      break;
    default:  // MaxPool, AvgPool: a window over the channels
      if (mismatch) s.ksize[c] = 2;
  }
}

}  // namespace mt::testing
