// Shape functions of the array ops (MT_ARRAY_OPS), with TensorFlow's error messages.
#include "absl/strings/str_join.h"
#include "kernels/array_layout.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

using Dims = absl::InlinedVector<int64_t, 8>;

absl::Status push(OpId op, absl::Span<const int64_t> dims, DType dtype, OutputMetas* out) {
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  out->push_back(OutputMeta{std::move(shape), dtype});
  return absl::OkStatus();
}

std::string list(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// Reshape: at most one -1, inferred from the input's element count.
absl::Status reshape_dims(OpId op, const Shape& in, absl::Span<const int64_t> shape, Dims* dims) {
  int unknown = -1;
  int64_t product = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (unknown >= 0) {
        return op_error(op, "Only one input size may be -1, not both ", unknown, " and ", i);
      }
      unknown = static_cast<int>(i);
    } else if (shape[i] < 0) {
      return op_error(op, "Size ", i, " must be non-negative, not ", shape[i]);
    } else if (__builtin_mul_overflow(product, shape[i], &product)) {
      return op_error(op, "requested shape ", list(shape), " has too many elements");
    }
  }
  dims->assign(shape.begin(), shape.end());
  const int64_t n = in.num_elements();
  if (unknown >= 0) {
    if (product == 0) {
      return op_error(op, "Reshape cannot infer the missing input size for an empty tensor ",
                      "unless all specified input sizes are non-zero");
    }
    if (n % product != 0) {
      return op_error(op, "Input to reshape is a tensor with ", n,
                      " values, but the requested shape requires a multiple of ", product);
    }
    (*dims)[unknown] = n / product;
  } else if (product != n) {
    return op_error(op, "Input to reshape is a tensor with ", n,
                    " values, but the requested shape has ", product);
  }
  return absl::OkStatus();
}

absl::Status check_perm(OpId op, int rank, absl::Span<const int64_t> perm) {
  if (static_cast<int>(perm.size()) != rank) {
    return op_error(op, "transpose expects a vector of size ", rank,
                    ". But input(1) is a vector of size ", perm.size());
  }
  absl::InlinedVector<bool, 8> seen(rank, false);
  for (int64_t d : perm) {
    if (d < 0 || d >= rank) return op_error(op, d, " is out of range [0 .. ", rank, ")");
    if (seen[d]) return op_error(op, d, " is missing from {", absl::StrJoin(perm, ","), "}.");
    seen[d] = true;
  }
  return absl::OkStatus();
}

absl::Status squeeze_dims(OpId op, const Shape& in, absl::Span<const int64_t> axes, Dims* dims) {
  const int rank = in.rank();
  absl::InlinedVector<bool, 8> drop(rank, false);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return op_error(op, "Tried to squeeze dim index ", axis, " for tensor with ", rank,
                      " dimensions.");
    }
    const int64_t a = canonical_axis(axis, rank);
    if (in.dim(a) != 1) {
      return op_error(op, "Can not squeeze dim[", a, "], expected a dimension of 1, got ",
                      in.dim(a));
    }
    drop[a] = true;
  }
  for (int i = 0; i < rank; ++i) {
    if (!(axes.empty() ? in.dim(i) == 1 : drop[i])) dims->push_back(in.dim(i));
  }
  return absl::OkStatus();
}

absl::Status slice_dims(OpId op, const Shape& in, const OpAttrs& a, Dims* dims) {
  const int rank = in.rank();
  if (static_cast<int>(a.dims.size()) != rank || static_cast<int>(a.dims2.size()) != rank) {
    return op_error(op, "Expected begin and size arguments to be 1-D tensors of size ", rank,
                    ", but got shapes [", a.dims.size(), "] and [", a.dims2.size(), "] instead.");
  }
  for (int i = 0; i < rank; ++i) {
    const int64_t b = a.dims[i], dim = in.dim(i);
    if (b < 0 || b > dim) {
      return op_error(op, "Expected begin[", i, "] in [0, ", dim, "], but got ", b);
    }
    const int64_t s = a.dims2[i] == -1 ? dim - b : a.dims2[i];
    if (s < 0 || s > dim - b) {
      return op_error(op, "Expected size[", i, "] in [0, ", dim - b, "], but got ", a.dims2[i]);
    }
    dims->push_back(s);
  }
  return absl::OkStatus();
}

absl::Status broadcast_to_dims(OpId op, const Shape& in, absl::Span<const int64_t> shape) {
  const int rank = in.rank(), out_rank = static_cast<int>(shape.size());
  for (int64_t d : shape) {
    if (d < 0) return op_error(op, "shape ", list(shape), " has a negative dimension");
  }
  if (rank > out_rank) {
    return op_error(op, "Rank of input (", rank, ") must be no greater than rank of output shape (",
                    out_rank, ").");
  }
  for (int i = 0; i < rank; ++i) {
    const int64_t d = in.dim(i), want = shape[out_rank - rank + i];
    if (d != want && d != 1) {
      return op_error(op, "Unable to broadcast tensor of shape ", in.to_list_string(),
                      " to tensor of shape ", list(shape));
    }
  }
  return absl::OkStatus();
}

