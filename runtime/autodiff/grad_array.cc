// The gradients of the array ops and SelectV2 (Note [Gradients beside their rows] in
// grad_fns.h). Ops that pick elements without arithmetic (StridedSlice, GatherV2) send the
// gradient back with UnsortedSegmentSum: Note [Gradients of element picks].
#include <numeric>

#include "absl/types/span.h"
#include "runtime/autodiff/grad_fns.h"
#include "runtime/autodiff/grad_util.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"
#include "runtime/ops/array_ops.h"
#include "runtime/ops/ops.h"

namespace mt::internal {
namespace {

Ints dims_of(const Shape& s) { return Ints(s.dims().begin(), s.dims().end()); }

int64_t normalized_axis(int64_t axis, int rank) { return axis < 0 ? axis + rank : axis; }

Grads reshaped(const GradContext& c) {
  return {reshape(c.output_grads[0], dims_of(c.inputs[0].shape()))};
}

// Note [Gradients of element picks]: an op whose every output element is a copy of one
// input element is linear, and its gradient adds each output's gradient into the input
// element it came from. Running the op itself on the flat indices of its input (an int64
// "iota" of the input's shape) gives that element for every output; UnsortedSegmentSum
// then adds the gradients by those indices.
Tensor pick_grad(const GradContext& c, const Tensor& g) {
  const Shape& in = c.inputs[0].shape();
  std::vector<int64_t> iota(static_cast<size_t>(in.num_elements()));
  std::iota(iota.begin(), iota.end(), int64_t{0});
  const Tensor index = from_vector(iota, in.dims());
  const Tensor* input = &index;
  const Tensor picked = value_or_throw(execute(c.op, absl::MakeConstSpan(&input, 1), c.attrs));
  const Tensor flat =
      unsorted_segment_sum(reshape(g, {-1}), reshape(picked, {-1}), in.num_elements());
  return reshape(flat, dims_of(in));
}

}  // namespace

template <>
Grads Grad<OpId::kReshape>::run(const GradContext& c) {
  return reshaped(c);
}
template <>
Grads Grad<OpId::kExpandDims>::run(const GradContext& c) {
  return reshaped(c);
}
template <>
Grads Grad<OpId::kSqueeze>::run(const GradContext& c) {
  return reshaped(c);
}

template <>
Grads Grad<OpId::kTranspose>::run(const GradContext& c) {
  const auto& perm = c.attrs.dims;
  Ints inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return {transpose(c.output_grads[0], inverse)};
}

template <>
Grads Grad<OpId::kConcatV2>::run(const GradContext& c) {
  const int64_t axis = normalized_axis(c.attrs.axis, c.inputs[0].shape().rank());
  Ints sizes;
  for (const Tensor& t : c.inputs) sizes.push_back(t.shape().dim(static_cast<int>(axis)));
  const std::vector<Tensor> parts = split(c.output_grads[0], sizes, axis);
  return Grads(parts.begin(), parts.end());
}

template <>
Grads Grad<OpId::kPack>::run(const GradContext& c) {
  const int64_t axis = normalized_axis(c.attrs.axis, c.inputs[0].shape().rank() + 1);
  const std::vector<Tensor> parts =
      split(c.output_grads[0], static_cast<int64_t>(c.inputs.size()), axis);
  Grads grads;
  for (const Tensor& p : parts) grads.push_back(reshape(p, dims_of(c.inputs[0].shape())));
  return grads;
}

template <>
Grads Grad<OpId::kSplitV>::run(const GradContext& c) {
  const int64_t axis = normalized_axis(c.attrs.axis, c.inputs[0].shape().rank());
  return {concat(c.output_grads, axis)};
}

// Slice: the gradient padded with zeros before and after the slice along each dimension.
template <>
Grads Grad<OpId::kSlice>::run(const GradContext& c) {
  const Shape& in = c.inputs[0].shape();
  Tensor g = c.output_grads[0];
  for (int d = 0; d < in.rank(); ++d) {
    const int64_t before = c.attrs.dims[d], size = g.shape().dim(d);
    const int64_t after = in.dim(d) - before - size;
    if (before == 0 && after == 0) continue;
    Ints pad = dims_of(g.shape());
    std::vector<Tensor> pieces;
    if (before > 0) {
      pad[d] = before;
      pieces.push_back(zeros(pad, g.dtype()));
    }
    pieces.push_back(g);
    if (after > 0) {
      pad[d] = after;
      pieces.push_back(zeros(pad, g.dtype()));
    }
    g = concat(pieces, d);
  }
  return {g};
}

template <>
Grads Grad<OpId::kStridedSlice>::run(const GradContext& c) {
  return {pick_grad(c, c.output_grads[0])};
}

// GatherV2: params (O, N, I) gathered at K indices along the axis gives (O, K, I); the
// gradient adds (K, O * I) rows into (N, O * I) by index.
template <>
Grads Grad<OpId::kGatherV2>::run(const GradContext& c) {
  const Shape& params = c.inputs[0].shape();
  const int axis = static_cast<int>(normalized_axis(c.attrs.axis, params.rank()));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= params.dim(d);
  for (int d = axis + 1; d < params.rank(); ++d) inner *= params.dim(d);
  const int64_t n = params.dim(axis), k = c.inputs[1].num_elements();
  Tensor g = reshape(c.output_grads[0], {outer, k, inner});
  g = reshape(transpose(g, {1, 0, 2}), {k, outer * inner});
  Tensor summed = unsorted_segment_sum(g, reshape(c.inputs[1], {k}), n);
  summed = transpose(reshape(summed, {n, outer, inner}), {1, 0, 2});
  return {reshape(summed, dims_of(params)), Tensor()};
}

template <>
Grads Grad<OpId::kBroadcastTo>::run(const GradContext& c) {
  return {unbroadcast(c.output_grads[0], c.inputs[0].shape())};
}

// Tile: the gradient seen as (m0, s0, m1, s1, ...), summed over the multiples.
template <>
Grads Grad<OpId::kTile>::run(const GradContext& c) {
  const Shape& in = c.inputs[0].shape();
  Ints split_dims;
  std::vector<int64_t> axes;
  for (int d = 0; d < in.rank(); ++d) {
    split_dims.push_back(c.attrs.dims[d]);
    split_dims.push_back(in.dim(d));
    axes.push_back(2 * d);
  }
  const Tensor g = reshape(c.output_grads[0], split_dims);
  return {reshape(reduce_sum(g, Axes(absl::MakeConstSpan(axes))), dims_of(in))};
}

// MatrixBandPart is linear and keeps its elements in place: the band of the gradient.
template <>
Grads Grad<OpId::kMatrixBandPart>::run(const GradContext& c) {
  return {linalg::band_part(c.output_grads[0], c.attrs.dims[0], c.attrs.dims[1])};
}

// Cumsum: each input element adds into the outputs after it (before it when reverse), so
// the gradient is the cumulative sum the other way.
template <>
Grads Grad<OpId::kCumsum>::run(const GradContext& c) {
  return {cumsum(c.output_grads[0], c.attrs.axis, c.attrs.exclusive, !c.attrs.reverse)};
}

// The slices of `g` that index rows of `indices` ([..., K]) name, as tf.gather_nd: g
// viewed as [slices, ...] and gathered at each row's flat slice number (the rows were
// checked by the forward op). Shape indices.shape[:-1] + g.shape[K:].
Tensor gather_slices(const Tensor& g, const Tensor& indices) {
  const Shape& out = g.shape();
  const Shape& idx = indices.shape();
  const int depth = static_cast<int>(idx.dim(idx.rank() - 1));
  Ints rows(idx.dims().begin(), idx.dims().end() - 1);
  Ints slice(out.dims().begin() + depth, out.dims().end());
  Ints result = rows;
  result.insert(result.end(), slice.begin(), slice.end());
  if (depth == 0 || idx.num_elements() == 0) return zeros(result, g.dtype());
  Ints flat_shape = {-1};
  flat_shape.insert(flat_shape.end(), slice.begin(), slice.end());
  Tensor flat;
  if (depth == 1) {
    flat = reshape(indices, rows);
  } else {
    std::vector<int64_t> strides(static_cast<size_t>(depth));
    for (int64_t k = depth - 1, s = 1; k >= 0; --k) {
      strides[static_cast<size_t>(k)] = s;
      s *= out.dim(static_cast<int>(k));
    }
    flat = reduce_sum(mul(cast(indices, DType::kInt64), from_vector(strides, {depth})), -1);
  }
  return gather(reshape(g, flat_shape), flat, 0);
}

// ScatterNd: each update's gradient is its slice of the output's (gathered, as TensorFlow).
template <>
Grads Grad<OpId::kScatterNd>::run(const GradContext& c) {
  return {Tensor(), gather_slices(c.output_grads[0], c.inputs[0])};
}

// TensorScatterUpdate: the tensor's gradient is the output's with zeros in the slices the
// updates replaced; the updates take their slices of it.
template <>
Grads Grad<OpId::kTensorScatterUpdate>::run(const GradContext& c) {
  const Tensor& g = c.output_grads[0];
  const Tensor picked = gather_slices(g, c.inputs[1]);
  return {tensor_scatter_nd_update(g, c.inputs[1], zeros_like(picked)), Tensor(), picked};
}

// TensorScatterAdd: the tensor's gradient is the output's; the updates take their slices.
template <>
Grads Grad<OpId::kTensorScatterAdd>::run(const GradContext& c) {
  const Tensor& g = c.output_grads[0];
  return {g, Tensor(), gather_slices(g, c.inputs[1])};
}

template <>
Grads Grad<OpId::kSelectV2>::run(const GradContext& c) {
  const Tensor& g = c.output_grads[0];
  const Tensor zero = zeros_like(g);
  return {Tensor(), unbroadcast(where(c.inputs[0], g, zero), c.inputs[1].shape()),
          unbroadcast(where(c.inputs[0], zero, g), c.inputs[2].shape())};
}

// UnsortedSegmentSum: each data row's gradient is its segment's, zeros for a row whose id
// is negative (dropped by the op); none for the ids.
template <>
Grads Grad<OpId::kUnsortedSegmentSum>::run(const GradContext& c) {
  const Tensor& ids = c.inputs[1];
  const Tensor zero = zeros_like(ids);
  const Tensor rows = gather(c.output_grads[0], maximum(ids, zero));
  Ints mask_shape = dims_of(ids.shape());
  mask_shape.resize(rows.shape().rank(), 1);
  const Tensor kept = reshape(greater_equal(ids, zero), mask_shape);
  return {where(kept, rows, zeros_like(rows)), Tensor()};
}

}  // namespace mt::internal
