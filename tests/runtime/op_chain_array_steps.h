#pragma once
// Drawing the array ops (MT_ARRAY_OPS) of a random op chain (op_chain.h): attributes valid
// for the input's shape, except with probability kBadAttrs, where one is made invalid so
// that the shape functions' errors are compared too. Outputs stay within kMaxElements.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/runtime/op_chain.h"

namespace mt::testing {

inline Step OpChain::draw_array(int a) {
  const std::initializer_list<OpId> ops = MT_OP_LIST(MT_ARRAY_OPS);
  Step s;
  s.kind = StepKind::kArray;
  s.op = ops.begin()[uniform(0, static_cast<int>(ops.size()) - 1)];
  s.inputs = {a};
  const std::vector<int64_t> shape = shape_of(a);  // a copy: operand() may grow reference_
  switch (s.op) {
    case OpId::kReshape:
    case OpId::kTranspose:
    case OpId::kExpandDims:
    case OpId::kSqueeze:
      draw_reshape(s, shape);
      break;
    case OpId::kConcatV2:
    case OpId::kPack:
      draw_join(s, shape);
      break;
    case OpId::kSplitV:
      draw_split(s, shape);
      break;
    case OpId::kSlice:
      draw_slice(s, shape);
      break;
    case OpId::kStridedSlice:
      draw_strided_slice(s, shape);
      break;
    case OpId::kGatherV2:
    case OpId::kOneHot:
      draw_index(s, shape);
      break;
    case OpId::kBroadcastTo:
    case OpId::kTile:
      draw_broadcast(s, shape);
      break;
    case OpId::kSelectV2:
      draw_select(s, shape);
      break;
    case OpId::kMatrixBandPart:
    case OpId::kCumsum:
      draw_band_or_scan(s, shape);
      break;
    case OpId::kPad:
    case OpId::kPadV2:
    case OpId::kMirrorPad:
    case OpId::kMirrorPadGrad:
      draw_pad(s, shape);
      break;
    case OpId::kTopKV2:
      draw_top_k(s, shape);
      break;
    case OpId::kScatterNd:
    case OpId::kTensorScatterUpdate:
    case OpId::kTensorScatterAdd:
      draw_scatter(s, shape);
      break;
    default:  // ZerosLike, OnesLike
      break;
  }
  return s;
}

// Reshape to another shape of as many elements; Transpose by a permutation (empty: the
// reverse); ExpandDims at an axis in range; Squeeze of size-1 dimensions.
inline void OpChain::draw_reshape(Step& s, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  const bool bad = chance(kBadAttrs);
  const int64_t n = count(shape);
  if (s.op == OpId::kReshape) {
    s.dims = shape;
    std::reverse(s.dims.begin(), s.dims.end());
    if (chance(0.3)) s.dims.insert(s.dims.begin() + uniform(0, rank), 1);
    if (chance(0.3)) s.dims = {n};
    for (int64_t f : {2, 3, 5, 7}) {
      if (n > 0 && n % f == 0 && chance(0.2)) s.dims = chance(0.5) ? Ints{f, -1} : Ints{-1, f};
    }
    if (bad) s.dims = chance(0.5) ? Ints{n + 1} : Ints{-1, -1};
  } else if (s.op == OpId::kTranspose) {
    for (int i = 0; i < rank; ++i) s.dims.push_back(i);
    for (int i = rank - 1; i > 0; --i) std::swap(s.dims[i], s.dims[uniform(0, i)]);
    if (chance(0.15)) s.dims.clear();  // the reverse
    if (bad) s.dims.push_back(rank > 0 && chance(0.5) ? 0 : rank);
  } else if (s.op == OpId::kExpandDims) {
    s.axis = bad ? (chance(0.5) ? rank + 1 : -rank - 2) : uniform(-rank - 1, rank);
  } else {
    for (int i = 0; i < rank; ++i) {
      if (shape[i] == 1 && chance(0.5)) s.dims.push_back(chance(0.5) ? i : i - rank);
    }
    if (bad) s.dims.push_back(uniform(-rank - 1, rank));
  }
}

// ConcatV2 along an axis, of a and 0 to 2 tensors that differ from it only there; Pack of a
// and 0 to 2 tensors of its shape, along an axis of the output.
inline void OpChain::draw_join(Step& s, const std::vector<int64_t>& shape) {
  static constexpr int64_t kDims[] = {0, 1, 2, 3};
  const int rank = static_cast<int>(shape.size());
  const bool concat = s.op == OpId::kConcatV2;
  s.axis = concat ? uniform(-rank, std::max(rank - 1, -rank)) : uniform(-rank - 1, rank);
  if (chance(kBadAttrs)) s.axis = concat ? rank : rank + 1;
  const DType dtype = reference_[s.inputs[0]].dtype;
  const int64_t axis = s.axis < 0 ? s.axis + rank : s.axis;
  const int more = count(shape) * 3 > kMaxElements ? 0 : uniform(0, 2);
  for (int k = 0; k < more; ++k) {
    std::vector<int64_t> other = shape;
    if (concat && axis >= 0 && axis < rank) other[axis] = kDims[uniform(0, 3)];
    s.inputs.push_back(chance(1 - kBadAttrs) ? operand(dtype, other) : any_defined());
  }
}

// SplitV into equal parts or into sizes (one may be -1) that add up to the dimension; the
// step is one of the parts.
inline void OpChain::draw_split(Step& s, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  s.axis = uniform(-rank, std::max(rank - 1, -rank));
  const int64_t dim = rank > 0 ? shape[s.axis < 0 ? s.axis + rank : s.axis] : 0;
  const bool bad = chance(kBadAttrs);
  s.pick = uniform(0, 3);
  if (chance(0.5)) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= std::max<int64_t>(dim, 3); ++d) {
      if (dim % d == 0) divisors.push_back(d);
    }
    s.count = divisors[uniform(0, static_cast<int>(divisors.size()) - 1)];
    if (bad) s.count = chance(0.5) ? 0 : dim + 1;
    return;
  }
  int64_t left = dim;
  for (int k = uniform(0, 2); k > 0; --k) {
    s.dims.push_back(uniform(0, static_cast<int>(left)));
    left -= s.dims.back();
  }
  s.dims.push_back(left);
  if (chance(0.3)) s.dims[uniform(0, static_cast<int>(s.dims.size()) - 1)] = -1;
  if (bad) s.dims[0] += 1;
}