absl::Status tile_dims(OpId op, const Shape& in, absl::Span<const int64_t> multiples, Dims* dims) {
  if (static_cast<int>(multiples.size()) != in.rank()) {
    return op_error(op, "Expected multiples argument to be a vector of length ", in.rank(),
                    " but got length ", multiples.size());
  }
  for (int i = 0; i < in.rank(); ++i) {
    if (multiples[i] < 0) {
      return op_error(op, "Expected multiples[", i, "] >= 0, but got ", multiples[i]);
    }
    int64_t d;
    if (__builtin_mul_overflow(in.dim(i), multiples[i], &d)) {
      return op_error(op, "multiples ", list(multiples), " make too many elements");
    }
    dims->push_back(d);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status infer_reshape(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                           OutputMetas* out) {
  Dims dims;
  MT_RETURN_IF_ERROR(reshape_dims(op, *inputs[0].shape, attrs.dims, &dims));
  return push(op, dims, inputs[0].dtype, out);
}

absl::Status infer_transpose(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                             OutputMetas* out) {
  const Shape& in = *inputs[0].shape;
  MT_RETURN_IF_ERROR(check_perm(op, in.rank(), attrs.dims));
  Dims dims;
  for (int64_t p : attrs.dims) dims.push_back(in.dim(p));
  CopyPlan plan;
  MT_RETURN_IF_ERROR(make_copy_plan(op, in, attrs, &plan));
  return push(op, dims, inputs[0].dtype, out);
}

absl::Status infer_expand_dims(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                               OutputMetas* out) {
  const Shape& in = *inputs[0].shape;
  const int64_t rank = in.rank();
  if (attrs.axis < -rank - 1 || attrs.axis > rank) {
    return op_error(op, "Tried to expand dim index ", attrs.axis, " for tensor with ", rank,
                    " dimensions.");
  }
  Dims dims(in.dims().begin(), in.dims().end());
  dims.insert(dims.begin() + canonical_axis(attrs.axis, rank + 1), 1);
  return push(op, dims, inputs[0].dtype, out);
}

absl::Status infer_squeeze(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                           OutputMetas* out) {
  Dims dims;
  MT_RETURN_IF_ERROR(squeeze_dims(op, *inputs[0].shape, attrs.axes, &dims));
  return push(op, dims, inputs[0].dtype, out);
}

absl::Status infer_slice(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                         OutputMetas* out) {
  Dims dims;
  MT_RETURN_IF_ERROR(slice_dims(op, *inputs[0].shape, attrs, &dims));
  CopyPlan plan;
  MT_RETURN_IF_ERROR(make_copy_plan(op, *inputs[0].shape, attrs, &plan));
  return push(op, dims, inputs[0].dtype, out);
}

absl::Status infer_strided_slice(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                                 OutputMetas* out) {
  StridedSliceSpec spec;
  MT_RETURN_IF_ERROR(resolve_strided_slice(*inputs[0].shape, attrs, &spec));
  CopyPlan plan;
  MT_RETURN_IF_ERROR(make_copy_plan(op, *inputs[0].shape, attrs, &plan));
  return push(op, spec.out_dims, inputs[0].dtype, out);
}

absl::Status infer_broadcast_to(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                                OutputMetas* out) {
  MT_RETURN_IF_ERROR(broadcast_to_dims(op, *inputs[0].shape, attrs.dims));
  CopyPlan plan;
  MT_RETURN_IF_ERROR(make_copy_plan(op, *inputs[0].shape, attrs, &plan));
  return push(op, attrs.dims, inputs[0].dtype, out);
}

absl::Status infer_tile(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                        OutputMetas* out) {
  Dims dims;
  MT_RETURN_IF_ERROR(tile_dims(op, *inputs[0].shape, attrs.dims, &dims));
  MT_RETURN_IF_ERROR(push(op, dims, inputs[0].dtype, out));
  CopyPlan plan;
  return make_copy_plan(op, *inputs[0].shape, attrs, &plan);
}

}  // namespace mt::internal

namespace mt::internal {

// MatrixBandPart: a batch of matrices, bounds (attrs.dims) within the matrix or negative.
absl::Status infer_band_part(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                             OutputMetas* out) {
  const Shape& in = *inputs[0].shape;
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  if (in.rank() < 2) {
    return op_error(op, "input must be at least 2-dim, received shape: ", list(in.dims()));
  }
  if (attrs.dims.size() != 2) {
    return op_error(op, "expected (num_lower, num_upper), got ", attrs.dims.size(), " values");
  }
  const int64_t rows = in.dim(in.rank() - 2), cols = in.dim(in.rank() - 1);
  if (attrs.dims[0] > rows) {
    return op_error(op, "num_lower must be negative or less or equal to number of rows (", rows,
                    ") got: ", attrs.dims[0]);
  }
  if (attrs.dims[1] > cols) {
    return op_error(op, "num_upper must be negative or less or equal to number of columns (", cols,
                    ") got: ", attrs.dims[1]);
  }
  out->push_back(OutputMeta{in, inputs[0].dtype});
  return absl::OkStatus();
}

// Cumsum: the output has the input's shape; the axis lies in [-rank, rank).
absl::Status infer_cumsum(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                          OutputMetas* out) {
  const Shape& in = *inputs[0].shape;
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  const int64_t rank = in.rank();
  if (attrs.axis < -rank || attrs.axis >= rank) {
    return op_error(op, "ScanOp: Expected scan axis in the range [", -rank, ", ", rank,
                    "), but got ", attrs.axis);
  }
  out->push_back(OutputMeta{in, inputs[0].dtype});
  return absl::OkStatus();
}

}  // namespace mt::internal
