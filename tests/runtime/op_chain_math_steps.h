#pragma once
// Drawing the steps of a random op chain (op_chain.h) that compute: binary ops, MatMul and
// BatchMatMulV2, reductions, ArgMax and ArgMin, the nn ops; and the bound of an integer
// result, which keeps overflow out of the chains.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/runtime/op_chain.h"

namespace mt::testing {

inline Step OpChain::draw_binary(int a) {
  Step s;
  s.kind = StepKind::kBinary;
  s.variant = uniform(0, static_cast<int>(std::size(kBinaryOps)) - 1);
  s.op = kBinaryOps[s.variant].op;
  const DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
  const std::vector<int64_t> shape = shape_of(a);
  int b = chance(0.85) ? operand(dtype, broadcastable(shape)) : any_defined();
  s.inputs = chance(0.5) ? std::vector<int>{a, b} : std::vector<int>{b, a};
  return s;
}

// MatMul on rank 2, BatchMatMulV2 above (matmul() picks): b gets a's inner dimension and,
// batched, batch dimensions that broadcast with a's.
inline Step OpChain::draw_matmul(int a) {
  Step s;
  s.kind = StepKind::kMatMul;
  s.flag_a = chance(0.25);
  s.flag_b = chance(0.25);
  const DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
  const std::vector<int64_t> shape = shape_of(a);
  const int rank = static_cast<int>(shape.size());
  int b;
  if (rank >= 2 && chance(0.9)) {
    const int64_t k = shape[rank - (s.flag_a ? 2 : 1)];
    const int64_t n = std::vector<int64_t>{1, 2, 3, 5}[uniform(0, 3)];
    std::vector<int64_t> b_shape = broadcastable({shape.begin(), shape.end() - 2});
    if (rank == 2 && chance(0.2)) b_shape = {std::vector<int64_t>{1, 2, 3}[uniform(0, 2)]};
    if (count(shape) * n > kMaxElements) b_shape.clear();
    b_shape.push_back(s.flag_b ? n : k);
    b_shape.push_back(s.flag_b ? k : n);
    b = operand(dtype, b_shape);
  } else {
    b = any_defined();
  }
  s.inputs = {a, b};
  const bool batched = shape_of(a).size() > 2 || shape_of(b).size() > 2;
  s.op = batched ? OpId::kBatchMatMulV2 : OpId::kMatMul;
  return s;
}

inline Step OpChain::draw_reduce(int a) {
  Step s;
  s.kind = StepKind::kReduce;
  s.variant = uniform(0, static_cast<int>(std::size(kReductionOps)) - 1);
  s.op = kReductionOps[s.variant].op;
  s.flag_a = chance(0.3);  // keep_dims
  s.inputs = {a};
  const int rank = static_cast<int>(shape_of(a).size());
  if (chance(0.3)) return s;  // every axis
  s.axes.emplace();
  for (int d = -rank - 1; d <= rank; ++d) {
    const bool valid = d >= -rank && d < rank;
    if (chance(valid ? 0.4 : 0.03)) s.axes->push_back(d);  // out of range or twice: errors
  }
  return s;
}

// ArgMax or ArgMin along an axis in range, as int32 or int64 (now and then neither).
inline Step OpChain::draw_arg(int a) {
  Step s;
  s.kind = StepKind::kArg;
  s.op = chance(0.5) ? OpId::kArgMax : OpId::kArgMin;
  s.inputs = {a};
  const int rank = static_cast<int>(shape_of(a).size());
  s.axis = chance(kBadAttrs) ? rank : uniform(-rank, std::max(rank - 1, -rank));
  s.dtype = chance(kBadAttrs) ? DType::kFloat32 : chance(0.5) ? DType::kInt32 : DType::kInt64;
  return s;
}

// Softmax and LogSoftmax of a; BiasAdd of a bias as long as a's last dimension;
// SparseSoftmaxCrossEntropyWithLogits of logits a and labels in [0, classes) (out of range,
// the CPU fails and a GPU gives NaN: not drawn), one of its outputs.
inline Step OpChain::draw_nn(int a) {
  static const std::vector<OpId>& ops = *new std::vector<OpId>([] {
    std::vector<OpId> v = MT_OP_LIST(MT_NN_OPS);
    for (OpId op : MT_OP_LIST(MT_LAYER_NORM_OPS)) v.push_back(op);
    for (OpId op : MT_OP_LIST(MT_ATTENTION_OPS)) v.push_back(op);
    return v;
  }());
  Step s;
  s.kind = StepKind::kNn;
  s.op = ops[uniform(0, static_cast<int>(ops.size()) - 1)];
  if (s.op == OpId::kDotProductAttention || s.op == OpId::kDotProductAttentionGrad) {
    draw_attention(s, a);
    return s;
  }
  DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
  std::vector<int64_t> shape = shape_of(a);
  const bool norm =
      s.op == OpId::kLayerNorm || s.op == OpId::kLayerNormGrad || s.op == OpId::kAddLayerNorm;
  // Mostly an input of a dtype and rank the op takes (BiasAdd: rank 2 or more; the layer
  // norms: a last axis with elements).
  const bool wide =
      norm ? !shape.empty() && shape.back() > 0 : s.op != OpId::kBiasAdd || shape.size() >= 2;
  if ((!dtype_in(dtype, op_dtypes(s.op)) || !wide) && chance(0.8)) {
    dtype = pick_dtype(op_dtypes(s.op));
    if (!wide && norm) shape = {3, 5};
    if (!wide && !norm) shape.insert(shape.begin(), 2 - shape.size(), 3);
    a = operand(dtype, shape);
  }
  s.inputs = {a};
  const int64_t last = shape.empty() ? 1 : shape.back();
  if (s.op == OpId::kBiasAdd) {
    s.inputs.push_back(operand(dtype, {chance(kBadAttrs) ? last + 1 : last}));
  } else if (s.op == OpId::kSparseSoftmaxCrossEntropyWithLogits) {
    if (!shape.empty()) shape.pop_back();
    if (chance(kBadAttrs)) shape.push_back(1);
    s.inputs.push_back(index_leaf(shape, last));
    s.flag_a = chance(0.3);  // the op's own wrapper: rank-2 logits only
    s.flag_b = chance(0.5);  // its gradient
  } else if (s.op == OpId::kGelu) {
    s.flag_a = chance(0.5);  // approximate
  } else if (norm) {
    s.axis = shape.size() >= 2 && chance(0.3) ? -2 : -1;
    s.flag_a = chance(kBadAttrs);  // a negative epsilon
    if (s.op == OpId::kLayerNormGrad || s.op == OpId::kAddLayerNorm) {
      s.flag_b = chance(0.3);              // dgamma instead of dx; the sum instead of y
      std::vector<int64_t> other = shape;  // dy, or the residual
      if (chance(kBadAttrs) && !other.empty()) other.back() += 1;
      const int b = operand(dtype, other);
      s.inputs.insert(s.op == OpId::kAddLayerNorm ? s.inputs.end() : s.inputs.begin(), b);
    }
  }
  return s;
}

// DotProductAttention of q = a when it has rank 4 (mostly another q otherwise) and k and v
// of a few keys, one kv head or q's, causal or not; now and then a k of another depth or an
// infinite scale. DotProductAttentionGrad takes do first (run_attention runs the forward
// pass on the device for o and lse); s.pick says which output the step gives.
inline void OpChain::draw_attention(Step& s, int a) {
  DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
  std::vector<int64_t> q = shape_of(a);
  if ((!dtype_in(dtype, op_dtypes(s.op)) || q.size() != 4) && chance(0.8)) {
    static constexpr int64_t kSizes[] = {0, 1, 2, 3, 5};
    dtype = pick_dtype(op_dtypes(s.op));
    q = {uniform(1, 2), kSizes[uniform(0, 4)], uniform(1, 2) * 2, kSizes[uniform(1, 4)]};
    a = operand(dtype, q);
  }
  const bool rank4 = q.size() == 4;
  const int64_t b = rank4 ? q[0] : 1, t = rank4 ? q[1] : 1, h = rank4 ? q[2] : 1;
  const int64_t d = rank4 ? q[3] : 1, keys = uniform(0, 6), dv = uniform(1, 5);
  const int64_t hk = chance(0.5) ? h : 1;
  s.inputs = {a, operand(dtype, {b, keys, hk, chance(kBadAttrs) ? d + 1 : d}),
              operand(dtype, {b, keys, hk, dv})};
  s.flag_a = chance(0.5);        // causal
  s.flag_b = chance(kBadAttrs);  // an infinite scale
  s.pick = uniform(0, 1);        // o or lse
  if (s.op == OpId::kDotProductAttentionGrad) {
    s.inputs.insert(s.inputs.begin(), operand(dtype, {b, t, h, dv}));
    s.pick = uniform(0, 2);  // dq, dk or dv
  }
}

// ClipByValue of a between bounds of a's dtype whose shapes broadcast to a's without growing
// it; bad: a bound of another dtype or of a shape that grows a.
inline Step OpChain::draw_clip(int a) {
  Step s;
  s.kind = StepKind::kClip;
  s.op = OpId::kClipByValue;
  const DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
  const std::vector<int64_t> shape = shape_of(a);
  const bool bad = chance(kBadAttrs);
  const int lo = operand(dtype, broadcastable(shape));
  std::vector<int64_t> hi_shape = broadcastable(shape);
  if (bad && chance(0.5)) hi_shape.insert(hi_shape.begin(), 2);
  const int hi = operand(bad ? random_dtype() : dtype, hi_shape);
  s.inputs = {a, lo, hi};
  return s;
}

// UnsortedSegmentSum of a's rows (its first dimension, or a scalar as one row) into
// `count` segments, ids in [-1, count) (-1 drops a row); now and then ids of a shape that does
// not prefix a's.
inline Step OpChain::draw_segment_sum(int a) {
  Step s;
  s.kind = StepKind::kSegmentSum;
  s.op = OpId::kUnsortedSegmentSum;
  std::vector<int64_t> ids_shape;
  if (!shape_of(a).empty()) ids_shape.push_back(shape_of(a)[0]);
  if (chance(kBadAttrs)) ids_shape.push_back(2);
  s.count = uniform(0, 4);
  Step ids = leaf(chance(0.5) ? DType::kInt32 : DType::kInt64, std::move(ids_shape));
  for (double& v : ids.values) v = uniform(-1, static_cast<int>(s.count) - 1);
  add(ids);
  s.inputs = {a, static_cast<int>(steps_.size()) - 1};
  return s;
}

// A variable made of a, then one op of MT_RESOURCE_OPS on it (run_variable); the
// assignments of a value of a's dtype and shape, ResourceApplyAdam of a gradient so.
inline Step OpChain::draw_variable(int a) {
  const std::initializer_list<OpId> ops = MT_OP_LIST(MT_RESOURCE_OPS);
  Step s;
  s.kind = StepKind::kVariable;
  s.op = ops.begin()[uniform(0, static_cast<int>(ops.size()) - 1)];
  s.inputs = {a};
  if (s.op == OpId::kAssignAddVariableOp || s.op == OpId::kAssignSubVariableOp ||
      s.op == OpId::kResourceApplyAdam) {
    const DType dtype = reference_[a].dtype;  // copies: operand() may grow reference_
    const std::vector<int64_t> shape = shape_of(a);
    s.inputs.push_back(operand(dtype, shape));
  }
  return s;
}

// The largest magnitude an integer result of `s` (or any product, Prod) may reach, from the
// reference inputs; 0 for a result that is neither or cannot grow.
inline double OpChain::predicted_bound(const Step& s) const {
  if (s.inputs.empty()) return 0;
  const Outcome& x = reference_[s.inputs[0]];
  if (x.code != absl::StatusCode::kOk) return 0;
  // A float product may overflow in one order and not in another: bounded as integers are.
  const bool prod = s.op == OpId::kProd;
  if (!is_int(x.dtype) && !prod) return 0;
  auto bound = [&](int i) { return reference_[i].max_abs; };
  if (s.op == OpId::kCumsum || s.op == OpId::kMirrorPadGrad) {  // at most every element
    return bound(s.inputs[0]) * std::max<double>(1, static_cast<double>(x.values.size()));
  }
  switch (s.kind) {
    case StepKind::kMatMul: {
      const std::vector<int64_t>& shape = shape_of(s.inputs[0]);
      const double k = shape.size() >= 2
                           ? static_cast<double>(shape[shape.size() - 2] + shape[shape.size() - 1])
                           : 1;  // at least the inner dimension
      return bound(s.inputs[0]) * bound(s.inputs[1]) * k;
    }
    case StepKind::kAddN: {
      double sum = 0;
      for (int i : s.inputs) sum += bound(i);
      return sum;
    }
    case StepKind::kBinary: {
      const double a = bound(s.inputs[0]), b = bound(s.inputs[1]);
      switch (s.op) {
        case OpId::kMul:
          return a * b;
        case OpId::kPow:
          return a <= 1 ? 1 : std::pow(a, b);
        case OpId::kSquaredDifference:
          return (a + b) * (a + b);
        default:
          return a + b;
      }
    }
    case StepKind::kNn:  // BiasAdd
      return s.inputs.size() == 2 ? bound(s.inputs[0]) + bound(s.inputs[1]) : 0;
    case StepKind::kVariable:  // the assignments add or subtract (Adam takes floats only)
      return s.inputs.size() == 2 ? bound(s.inputs[0]) + bound(s.inputs[1]) : bound(s.inputs[0]);
    case StepKind::kSegmentSum:
      return bound(s.inputs[0]) * std::max<double>(1, static_cast<double>(x.values.size()));
    case StepKind::kUnary:
      return s.op == OpId::kSquare ? bound(s.inputs[0]) * bound(s.inputs[0]) : bound(s.inputs[0]);
    case StepKind::kReduce: {
      const double n = std::max<double>(1, static_cast<double>(x.values.size()));
      if (prod) return std::pow(std::max(1.0, bound(s.inputs[0])), n);
      return bound(s.inputs[0]) * n;
    }
    default:
      return bound(s.inputs[0]);
  }
}

}  // namespace mt::testing