// Slice from a begin in [0, dim] of a size that fits (-1: to the end).
inline void OpChain::draw_slice(Step& s, const std::vector<int64_t>& shape) {
  for (int64_t dim : shape) {
    const int64_t begin = uniform(0, static_cast<int>(dim));
    s.dims.push_back(begin);
    s.dims2.push_back(chance(0.2) ? -1 : uniform(0, static_cast<int>(dim - begin)));
  }
  if (chance(kBadAttrs)) {
    if (shape.empty() || chance(0.3)) {
      s.dims.push_back(0);
    } else {
      s.dims2[0] = shape[0] - s.dims[0] + 1;
    }
  }
}

// StridedSlice: an entry per dimension (a range with any stride but 0, begin and end in or
// out of range, either masked; or an index with shrink_axis), some of them folded into an
// ellipsis, the last ones now and then left out, and now and then a new axis.
inline void OpChain::draw_strided_slice(Step& s, const std::vector<int64_t>& shape) {
  static constexpr int64_t kStrides[] = {1, 1, 1, 2, 3, -1, -2};
  const int rank = static_cast<int>(shape.size());
  int entries = chance(0.15) ? uniform(0, rank) : rank;
  int ellipsis = -1, folded = 0;  // the entry the ellipsis stands for, and how many dims
  if (entries == rank && chance(0.2)) {
    ellipsis = uniform(0, rank);
    folded = uniform(0, rank - ellipsis);
  }
  const int new_axis = chance(0.15) ? uniform(0, entries) : -1;
  auto add = [&](int64_t begin, int64_t end, int64_t stride, int32_t* mask) {
    if (mask != nullptr) *mask |= 1 << s.dims.size();
    s.dims.push_back(begin);
    s.dims2.push_back(end);
    s.dims3.push_back(stride);
  };
  for (int d = 0; d <= rank; ++d) {
    if (d == new_axis) add(0, 0, 1, &s.masks.new_axis_mask);
    if (d == ellipsis) add(0, 0, 1, &s.masks.ellipsis_mask);
    if (d == rank || d >= entries) break;
    if (d >= ellipsis && d < ellipsis + folded) continue;
    const int dim = static_cast<int>(shape[d]);
    if (dim > 0 && chance(0.1)) {
      const int64_t i = uniform(-dim, dim - 1);
      add(i, i + 1, 1, &s.masks.shrink_axis_mask);
      continue;
    }
    add(uniform(-dim - 2, dim + 1), uniform(-dim - 2, dim + 1), kStrides[uniform(0, 6)], nullptr);
    if (chance(0.2)) s.masks.begin_mask |= 1 << (s.dims.size() - 1);
    if (chance(0.2)) s.masks.end_mask |= 1 << (s.dims.size() - 1);
  }
  if (chance(kBadAttrs)) {
    if (s.dims3.empty() || chance(0.5)) {
      s.masks.ellipsis_mask |= 0b11;  // two ellipses
      while (s.dims.size() < 2) add(0, 0, 1, nullptr);
    } else {
      s.dims3[uniform(0, static_cast<int>(s.dims3.size()) - 1)] = 0;
    }
  }
}

