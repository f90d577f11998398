// Shape functions of the array ops that join, split or index: ConcatV2, Pack, SplitV,
// GatherV2 and OneHot, with TensorFlow's error messages.
#include "absl/strings/str_join.h"
#include "kernels/array_layout.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

using Dims = absl::InlinedVector<int64_t, 8>;

std::string list(const Shape& shape) { return shape.to_list_string(); }

absl::Status push(OpId op, absl::Span<const int64_t> dims, DType dtype, OutputMetas* out) {
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  out->push_back(OutputMeta{std::move(shape), dtype});
  return absl::OkStatus();
}

absl::Status check_same_dtypes(OpId op, absl::Span<const TensorMeta> inputs) {
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  for (const TensorMeta& t : inputs)
    MT_RETURN_IF_ERROR(check_same_dtype(op, inputs[0].dtype, t.dtype));
  return absl::OkStatus();
}

absl::Status concat_dims(OpId op, absl::Span<const TensorMeta> inputs, int64_t axis, Dims* dims) {
  const Shape& first = *inputs[0].shape;
  const int64_t rank = first.rank();
  if (rank == 0) return op_error(op, "ConcatOp : Can't concatenate scalars (use tf.stack instead)");
  if (axis < -rank || axis >= rank) {
    return op_error(op, "ConcatOp : Expected concatenating dimensions in the range [", -rank, ", ",
                    rank, "), but got ", axis);
  }
  const int64_t a = canonical_axis(axis, rank);
  dims->assign(first.dims().begin(), first.dims().end());
  (*dims)[a] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& s = *inputs[i].shape;
    if (s.rank() != rank) {
      return op_error(op, "ConcatOp : Ranks of all input tensors should match: shape[0] = ",
                      list(first), " vs. shape[", i, "] = ", list(s));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != a && s.dim(d) != first.dim(d)) {
        return op_error(op, "ConcatOp : Dimension ", d,
                        " in both shapes must be equal: ", "shape[0] = ", list(first),
                        " vs. shape[", i, "] = ", list(s));
      }
    }
    (*dims)[a] += s.dim(a);
  }
  return absl::OkStatus();
}

absl::Status pack_dims(OpId op, absl::Span<const TensorMeta> inputs, int64_t axis, Dims* dims) {
  const Shape& first = *inputs[0].shape;
  const int64_t rank = first.rank() + 1;
  if (axis < -rank || axis >= rank) {
    return op_error(op, "axis = ", axis, " not in [", -rank, ", ", rank, ")");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (*inputs[i].shape != first) {
      return op_error(op, "Shapes of all inputs must match: values[0].shape = ", list(first),
                      " != values[", i, "].shape = ", list(*inputs[i].shape));
    }
  }
  dims->assign(first.dims().begin(), first.dims().end());
  dims->insert(dims->begin() + canonical_axis(axis, rank), static_cast<int64_t>(inputs.size()));
  return absl::OkStatus();
}

// The most equal parts SplitV makes. Each is a tensor of its own: 2^40 parts of an empty
// dimension, say, exhausted the host describing them (std::bad_alloc, an abort).
constexpr int64_t kMaxSplitParts = int64_t{1} << 16;

// SplitV's piece sizes along the axis: attrs.dims (one -1 takes the rest) or num_split
// equal parts.
absl::Status split_sizes(OpId op, int64_t dim, const OpAttrs& a, Dims* sizes) {
  if (a.dims.empty()) {
    if (a.num_split <= 0) return op_error(op, "num_split must be positive, got ", a.num_split);
    if (a.num_split > kMaxSplitParts) {
      return op_error(op, "num_split ", a.num_split, " is more than the ", kMaxSplitParts,
                      " parts supported");
    }
    if (dim % a.num_split != 0) {
      return op_error(op, "Number of ways to split should evenly divide the split dimension, ",
                      "but got split_dim ", a.axis, " (size = ", dim, ") and num_split ",
                      a.num_split);
    }
    sizes->assign(a.num_split, dim / a.num_split);
    return absl::OkStatus();
  }
  int unknown = -1;
  int64_t total = 0;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] == -1 && unknown < 0) {
      unknown = static_cast<int>(i);
      continue;
    }
    if (a.dims[i] < 0) {
      return op_error(op, "Split sizes must be non-negative or a single -1, got ",
                      absl::StrJoin(a.dims, ","));
    }
    // Sizes past int64 fail below: the total saturates instead of overflowing.
    if (__builtin_add_overflow(total, a.dims[i], &total)) total = INT64_MAX;
  }
  sizes->assign(a.dims.begin(), a.dims.end());
  if ((unknown < 0 && total != dim) || (unknown >= 0 && total > dim)) {
    return op_error(op, "Determined shape must either match input shape along split_dim ",
                    "exactly if fully specified, or be less than the size of the input along ",
                    "split_dim if not fully specified.  Got: ", total);
  }
  if (unknown >= 0) (*sizes)[unknown] = dim - total;
  return absl::OkStatus();
}

