// Shape functions of ScatterNd, TensorScatterUpdate and TensorScatterAdd (Note [Scatter] in
// scatter.h), with TensorFlow's error messages, and their layout.
#include "absl/strings/str_join.h"
#include "kernels/scatter.h"
#include "kernels/shape_fns.h"

namespace mt {

ScatterLayout make_scatter_layout(const Shape& out, const Shape& indices) {
  ScatterLayout l;
  l.depth = static_cast<int>(indices.dim(indices.rank() - 1));
  l.num_updates = l.depth == 0 ? 0 : indices.num_elements() / l.depth;
  for (int d = l.depth; d < out.rank(); ++d) l.slice *= out.dim(d);
  l.num_slices = 1;
  for (int k = l.depth - 1; k >= 0; --k) {
    l.dims[k] = out.dim(k);
    l.strides[k] = l.num_slices;
    l.num_slices *= out.dim(k);
  }
  return l;
}

namespace internal {

absl::Status scatter_index_error(OpId op, int64_t n, const int64_t* index, int depth,
                                 const Shape& out) {
  return op_error(op, "indices[", n, "] = [", absl::StrJoin(index, index + depth, ", "),
                  "] does not index into shape ", out.to_list_string());
}

namespace {

std::string list(const Shape& s) { return s.to_list_string(); }

absl::Status check_index_dtype(OpId op, DType dtype) {
  if (dtype == DType::kInt32 || dtype == DType::kInt64) return absl::OkStatus();
  return op_error(op, "indices must be int32 or int64, got ", dtype_name(dtype));
}

absl::Status check_depth(OpId op, int64_t depth) {
  if (depth <= kMaxScatterDepth) return absl::OkStatus();
  return op_error(op, "index rows of more than ", kMaxScatterDepth,
                  " values are not supported, got ", depth);
}

}  // namespace

// ScatterNd (indices, updates; the output's shape in attrs.dims).
absl::Status infer_scatter_nd(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                              OutputMetas* out) {
  const Shape& indices = *inputs[0].shape;
  const Shape& updates = *inputs[1].shape;
  MT_RETURN_IF_ERROR(check_index_dtype(op, inputs[0].dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[1].dtype));
  for (int64_t d : attrs.dims) {
    if (d < 0) return op_error(op, "Dimension ", d, " must be >= 0");
  }
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, attrs.dims));
  if (shape.rank() == 0) {
    return op_error(op, "Output must be at least 1-D, got shape: ", list(shape));
  }
  if (indices.rank() == 0) {
    return op_error(op, "Indices shape must have rank at least one. Found:", list(indices));
  }
  const bool any = indices.num_elements() > 0 || updates.num_elements() > 0;
  if (shape.num_elements() == 0 && any) {
    return op_error(
        op, "Indices and updates specified for empty output.  indices shape: ", list(indices));
  }
  const int64_t depth = indices.dim(indices.rank() - 1);
  if (depth == 0 && any) {
    return op_error(op, "Indices and updates specified for empty output shape");
  }
  const int batch = indices.rank() - 1;
  const auto inner = [&] {
    return op_error(op, "Dimensions [", depth, ",", shape.rank(), ") of input[shape=", list(shape),
                    "] must match dimensions [", batch, ",", updates.rank(),
                    ") of updates[shape=", list(updates), "]");
  };
  if (updates.rank() < batch || shape.rank() - depth != updates.rank() - batch) return inner();
  for (int d = 0; d < batch; ++d) {
    if (indices.dim(d) != updates.dim(d)) {
      return op_error(op, "Dimensions [0,", batch, ") of indices[shape=", list(indices),
                      "] must match dimensions [0,", batch, ") of updates[shape=", list(updates),
                      "]");
    }
  }
  for (int d = batch; d < updates.rank(); ++d) {
    if (updates.dim(d) != shape.dim(static_cast<int>(depth) + d - batch)) return inner();
  }
  MT_RETURN_IF_ERROR(check_depth(op, depth));
  out->push_back(OutputMeta{std::move(shape), inputs[1].dtype});
  return absl::OkStatus();
}

// TensorScatterUpdate and TensorScatterAdd (tensor, indices, updates).
absl::Status infer_tensor_scatter(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                                  OutputMetas* out) {
  const Shape& shape = *inputs[0].shape;
  const Shape& indices = *inputs[1].shape;
  const Shape& updates = *inputs[2].shape;
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  MT_RETURN_IF_ERROR(check_index_dtype(op, inputs[1].dtype));
  MT_RETURN_IF_ERROR(check_same_dtype(op, inputs[0].dtype, inputs[2].dtype));
  if (indices.rank() == 0) {
    return op_error(op, "Indices shape must have rank at least one. Found:", list(indices));
  }
  const int64_t depth = indices.dim(indices.rank() - 1);
  const bool any = indices.num_elements() > 0 || updates.num_elements() > 0;
  if ((shape.num_elements() == 0 || depth == 0) && any) {
    return op_error(op, "Indices and updates specified for empty output shape");
  }
  const int batch = indices.rank() - 1;
  bool outer = updates.rank() >= batch;
  for (int d = 0; outer && d < batch; ++d) outer = indices.dim(d) == updates.dim(d);
  if (!outer) {
    return op_error(op, "Outer dimensions of indices and update must match. Indices shape: ",
                    list(indices), ", updates shape:", list(updates));
  }
  if (shape.rank() - depth != updates.rank() - batch) {
    return op_error(op,
                    "Inner dimensions of output shape must match inner dimensions of updates "
                    "shape. Output: ",
                    list(shape), " updates: ", list(updates));
  }
  for (int d = batch; d < updates.rank(); ++d) {
    if (updates.dim(d) != shape.dim(static_cast<int>(depth) + d - batch)) {
      const int n = updates.rank() - batch;
      return op_error(op, "The inner ", n, " dimensions of output.shape=", list(shape),
                      " must match the inner ", n, " dimensions of updates.shape=", list(updates));
    }
  }
  MT_RETURN_IF_ERROR(check_depth(op, depth));
  out->push_back(OutputMeta{shape, inputs[0].dtype});
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace mt