// GatherV2 along an axis of a, with fresh indices in range (out of range, the CPU fails and
// a GPU gives zeros: not drawn); OneHot of a's integers, or of fresh ones of a's shape.
inline void OpChain::draw_index(Step& s, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  const bool bad = chance(kBadAttrs);
  if (s.op == OpId::kGatherV2) {
    s.axis = bad ? rank : uniform(-rank, std::max(rank - 1, -rank));
    const bool in_range = s.axis >= -rank && s.axis < rank;
    const int64_t dim = in_range ? shape[s.axis < 0 ? s.axis + rank : s.axis] : 0;
    std::vector<int64_t> indices(uniform(0, 2));
    for (int64_t& d : indices) d = uniform(1, 3);
    if (count(shape) * count(indices) > kMaxElements * std::max<int64_t>(dim, 1)) indices = {1};
    if (dim == 0) indices = {0};  // no index is in range
    s.inputs.push_back(index_leaf(indices, dim));
    return;
  }
  const DType dtype = reference_[s.inputs[0]].dtype;
  if (!is_int(dtype) && chance(0.9)) s.inputs[0] = operand(DType::kInt32, shape);
  s.count = bad ? -1 : uniform(0, 4);  // depth
  if (count(shape) * s.count > kMaxElements) s.count = 1;
  s.axis = chance(kBadAttrs) ? rank + 1 : uniform(-1, rank);
  s.dtype = random_dtype();
  s.values = {1, 0};
  if (chance(0.5)) s.values = {uniform(-3, 3) * 1.0, uniform(-3, 3) * 1.0};
}

