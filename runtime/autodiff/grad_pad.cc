// The gradients of Pad, PadV2, MirrorPad and TopKV2 (Note [Gradients beside their rows] in
// grad_fns.h), as TensorFlow's: a constant pad's is the slice of the gradient the input
// occupies, MirrorPad's is MirrorPadGrad, TopKV2's adds each value's gradient into the input
// element it came from.
#include <cstdint>
#include <vector>

#include "runtime/autodiff/grad_fns.h"
#include "runtime/ops/array_ops.h"
#include "runtime/ops/constant.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pad_ops.h"

namespace mt::internal {
namespace {

Ints dims_of(const Shape& s) { return Ints(s.dims().begin(), s.dims().end()); }

Paddings paddings_of(const OpAttrs& attrs) {
  Paddings pads;
  for (size_t i = 0; i + 1 < attrs.dims.size(); i += 2)
    pads.emplace_back(attrs.dims[i], attrs.dims[i + 1]);
  return pads;
}

// Pad and PadV2 (whose constant is an attribute, so gets no gradient).
Grads constant_pad_grad(const GradContext& c) {
  Ints begin;
  for (size_t i = 0; i < c.attrs.dims.size(); i += 2) begin.push_back(c.attrs.dims[i]);
  return {slice(c.output_grads[0], begin, dims_of(c.inputs[0].shape()))};
}

}  // namespace

template <>
Grads Grad<OpId::kPad>::run(const GradContext& c) {
  return constant_pad_grad(c);
}

template <>
Grads Grad<OpId::kPadV2>::run(const GradContext& c) {
  return constant_pad_grad(c);
}

template <>
Grads Grad<OpId::kMirrorPad>::run(const GradContext& c) {
  return {mirror_pad_grad(c.output_grads[0], paddings_of(c.attrs),
                          c.attrs.symmetric ? PadMode::kSymmetric : PadMode::kReflect)};
}

// The values' gradient, added by flat input index (row * columns + index) with
// UnsortedSegmentSum (Note [Gradients of element picks] in grad_array.cc); the indices get
// none, and a gradient flowing into them is not propagated.
template <>
Grads Grad<OpId::kTopKV2>::run(const GradContext& c) {
  const Shape& in = c.inputs[0].shape();
  const Tensor& g = c.output_grads[0];
  const int64_t cols = in.dim(in.rank() - 1);
  if (cols == 0) return {g};  // k is 0: g has the input's shape
  const int64_t rows = in.num_elements() / cols, k = c.attrs.k;
  std::vector<int64_t> starts(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) starts[r] = r * cols;
  const Tensor at =
      add(cast(reshape(c.outputs[1], {rows, k}), DType::kInt64), from_vector(starts, {rows, 1}));
  const Tensor sums = unsorted_segment_sum(reshape(g, {-1}), reshape(at, {-1}), rows * cols);
  return {reshape(sums, dims_of(in))};
}

}  // namespace mt::internal
