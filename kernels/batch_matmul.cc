// BatchMatMulV2's shape function and batch plan (batch_matmul.h).
#include "kernels/batch_matmul.h"

#include <algorithm>

#include "core/check.h"
#include "kernels/broadcast.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

// Returns the batch dimensions of `s` (all but the last two).
absl::StatusOr<Shape> batch_of(const Shape& s) {
  return Shape::make(absl::MakeConstSpan(s.dims().data(), s.rank() - 2));
}

// Returns the index of the matrix of `batch` (left-padded with 1s to out's rank) that
// output batch coordinates `coords` read.
int64_t matrix_index(const Shape& batch, const Shape::Dims& out, const Shape::Dims& coords) {
  const int pad = static_cast<int>(out.size()) - batch.rank();
  int64_t index = 0;
  for (int d = 0; d < batch.rank(); ++d) {
    index = index * batch.dim(d) + (batch.dim(d) == 1 ? 0 : coords[d + pad]);
  }
  return index;
}

}  // namespace

absl::Status infer_batch_matmul(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                                OutputMetas* out) {
  const TensorMeta& a = inputs[0];
  const TensorMeta& b = inputs[1];
  MT_RETURN_IF_ERROR(check_same_dtype(op, a.dtype, b.dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, a.dtype));
  for (int i = 0; i < 2; ++i) {
    const int rank = inputs[i].shape->rank();
    if (rank < 2) return op_error(op, "In[", i, "] ndims must be >= 2: ", rank);
  }
  const Shape& sa = *a.shape;
  const Shape& sb = *b.shape;
  const int ra = sa.rank(), rb = sb.rank();
  const int64_t m = sa.dim(attrs.transpose_a ? ra - 1 : ra - 2);
  const int64_t ka = sa.dim(attrs.transpose_a ? ra - 2 : ra - 1);
  const int64_t kb = sb.dim(attrs.transpose_b ? rb - 1 : rb - 2);
  const int64_t n = sb.dim(attrs.transpose_b ? rb - 2 : rb - 1);
  if (ka != kb) {
    return op_error(op, "Matrix size-incompatible: In[0]: ", sa.to_string(),
                    ", In[1]: ", sb.to_string(), attrs.transpose_a ? " with adj_x" : "",
                    attrs.transpose_b ? " with adj_y" : "");
  }
  MT_ASSIGN_OR_RETURN(Shape batch_a, batch_of(sa));
  MT_ASSIGN_OR_RETURN(Shape batch_b, batch_of(sb));
  Shape::Dims dims;
  if (!broadcast_dims(batch_a, batch_b, &dims)) {
    return op_error(op, "In[0] and In[1] must have compatible batch dimensions: ", sa.to_string(),
                    " vs. ", sb.to_string());
  }
  dims.push_back(m);
  dims.push_back(n);
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  out->push_back(OutputMeta{std::move(shape), a.dtype});
  return absl::OkStatus();
}

BatchPlan plan_batch_matmul(const Shape& a, const Shape& b, const OpAttrs& attrs) {
  const Shape batch_a = batch_of(a).value(), batch_b = batch_of(b).value();
  Shape::Dims out;
  MT_CHECK(broadcast_dims(batch_a, batch_b, &out));
  BatchPlan p;
  const int ra = a.rank(), rb = b.rank();
  p.ta = attrs.transpose_a;
  p.tb = attrs.transpose_b;
  p.m = a.dim(p.ta ? ra - 1 : ra - 2);
  p.k = a.dim(p.ta ? ra - 2 : ra - 1);
  p.n = b.dim(p.tb ? rb - 2 : rb - 1);
  p.lda = a.dim(ra - 1);
  p.ldb = b.dim(rb - 1);
  if (p.m == 0 || p.n == 0 || std::find(out.begin(), out.end(), 0) != out.end()) {
    // An output with no element: no batch to multiply. The sizes below could overflow (a
    // zero batch of huge matrices) or list every batch of many broadcast empty matrices.
    p.batches = 0;
    return p;
  }
  p.a_matrix = a.dim(ra - 2) * a.dim(ra - 1);
  p.b_matrix = b.dim(rb - 2) * b.dim(rb - 1);
  p.batches = 1;
  for (int64_t d : out) p.batches *= d;
  const int64_t na = batch_a.num_elements(), nb = batch_b.num_elements();
  const bool a_ok = na == 1 || na == p.batches, b_ok = nb == 1 || nb == p.batches;
  // A side with as many matrices as the output spans it in order only if no dimension of
  // it broadcasts, which equal counts guarantee (every dimension is then the output's).
  if (a_ok && b_ok) {
    p.a_step = na == 1 ? 0 : 1;
    p.b_step = nb == 1 ? 0 : 1;
    return p;
  }
  p.uniform = false;
  p.a_list.resize(p.batches);
  p.b_list.resize(p.batches);
  Shape::Dims coords(out.size(), 0);
  for (int64_t i = 0; i < p.batches; ++i) {
    p.a_list[i] = matrix_index(batch_a, out, coords);
    p.b_list[i] = matrix_index(batch_b, out, coords);
    for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {  // next coordinates
      if (++coords[d] < out[d]) break;
      coords[d] = 0;
    }
  }
  return p;
}

}  // namespace mt::internal
