#include "runtime/ops/array_ops.h"

#include "absl/container/inlined_vector.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

namespace mt {
namespace {

Tensor run(OpId op, const Tensor& x, const OpAttrs& attrs) {
  const Tensor* input = &x;
  return internal::value_or_throw(internal::execute(op, absl::MakeConstSpan(&input, 1), attrs));
}

Tensor run_many(OpId op, absl::Span<const Tensor> values, const OpAttrs& attrs) {
  absl::InlinedVector<const Tensor*, 8> inputs;
  for (const Tensor& t : values) inputs.push_back(&t);
  return internal::value_or_throw(internal::execute(op, inputs, attrs));
}

std::vector<Tensor> run_split(const Tensor& value, const OpAttrs& attrs) {
  const Tensor* input = &value;
  internal::Tensors outs = internal::value_or_throw(
      internal::execute_all(OpId::kSplitV, absl::MakeConstSpan(&input, 1), attrs));
  return std::vector<Tensor>(outs.begin(), outs.end());
}

Scalar scalar(double v) { return Scalar{v, static_cast<int64_t>(v), v != 0}; }

}  // namespace

Tensor reshape(const Tensor& tensor, const Ints& shape) {
  OpAttrs attrs;
  attrs.dims.assign(shape.begin(), shape.end());
  return run(OpId::kReshape, tensor, attrs);
}

Tensor transpose(const Tensor& a, const Ints& perm) {
  OpAttrs attrs;
  attrs.dims.assign(perm.begin(), perm.end());
  if (perm.empty() && a.defined()) {
    for (int i = a.shape().rank() - 1; i >= 0; --i) attrs.dims.push_back(i);
  }
  return run(OpId::kTranspose, a, attrs);
}

Tensor expand_dims(const Tensor& input, int64_t axis) {
  OpAttrs attrs;
  attrs.axis = axis;
  return run(OpId::kExpandDims, input, attrs);
}

Tensor squeeze(const Tensor& input, const Ints& axis) {
  OpAttrs attrs;
  attrs.axes.assign(axis.begin(), axis.end());
  return run(OpId::kSqueeze, input, attrs);
}

Tensor concat(absl::Span<const Tensor> values, int64_t axis) {
  OpAttrs attrs;
  attrs.axis = axis;
  return run_many(OpId::kConcatV2, values, attrs);
}

Tensor stack(absl::Span<const Tensor> values, int64_t axis) {
  OpAttrs attrs;
  attrs.axis = axis;
  return run_many(OpId::kPack, values, attrs);
}

std::vector<Tensor> split(const Tensor& value, int64_t num_split, int64_t axis) {
  OpAttrs attrs;
  attrs.num_split = num_split;
  attrs.axis = axis;
  return run_split(value, attrs);
}

std::vector<Tensor> split(const Tensor& value, const Ints& size_splits, int64_t axis) {
  OpAttrs attrs;
  attrs.dims.assign(size_splits.begin(), size_splits.end());
  attrs.axis = axis;
  if (size_splits.empty()) attrs.num_split = 0;  // "[SplitV] num_split must be positive"
  return run_split(value, attrs);
}

Tensor slice(const Tensor& input, const Ints& begin, const Ints& size) {
  OpAttrs attrs;
  attrs.dims.assign(begin.begin(), begin.end());
  attrs.dims2.assign(size.begin(), size.end());
  return run(OpId::kSlice, input, attrs);
}

Tensor strided_slice(const Tensor& input, const Ints& begin, const Ints& end, const Ints& strides,
                     const StridedSliceOptions& options) {
  OpAttrs attrs;
  attrs.dims.assign(begin.begin(), begin.end());
  attrs.dims2.assign(end.begin(), end.end());
  if (strides.empty()) {
    attrs.dims3.assign(begin.size(), 1);
  } else {
    attrs.dims3.assign(strides.begin(), strides.end());
  }
  attrs.begin_mask = options.begin_mask;
  attrs.end_mask = options.end_mask;
  attrs.ellipsis_mask = options.ellipsis_mask;
  attrs.new_axis_mask = options.new_axis_mask;
  attrs.shrink_axis_mask = options.shrink_axis_mask;
  return run(OpId::kStridedSlice, input, attrs);
}

Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis) {
  OpAttrs attrs;
  attrs.axis = axis;
  const Tensor* inputs[] = {&params, &indices};
  return internal::value_or_throw(internal::execute(OpId::kGatherV2, inputs, attrs));
}

Tensor one_hot(const Tensor& indices, int64_t depth, double on_value, double off_value,
               int64_t axis, DType dtype) {
  OpAttrs attrs;
  attrs.depth = depth;
  attrs.value = scalar(on_value);
  attrs.off_value = scalar(off_value);
  attrs.axis = axis;
  attrs.dst_dtype = dtype;
  return run(OpId::kOneHot, indices, attrs);
}

Tensor broadcast_to(const Tensor& input, const Ints& shape) {
  OpAttrs attrs;
  attrs.dims.assign(shape.begin(), shape.end());
  return run(OpId::kBroadcastTo, input, attrs);
}

Tensor tile(const Tensor& input, const Ints& multiples) {
  OpAttrs attrs;
  attrs.dims.assign(multiples.begin(), multiples.end());
  return run(OpId::kTile, input, attrs);
}

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  OpAttrs attrs;
  attrs.axis = axis;
  attrs.exclusive = exclusive;
  attrs.reverse = reverse;
  return run(OpId::kCumsum, x, attrs);
}

namespace linalg {

Tensor band_part(const Tensor& input, int64_t num_lower, int64_t num_upper) {
  OpAttrs attrs;
  attrs.dims = {num_lower, num_upper};
  return run(OpId::kMatrixBandPart, input, attrs);
}

}  // namespace linalg

Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const Ints& shape) {
  OpAttrs attrs;
  attrs.dims.assign(shape.begin(), shape.end());
  const Tensor* inputs[] = {&indices, &updates};
  return internal::value_or_throw(internal::execute(OpId::kScatterNd, inputs, attrs));
}

Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices,
                                const Tensor& updates) {
  return run_many(OpId::kTensorScatterUpdate, {tensor, indices, updates}, OpAttrs());
}

Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates) {
  return run_many(OpId::kTensorScatterAdd, {tensor, indices, updates}, OpAttrs());
}

Tensor zeros_like(const Tensor& input) { return run(OpId::kZerosLike, input, OpAttrs()); }
Tensor ones_like(const Tensor& input) { return run(OpId::kOnesLike, input, OpAttrs()); }

Tensor where(const Tensor& condition, const Tensor& x, const Tensor& y) {
  const Tensor* inputs[] = {&condition, &x, &y};
  return internal::value_or_throw(internal::execute(OpId::kSelectV2, inputs, OpAttrs()));
}

}  // namespace mt
