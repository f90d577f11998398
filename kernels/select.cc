// SelectV2's shape function (infer_select) and its plan (select.h).
#include "kernels/select.h"

#include "kernels/shape_fns.h"

namespace mt {
namespace {

// Returns the stride of `s`'s dimension aligned with output dimension `d` of `rank`: 0
// where `s` has no such dimension or a 1 there.
int64_t operand_stride(const Shape& s, int rank, int d, const int64_t* row_strides) {
  const int k = d - (rank - s.rank());
  if (k < 0 || s.dim(k) == 1) return 0;
  return row_strides[k];
}

}  // namespace

bool make_select_plan(const Shape& condition, const Shape& x, const Shape& y, const Shape& out,
                      SelectPlan* plan) {
  *plan = SelectPlan{};
  if (out.num_elements() == 0) {
    // Nothing to index; the other dimensions (of the output, or of an operand with no
    // element) may be too large to multiply without overflow.
    plan->rank = 1;
    return true;
  }
  // Each operand broadcasts to the output, so it has elements too and its strides fit.
  const Shape* operands[3] = {&condition, &x, &y};
  int64_t row_strides[3][32] = {};
  for (int k = 0; k < 3; ++k) {
    int64_t stride = 1;
    for (int d = operands[k]->rank() - 1; d >= 0; --d) {
      row_strides[k][d] = stride;
      stride *= operands[k]->dim(d);
    }
  }
  const int rank = out.rank();
  for (int d = 0; d < rank; ++d) {
    if (out.dim(d) == 1) continue;  // contributes nothing to any offset
    int64_t s[3];
    for (int k = 0; k < 3; ++k) s[k] = operand_stride(*operands[k], rank, d, row_strides[k]);
    const int last = plan->rank - 1;
    // Merge into the previous dimension when each operand steps over it contiguously.
    bool merge = last >= 0;
    for (int k = 0; merge && k < 3; ++k) {
      merge = plan->strides[k][last] == s[k] * out.dim(d);
    }
    if (merge) {
      plan->dims[last] *= out.dim(d);
      for (int k = 0; k < 3; ++k) plan->strides[k][last] = s[k];
      continue;
    }
    if (plan->rank == kMaxBroadcastRank) return false;
    plan->dims[plan->rank] = out.dim(d);
    for (int k = 0; k < 3; ++k) plan->strides[k][plan->rank] = s[k];
    ++plan->rank;
  }
  return true;
}

namespace internal {

absl::Status infer_select(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                          OutputMetas* out) {
  const TensorMeta& cond = inputs[0];
  const TensorMeta& x = inputs[1];
  const TensorMeta& y = inputs[2];
  if (cond.dtype != DType::kBool) {
    return op_error(op, "condition must be bool, got ", dtype_name(cond.dtype));
  }
  MT_RETURN_IF_ERROR(check_same_dtype(op, x.dtype, y.dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, x.dtype));
  Shape::Dims xy, all;
  if (!broadcast_dims(*x.shape, *y.shape, &xy)) {
    return op_error(op, "shapes cannot be broadcast: x ", x.shape->to_string(), " vs y ",
                    y.shape->to_string());
  }
  MT_ASSIGN_OR_RETURN(Shape xy_shape, make_output_shape(op, xy));
  if (!broadcast_dims(*cond.shape, xy_shape, &all)) {
    return op_error(op, "shapes cannot be broadcast: condition ", cond.shape->to_string(),
                    " vs x and y ", xy_shape.to_string());
  }
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, all));
  if (shape.rank() > 32) return op_error(op, "rank ", shape.rank(), " is above 32");
  SelectPlan plan;
  if (!make_select_plan(*cond.shape, *x.shape, *y.shape, shape, &plan)) {
    return op_error(op, "broadcasting ", cond.shape->to_string(), ", ", x.shape->to_string(),
                    " and ", y.shape->to_string(), " needs more than ", kMaxBroadcastRank,
                    " dimensions after merging, which is not supported");
  }
  out->push_back(OutputMeta{std::move(shape), x.dtype});
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace mt