// BroadcastTo a shape that a's broadcasts to; Tile by multiples of 0 to 3. Bad: a last
// dimension a's does not broadcast to (a negative one for a scalar).
inline void OpChain::draw_broadcast(Step& s, const std::vector<int64_t>& shape) {
  static constexpr int64_t kDims[] = {0, 1, 2, 3, 5};
  const int rank = static_cast<int>(shape.size());
  const bool bad = chance(kBadAttrs);
  const int64_t n = count(shape);
  if (s.op == OpId::kBroadcastTo) {
    s.dims = shape;
    int64_t grown = n;
    for (int64_t& d : s.dims) {
      if (d != 1 || chance(0.5)) continue;
      d = kDims[uniform(0, 4)];
      grown *= d;
    }
    if (chance(0.3)) s.dims.insert(s.dims.begin(), kDims[uniform(0, 4)]);
    if (grown * 5 > kMaxElements) s.dims = shape;
    if (bad && rank > 0) s.dims.back() = shape.back() == 1 ? -1 : shape.back() + 1;
    if (bad && rank == 0) s.dims = {-1};  // a scalar broadcasts to any shape but a negative one
    return;
  }
  int64_t grown = n;
  for (int i = 0; i < rank; ++i) {
    s.dims.push_back(chance(0.05) ? 0 : uniform(1, 3));
    grown *= s.dims.back();
  }
  if (grown > kMaxElements) s.dims.assign(rank, 1);
  if (bad && chance(0.5)) {
    s.dims.push_back(1);
  } else if (bad) {
    s.dims.assign(rank + 1, -1);
  }
}

// MatrixBandPart with bounds from -1 (all) to the matrix's size; Cumsum along an axis in
// range, exclusive or not, reversed or not. Bad: a bound past the matrix, an axis past the
// rank (a rank below 2, or 0, spoils them too).
inline void OpChain::draw_band_or_scan(Step& s, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  const bool bad = chance(kBadAttrs);
  if (s.op == OpId::kCumsum) {
    s.axis = bad ? rank : uniform(-rank, std::max(rank - 1, -rank));
    s.flag_a = chance(0.5);  // exclusive
    s.flag_b = chance(0.5);  // reverse
    return;
  }
  const int rows = rank >= 2 ? static_cast<int>(shape[rank - 2]) : 0;
  const int cols = rank >= 2 ? static_cast<int>(shape[rank - 1]) : 0;
  s.dims = {uniform(-1, rows), uniform(-1, cols)};
  if (bad) s.dims[uniform(0, 1)] = std::max(rows, cols) + 1;
}

// The pads: (before, after) for each dimension, each at most 2 and within what MirrorPad
// (below the dimension for REFLECT, flag_a false; at most it for SYMMETRIC) and MirrorPadGrad
// (the same of the unpadded size) accept; PadV2's constant in values. Paddings that would
// grow the output past kMaxElements are 0. Bad: a padding of -1, or (the mirrors) past the
// dimension.
inline void OpChain::draw_pad(Step& s, const std::vector<int64_t>& shape) {
  s.flag_a = chance(0.5);  // SYMMETRIC
  s.values = {static_cast<double>(uniform(1, 5))};
  int64_t elements = 1;
  s.dims.clear();
  for (int64_t n : shape) {
    int64_t most = 2;
    if (s.op == OpId::kMirrorPad) most = std::min<int64_t>(2, s.flag_a ? n : n - 1);
    if (s.op == OpId::kMirrorPadGrad) most = std::min<int64_t>(2, (n - 1) / 3);
    int64_t before = uniform(0, static_cast<int>(std::max<int64_t>(most, 0)));
    int64_t after = uniform(0, static_cast<int>(std::max<int64_t>(most, 0)));
    if (s.op == OpId::kMirrorPadGrad) elements *= n;
    if (s.op != OpId::kMirrorPadGrad) elements *= n + before + after;
    if (elements > kMaxElements) before = after = 0;
    s.dims.push_back(before);
    s.dims.push_back(after);
  }
  if (chance(kBadAttrs) && !s.dims.empty()) {  // a constant pad takes any size
    const bool mirror = s.op == OpId::kMirrorPad || s.op == OpId::kMirrorPadGrad;
    s.dims[uniform(0, static_cast<int>(s.dims.size()) - 1)] = mirror && chance(0.5) ? 8 : -1;
  }
}