absl::Status check_indices(OpId op, DType dtype, const char* what) {
  if (dtype == DType::kInt32 || dtype == DType::kInt64) return absl::OkStatus();
  return op_error(op, what, " must be int32 or int64, got ", dtype_name(dtype));
}

}  // namespace

absl::Status infer_concat(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                          OutputMetas* out) {
  if (inputs.empty()) return op_error(op, "expects at least 1 input, got 0");
  MT_RETURN_IF_ERROR(check_same_dtypes(op, inputs));
  Dims dims;
  MT_RETURN_IF_ERROR(op == OpId::kPack ? pack_dims(op, inputs, attrs.axis, &dims)
                                       : concat_dims(op, inputs, attrs.axis, &dims));
  return push(op, dims, inputs[0].dtype, out);
}

absl::Status infer_split(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                         OutputMetas* out) {
  const Shape& in = *inputs[0].shape;
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  const int64_t rank = in.rank();
  if (attrs.axis < -rank || attrs.axis >= rank) {
    return op_error(op, "split_dim ", attrs.axis, " is out of range [", -rank, ", ", rank, ")");
  }
  const int64_t axis = canonical_axis(attrs.axis, rank);
  Dims sizes;
  MT_RETURN_IF_ERROR(split_sizes(op, in.dim(axis), attrs, &sizes));
  Dims dims(in.dims().begin(), in.dims().end());
  for (int64_t size : sizes) {
    dims[axis] = size;
    MT_RETURN_IF_ERROR(push(op, dims, inputs[0].dtype, out));
  }
  return absl::OkStatus();
}

absl::Status infer_gather(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                          OutputMetas* out) {
  const Shape& params = *inputs[0].shape;
  const Shape& indices = *inputs[1].shape;
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  MT_RETURN_IF_ERROR(check_indices(op, inputs[1].dtype, "indices"));
  const int64_t rank = params.rank();
  if (attrs.axis < -rank || attrs.axis >= rank) {
    return op_error(op, "Expected axis in the range [", -rank, ", ", rank, "), but got ",
                    attrs.axis);
  }
  const int64_t axis = canonical_axis(attrs.axis, rank);
  Dims dims(params.dims().begin(), params.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), params.dims().begin() + axis + 1, params.dims().end());
  return push(op, dims, inputs[0].dtype, out);
}

absl::Status infer_one_hot(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                           OutputMetas* out) {
  const Shape& indices = *inputs[0].shape;
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  if (static_cast<int>(attrs.dst_dtype) >= kNumDTypes) {
    return op_error(op, "invalid output dtype ", static_cast<int>(attrs.dst_dtype));
  }
  if (attrs.depth < 0) return op_error(op, "depth must be non-negative, got: ", attrs.depth);
  const int64_t rank = indices.rank();
  if (attrs.axis < -1 || attrs.axis > rank) {
    return op_error(op, "Expected axis to be -1 or between [0, ", rank + 1,
                    ").  But received: ", attrs.axis);
  }
  Dims dims(indices.dims().begin(), indices.dims().end());
  dims.insert(dims.begin() + (attrs.axis == -1 ? rank : attrs.axis), attrs.depth);
  return push(op, dims, attrs.dst_dtype, out);
}

}  // namespace mt::internal
