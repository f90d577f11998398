#include "runtime/ops.h"

#include "absl/container/inlined_vector.h"
#include "runtime/error.h"
#include "runtime/execute.h"

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

Tensor unary(OpId op, const Tensor& x) { return run(op, x); }

Tensor reduce(OpId op, const Tensor& x, const Axes& axes, bool keep_dims) {
  OpAttrs attrs;
  attrs.reduce_all = axes.all();
  attrs.axes.assign(axes.list().begin(), axes.list().end());
  attrs.keep_dims = keep_dims;
  return run(op, x, attrs);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  OpAttrs attrs;
  attrs.transpose_a = transpose_a;
  attrs.transpose_b = transpose_b;
  return binary(OpId::kMatMul, a, b, attrs);
}

Tensor add_n(absl::Span<const Tensor> inputs) {
  absl::InlinedVector<const Tensor*, 8> addresses;
  for (const Tensor& t : inputs) addresses.push_back(&t);
  return run(OpId::kAddN, addresses);
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(OpId::kAddV2, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(OpId::kSub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(OpId::kMul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(OpId::kRealDiv, a, b); }

Tensor neg(const Tensor& x) { return unary(OpId::kNeg, x); }
Tensor abs(const Tensor& x) { return unary(OpId::kAbs, x); }
Tensor exp(const Tensor& x) { return unary(OpId::kExp, x); }
Tensor relu(const Tensor& x) { return unary(OpId::kRelu, x); }

Tensor reduce_sum(const Tensor& x, const Axes& axes, bool keep_dims) {
  return reduce(OpId::kSum, x, axes, keep_dims);
}
Tensor reduce_mean(const Tensor& x, const Axes& axes, bool keep_dims) {
  return reduce(OpId::kMean, x, axes, keep_dims);
}
Tensor reduce_max(const Tensor& x, const Axes& axes, bool keep_dims) {
  return reduce(OpId::kMax, x, axes, keep_dims);
}

Tensor cast(const Tensor& x, DType dtype) {
  OpAttrs attrs;
  attrs.dst_dtype = dtype;
  return run(OpId::kCast, x, attrs);
}

Tensor identity(const Tensor& x) { return unary(OpId::kIdentity, x); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }

}  // namespace mt
