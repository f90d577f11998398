#include "runtime/ops/ops.h"

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

namespace mt {
namespace {

const OpAttrs kNoAttrs;

// The inputs are passed by address: copying the handles would cost two atomic reference
// count updates each.
Tensor run(OpId op, absl::Span<const Tensor* const> inputs, const OpAttrs& attrs = kNoAttrs) {
  return internal::value_or_throw(internal::execute(op, inputs, attrs));
}

Tensor run(OpId op, const Tensor& x, const OpAttrs& attrs = kNoAttrs) {
  const Tensor* input = &x;
  return run(op, absl::MakeConstSpan(&input, 1), attrs);
}

Tensor binary(OpId op, const Tensor& a, const Tensor& b, const OpAttrs& attrs = kNoAttrs) {
  const Tensor* inputs[] = {&a, &b};
  return run(op, inputs, attrs);
}

Tensor reduce(OpId op, const Tensor& x, const Axes& axes, bool keep_dims) {
  OpAttrs attrs;
  attrs.reduce_all = axes.all();
  attrs.axes.assign(axes.list().begin(), axes.list().end());
  attrs.keep_dims = keep_dims;
  return run(op, x, attrs);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, bool adjoint_a,
              bool adjoint_b) {
  if ((transpose_a && adjoint_a) || (transpose_b && adjoint_b)) {
    const char* x = transpose_a && adjoint_a ? "a" : "b";
    internal::throw_if_error(absl::InvalidArgumentError(
        absl::StrCat("[matmul] Only one of transpose_", x, " and adjoint_", x, " can be True.")));
  }
  OpAttrs attrs;
  attrs.transpose_a = transpose_a || adjoint_a;
  attrs.transpose_b = transpose_b || adjoint_b;
  // An empty tensor has no rank: MatMul reports it.
  const bool batched = (a.impl() != nullptr && a.shape().rank() > 2) ||
                       (b.impl() != nullptr && b.shape().rank() > 2);
  return binary(batched ? OpId::kBatchMatMulV2 : OpId::kMatMul, a, b, attrs);
}

Tensor add_n(absl::Span<const Tensor> inputs) {
  absl::InlinedVector<const Tensor*, 8> addresses;
  for (const Tensor& t : inputs) addresses.push_back(&t);
  return run(OpId::kAddN, addresses);
}

#define MT_DEFINE_BINARY(Name, tf, cc, ...) \
  Tensor cc(const Tensor& a, const Tensor& b) { return binary(OpId::k##Name, a, b); }
MT_BINARY_OPS(MT_DEFINE_BINARY)
#undef MT_DEFINE_BINARY

#define MT_DEFINE_UNARY(Name, tf, cc, ...) \
  Tensor cc(const Tensor& x) { return run(OpId::k##Name, x); }
MT_UNARY_OPS(MT_DEFINE_UNARY)
#undef MT_DEFINE_UNARY

#define MT_DEFINE_REDUCTION(Name, tf, cc, ...)                   \
  Tensor cc(const Tensor& x, const Axes& axes, bool keep_dims) { \
    return reduce(OpId::k##Name, x, axes, keep_dims);            \
  }
MT_REDUCTION_OPS(MT_DEFINE_REDUCTION)
#undef MT_DEFINE_REDUCTION

Tensor argmax(const Tensor& input, int64_t axis, DType output_type) {
  OpAttrs attrs;
  attrs.axis = axis;
  attrs.dst_dtype = output_type;
  return run(OpId::kArgMax, input, attrs);
}

Tensor argmin(const Tensor& input, int64_t axis, DType output_type) {
  OpAttrs attrs;
  attrs.axis = axis;
  attrs.dst_dtype = output_type;
  return run(OpId::kArgMin, input, attrs);
}

Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments) {
  OpAttrs attrs;
  attrs.depth = num_segments;
  return binary(OpId::kUnsortedSegmentSum, data, segment_ids, attrs);
}

Tensor clip_by_value(const Tensor& t, const Tensor& clip_value_min, const Tensor& clip_value_max) {
  const Tensor* inputs[] = {&t, &clip_value_min, &clip_value_max};
  return run(OpId::kClipByValue, inputs, kNoAttrs);
}

Tensor cast(const Tensor& x, DType dtype) {
  OpAttrs attrs;
  attrs.dst_dtype = dtype;
  return run(OpId::kCast, x, attrs);
}

Tensor identity(const Tensor& x) { return run(OpId::kIdentity, x); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }

}  // namespace mt
