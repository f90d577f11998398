#pragma once
// Running one step of a random op chain (op_chain.h) through the public API: the wrapper of
// its op with the step's inputs and attributes.

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "kernels/op_id.h"
#include "runtime/minitensor.h"
#include "tests/runtime/op_chain_steps.h"

namespace mt::testing {

// Runs a random op (MT_RANDOM_OPS): values holds (minval, maxval) or (mean, stddev); a
// stateless op's seed is (seed, 7).
inline Tensor run_random(const Step& s) {
  const double p = s.values[0], q = s.values[1];
  const random::StatelessSeed pair = {s.seed.value_or(0), 7};
  const auto i = [](double v) { return static_cast<int64_t>(v); };
  switch (s.op) {
    case OpId::kRandomUniform:
      return random::uniform(s.shape, p, q, s.dtype, s.seed);
    case OpId::kRandomUniformInt:
      return random::uniform_int(s.shape, i(p), i(q), s.dtype, s.seed);
    case OpId::kRandomStandardNormal:
      return random::normal(s.shape, p, q, s.dtype, s.seed);
    case OpId::kTruncatedNormal:
      return random::truncated_normal(s.shape, p, q, s.dtype, s.seed);
    case OpId::kStatelessRandomUniformV2:
      return random::stateless_uniform(s.shape, pair, p, q, s.dtype);
    case OpId::kStatelessRandomUniformIntV2:
      return random::stateless_uniform_int(s.shape, pair, i(p), i(q), s.dtype);
    case OpId::kStatelessRandomNormalV2:
      return random::stateless_normal(s.shape, pair, p, q, s.dtype);
    default:
      return random::stateless_truncated_normal(s.shape, pair, p, q, s.dtype);
  }
}

// Returns the range a random step's values lie in (Note [Stateful random steps] in
// op_chain_steps.h), with room for a 2-byte dtype's rounding.
inline std::pair<double, double> random_range(const Step& s) {
  const double p = s.values[0], q = s.values[1];
  switch (s.op) {
    case OpId::kRandomUniformInt:
    case OpId::kStatelessRandomUniformIntV2:
      return {p, q - 1};
    case OpId::kRandomUniform:
    case OpId::kStatelessRandomUniformV2:
      return {p, q};
    case OpId::kTruncatedNormal:
    case OpId::kStatelessTruncatedNormalV2: {
      const double reach = 2 * q + (std::fabs(p) + 2 * q) / 64;
      return {p - reach, p + reach};
    }
    default:
      return {p - 64 * q, p + 64 * q};  // finite
  }
}

// Runs a pad: dims holds the (before, after) pairs, flag_a SYMMETRIC, values PadV2's constant.
inline Tensor run_pad(const Step& s, const Tensor& x) {
  Paddings pads;
  for (size_t i = 0; i + 1 < s.dims.size(); i += 2) pads.emplace_back(s.dims[i], s.dims[i + 1]);
  const PadMode mirror = s.flag_a ? PadMode::kSymmetric : PadMode::kReflect;
  switch (s.op) {
    case OpId::kPad:
      return pad(x, pads);
    case OpId::kPadV2:
      return pad(x, pads, PadMode::kConstant, s.values[0]);
    case OpId::kMirrorPad:
      return pad(x, pads, mirror);
    default:
      return mirror_pad_grad(x, pads, mirror);
  }
}

// Runs an op of MT_ARRAY_OPS on `in` (GatherV2: params and indices; SelectV2: condition,
// x and y; ConcatV2 and Pack: every input; the scatters: their inputs in order).
inline Tensor run_array(const Step& s, const std::vector<Tensor>& in) {
  switch (s.op) {
    case OpId::kReshape:
      return reshape(in[0], s.dims);
    case OpId::kTranspose:
      return transpose(in[0], s.dims);
    case OpId::kExpandDims:
      return expand_dims(in[0], s.axis);
    case OpId::kSqueeze:
      return squeeze(in[0], s.dims);
    case OpId::kConcatV2:
      return concat(in, s.axis);
    case OpId::kPack:
      return stack(in, s.axis);
    case OpId::kSplitV: {
      std::vector<Tensor> parts =
          s.dims.empty() ? split(in[0], s.count, s.axis) : split(in[0], s.dims, s.axis);
      return parts.at(s.pick % std::max<size_t>(parts.size(), 1));  // none: a bug
    }
    case OpId::kSlice:
      return slice(in[0], s.dims, s.dims2);
    case OpId::kStridedSlice:
      return strided_slice(in[0], s.dims, s.dims2, s.dims3, s.masks);
    case OpId::kGatherV2:
      return gather(in[0], in[1], s.axis);
    case OpId::kOneHot:
      return one_hot(in[0], s.count, s.values[0], s.values[1], s.axis, s.dtype);
    case OpId::kBroadcastTo:
      return broadcast_to(in[0], s.dims);
    case OpId::kTile:
      return tile(in[0], s.dims);
    case OpId::kZerosLike:
      return zeros_like(in[0]);
    case OpId::kOnesLike:
      return ones_like(in[0]);
    case OpId::kMatrixBandPart:
      return linalg::band_part(in[0], s.dims[0], s.dims[1]);
    case OpId::kCumsum:
      return cumsum(in[0], s.axis, s.flag_a, s.flag_b);
    case OpId::kPad:
    case OpId::kPadV2:
    case OpId::kMirrorPad:
    case OpId::kMirrorPadGrad:
      return run_pad(s, in[0]);
    case OpId::kTopKV2: {
      math::TopKResult r = math::top_k(in[0], s.count, s.flag_a);
      return s.pick == 0 ? r.values : r.indices;
    }
    case OpId::kScatterNd:
      return scatter_nd(in[0], in[1], s.dims);
    case OpId::kTensorScatterUpdate:
      return tensor_scatter_nd_update(in[0], in[1], in[2]);
    case OpId::kTensorScatterAdd:
      return tensor_scatter_nd_add(in[0], in[1], in[2]);
    default:
      return where(in[0], in[1], in[2]);
  }
}

// Runs a row of MT_LAYER_NORM_OPS on x = in.back() (LayerNormGrad: in[0] is dy; AddLayerNorm:
// x = in[0], in[1] the residual) over the axes from s.axis, with fixed gamma, beta and
// statistics on the device and epsilon 0.25 (-1 when s.flag_a: drawn bad), which bounds
// inv_std so that an ulp of x stays an ulp of y; returns y, or dx (dgamma when s.flag_b), or
// (AddLayerNorm) y or, when s.flag_b, the sum.
inline Tensor run_layer_norm(const Step& s, const std::vector<Tensor>& in) {
  const Tensor& x = s.op == OpId::kAddLayerNorm ? in.front() : in.back();
  std::vector<int64_t> lead, params;
  if (x.impl() != nullptr) {
    const int rank = x.shape().rank();
    const int64_t begin = s.axis < 0 ? s.axis + rank : s.axis;
    for (int i = 0; i < rank; ++i) (i < begin ? lead : params).push_back(x.shape().dim(i));
  }
  const DType u =
      x.impl() != nullptr && x.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  const nn::LayerNormOptions o{s.axis, s.flag_a ? -1.0 : 0.25};
  const Tensor gamma = fill(params, 1.5, u);
  if (s.op == OpId::kLayerNorm) return nn::layer_norm(x, gamma, fill(params, -0.25, u), o).y;
  if (s.op == OpId::kAddLayerNorm) {
    const nn::AddLayerNormResult r = nn::add_layer_norm(x, in[1], gamma, fill(params, -0.25, u), o);
    return s.flag_b ? r.sum : r.y;
  }
  const nn::LayerNormGradResult g =
      nn::layer_norm_grad(in[0], x, gamma, fill(lead, 0.125, u), fill(lead, 0.75, u), o);
  return s.flag_b ? g.dgamma : g.dx;
}

// Runs a row of MT_ATTENTION_OPS on (q, k, v), causal when s.flag_a, with an infinite scale
// when s.flag_b (drawn bad); the gradient (in[0] is do) at the forward pass's o and lse on
// the same device. Returns output s.pick: o or lse; dq, dk or dv.
inline Tensor run_attention(const Step& s, const std::vector<Tensor>& in) {
  const size_t first = s.op == OpId::kDotProductAttentionGrad ? 1 : 0;
  const Tensor &q = in[first], &k = in[first + 1], &v = in[first + 2];
  nn::DotProductAttentionOptions o;
  o.causal = s.flag_a;
  if (s.flag_b) o.scale = INFINITY;
  const nn::DotProductAttentionResult r = nn::dot_product_attention(q, k, v, o);
  if (first == 0) return s.pick == 1 ? r.lse : r.o;
  const nn::DotProductAttentionGradResult g =
      nn::dot_product_attention_grad(in[0], q, k, v, r.o, r.lse, o);
  return s.pick == 0 ? g.dq : s.pick == 1 ? g.dk : g.dv;
}

// Runs an op of MT_NN_OPS, MT_LAYER_NORM_OPS or MT_ATTENTION_OPS;
// SparseSoftmaxCrossEntropyWithLogits takes (logits, labels).
inline Tensor run_nn(const Step& s, const std::vector<Tensor>& in) {
  switch (s.op) {
    case OpId::kDotProductAttention:
    case OpId::kDotProductAttentionGrad:
      return run_attention(s, in);
    case OpId::kLayerNorm:
    case OpId::kLayerNormGrad:
    case OpId::kAddLayerNorm:
      return run_layer_norm(s, in);
    case OpId::kSoftmax:
      return nn::softmax(in[0]);
    case OpId::kLogSoftmax:
      return nn::log_softmax(in[0]);
    case OpId::kBiasAdd:
      return nn::bias_add(in[0], in[1]);
    case OpId::kGelu:
      return nn::gelu(in[0], s.flag_a);
    default:
      if (!s.flag_a) return nn::sparse_softmax_cross_entropy_with_logits(in[1], in[0]);
      auto [loss, grad] = nn::sparse_softmax_cross_entropy_with_logits_and_grad(in[1], in[0]);
      return s.flag_b ? grad : loss;
  }
}

// Runs a row of MT_BATCH_NORM_OPS on x = in.back() (FusedBatchNormGradV3: in[0] is
// y_backprop) with fixed per-channel scale, offset and statistics on the device; returns y
// or x_backprop.
inline Tensor run_batch_norm(const Step& s, const std::vector<Tensor>& in) {
  const Tensor& x = in.back();
  const bool image = x.impl() != nullptr && x.shape().rank() == 4;
  const int64_t c = image ? x.shape().dim(s.conv.channels_first ? 1 : 3) : 1;
  const DType u =
      x.impl() != nullptr && x.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  nn::FusedBatchNormOptions o;
  o.channels_first = s.conv.channels_first;
  o.is_training = s.is_training;
  o.exponential_avg_factor = s.is_training ? 0.5 : 1;
  const Tensor scale = fill({c}, 1.5, u), offset = fill({c}, -0.25, u);
  const Tensor mean = fill({c}, 0.125, u), var = fill({c}, 0.75, u);
  if (s.op == OpId::kFusedBatchNormV3) {
    return nn::fused_batch_norm(x, scale, offset, mean, var, o).y;
  }
  return nn::fused_batch_norm_grad(in[0], x, scale, mean, var, o).x_backprop;
}

// Runs an op of MT_CONV_OPS: Conv2D (input, filter), Conv2DBackpropInput (filter,
// out_backprop), Conv2DBackpropFilter (input, out_backprop), MaxPool and AvgPool (input),
// MaxPoolGrad (input, grad; its orig_output is the input's MaxPool, as the tape passes it)
// and AvgPoolGrad (grad); s.dims is the shape a backprop or AvgPoolGrad writes.
inline Tensor run_conv(const Step& s, const std::vector<Tensor>& in) {
  if (s.op == OpId::kFusedBatchNormV3 || s.op == OpId::kFusedBatchNormGradV3) {
    return run_batch_norm(s, in);
  }
  nn::PoolOptions pool;
  pool.ksize = s.ksize;
  pool.strides = s.conv.strides;
  pool.padding = s.conv.padding;
  pool.explicit_paddings = s.conv.explicit_paddings;
  pool.channels_first = s.conv.channels_first;
  switch (s.op) {
    case OpId::kConv2D:
      return nn::conv2d(in[0], in[1], s.conv);
    case OpId::kConv2DBackpropInput:
      return nn::conv2d_backprop_input(s.dims, in[0], in[1], s.conv);
    case OpId::kConv2DBackpropFilter:
      return nn::conv2d_backprop_filter(in[0], s.dims, in[1], s.conv);
    case OpId::kMaxPool:
      return nn::max_pool2d(in[0], pool);
    case OpId::kMaxPoolGrad:
      return nn::max_pool_grad(in[0], nn::max_pool2d(in[0], pool), in[1], pool);
    case OpId::kAvgPool:
      return nn::avg_pool2d(in[0], pool);
    default:
      return nn::avg_pool_grad(s.dims, in[0], pool);
  }
}

// Makes a variable of in[0] on the device (VarHandleOp, AssignVariableOp), runs the step's
// op on it and returns its value (ReadVariableOp): in[0], or in[0] + in[1], in[0] - in[1],
// or in[0] after two Adam steps with the gradient in[1] (ResourceApplyAdam).
inline Tensor run_variable(const Step& s, const std::vector<Tensor>& in) {
  switch (s.op) {
    case OpId::kAssignVariableOp: {
      Variable v(zeros_like(in[0]));
      v.assign(in[0]);
      return v.read_value();
    }
    case OpId::kAssignAddVariableOp: {
      Variable v(in[0]);
      v.assign_add(in[1]);
      return v.read_value();
    }
    case OpId::kAssignSubVariableOp: {
      Variable v(in[0]);
      v.assign_sub(in[1]);
      return v.read_value();
    }
    case OpId::kResourceApplyAdam: {
      Variable v(in[0]);
      optimizers::Adam adam(0.25);
      adam.apply_gradients({{in[1], v}});
      adam.apply_gradients({{in[1], v}});
      return v.read_value();
    }
    default:  // VarHandleOp, ReadVariableOp
      return Variable(in[0]).read_value();
  }
}

inline Tensor run_op(const Step& s, const std::vector<Tensor>& in) {
  switch (s.kind) {
    case StepKind::kRandom:
      return run_random(s);
    case StepKind::kMatMul:
      return matmul(in[0], in[1], s.flag_a, s.flag_b);
    case StepKind::kAddN:
      return add_n(in);
    case StepKind::kBinary:
      return kBinaryOps[s.variant].fn(in[0], in[1]);
    case StepKind::kUnary:
      return kUnaryOps[s.variant].fn(in[0]);
    case StepKind::kReduce: {
      const Axes axes = s.axes ? Axes(absl::MakeConstSpan(*s.axes)) : Axes();
      return kReductionOps[s.variant].fn(in[0], axes, s.flag_a);
    }
    case StepKind::kArg:
      return s.op == OpId::kArgMax ? argmax(in[0], s.axis, s.dtype)
                                   : argmin(in[0], s.axis, s.dtype);
    case StepKind::kArray:
      return run_array(s, in);
    case StepKind::kNn:
      return run_nn(s, in);
    case StepKind::kSegmentSum:
      return unsorted_segment_sum(in[0], in[1], s.count);
    case StepKind::kClip:
      return clip_by_value(in[0], in[1], in[2]);
    case StepKind::kConv:
      return run_conv(s, in);
    case StepKind::kVariable:
      return run_variable(s, in);
    case StepKind::kCast:
      return cast(in[0], s.dtype);
    default:
      return s.op == OpId::kStopGradient ? stop_gradient(in[0]) : identity(in[0]);
  }
}

// Makes a leaf or a fill (fill, zeros, ones, or range of values (start, limit, delta)).
inline Tensor make_source(const Step& s) {
  if (s.kind == StepKind::kFill) {
    if (s.variant == 3) return range(s.values[0], s.values[1], s.values[2], s.dtype);
    if (s.variant == 1) return zeros(s.shape, s.dtype);
    if (s.variant == 2) return ones(s.shape, s.dtype);
    return fill(s.shape, s.values[0], s.dtype);
  }
  return make_leaf(s);
}

}  // namespace mt::testing