// TopKV2: k up to the last dimension, sorted or not (flag_a), values or indices (pick); bad:
// k past the last dimension (a scalar input is bad too).
inline void OpChain::draw_top_k(Step& s, const std::vector<int64_t>& shape) {
  const int cols = shape.empty() ? 1 : static_cast<int>(shape.back());
  s.count = chance(kBadAttrs) ? cols + 1 : uniform(0, cols);
  s.flag_a = chance(0.5);
  s.pick = uniform(0, 1);
}

// SelectV2: a bool condition and two values of one dtype, their shapes broadcasting with
// a's (a is the condition when it is bool, else x).
inline void OpChain::draw_select(Step& s, const std::vector<int64_t>& shape) {
  const int a = s.inputs[0];
  const DType dtype = reference_[a].dtype;
  const bool bad = chance(kBadAttrs);
  if (dtype == DType::kBool && chance(0.7)) {
    const DType x = random_dtype();
    const int xi = operand(x, broadcastable(shape));
    s.inputs = {a, xi, operand(bad ? random_dtype() : x, broadcastable(shape))};
  } else {
    const int cond = operand(bad ? random_dtype() : DType::kBool, broadcastable(shape));
    s.inputs = {cond, a, operand(dtype, broadcastable(shape))};
  }
}

// ScatterNd of updates a (its first dimension counts the index rows; a scalar is one row of
// rank-1 indices) into a fresh shape; TensorScatterUpdate and TensorScatterAdd into a, of
// updates shaped as its slices. Index rows in range, duplicates allowed (they add, or the
// last one wins on both backends); bad: a row outside the output, which both backends reject
// (rank-0 tensors fail as they are).
inline void OpChain::draw_scatter(Step& s, const std::vector<int64_t>& shape) {
  const int a = s.inputs[0];
  const DType dtype = reference_[a].dtype;
  const bool nd = s.op == OpId::kScatterNd;
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> out, index_shape;
  int64_t rows = 0;
  int depth = 1;
  if (nd) {
    depth = uniform(1, 2);
    for (int k = 0; k < depth; ++k) out.push_back(uniform(1, 3));
    out.insert(out.end(), shape.begin() + std::min(rank, 1), shape.end());
    rows = rank == 0 ? 1 : shape[0];
    index_shape = rank == 0 ? std::vector<int64_t>{depth} : std::vector<int64_t>{rows, depth};
    s.dims = out;
  } else {
    out = shape;
    depth = uniform(1, std::max(rank, 1));
    rows = uniform(0, 3);
    index_shape = {rows, depth};
  }
  int64_t slices = 1;
  for (int k = 0; k < depth && k < static_cast<int>(out.size()); ++k) slices *= out[k];
  if (!nd && rank > 0) rows = std::min(rows, slices);  // none when a dimension is 0
  if (!nd && rank > 0) index_shape[0] = rows;
  Step idx = leaf(chance(0.5) ? DType::kInt32 : DType::kInt64, index_shape);
  for (int64_t r = 0; r < rows && slices > 0; ++r) {
    int64_t at = uniform(0, static_cast<int>(slices) - 1);
    for (int k = depth - 1; k >= 0; --k) {
      if (k >= static_cast<int>(out.size())) continue;
      idx.values[r * depth + k] = static_cast<double>(at % out[k]);
      at /= out[k];
    }
  }
  if (chance(kBadAttrs) && !idx.values.empty()) {
    const size_t v = uniform(0, static_cast<int>(idx.values.size()) - 1);
    const int k = static_cast<int>(v % depth);
    idx.values[v] = chance(0.5) ? -1 : (k < static_cast<int>(out.size()) ? out[k] : 1);
  }
  add(idx);
  const int index = static_cast<int>(steps_.size()) - 1;
  if (nd) {
    s.inputs = {index, a};
    return;
  }
  std::vector<int64_t> updates = {rows};
  if (depth <= rank) updates.insert(updates.end(), shape.begin() + depth, shape.end());
  s.inputs = {a, index, operand(dtype, updates)};
}

}  // namespace mt::testing
