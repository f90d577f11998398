// The gradients of MatMul, BatchMatMulV2, AddN, the broadcasting binary ops and the unary
// ops (Note [Gradients beside their rows] in grad_fns.h), TensorFlow's formulas.
#include "runtime/autodiff/grad_fns.h"
#include "runtime/autodiff/grad_util.h"
#include "runtime/ops/array_ops.h"
#include "runtime/ops/ops.h"

namespace mt::internal {

Tensor unbroadcast(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const int rank = g.shape().rank(), lead = rank - shape.rank();
  std::vector<int64_t> axes;
  for (int d = 0; d < rank; ++d) {
    if (d < lead || (shape.dim(d - lead) == 1 && g.shape().dim(d) != 1)) axes.push_back(d);
  }
  Tensor summed = axes.empty() ? g : reduce_sum(g, Axes(absl::MakeConstSpan(axes)), true);
  return reshape(summed, Ints(shape.dims().begin(), shape.dims().end()));
}

// MatMul and BatchMatMulV2 with their transposes: TensorFlow's four cases.
static Grads matmul_grads(const GradContext& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1], &g = c.output_grads[0];
  const bool ta = c.attrs.transpose_a, tb = c.attrs.transpose_b;
  Tensor da, db;  // only those the tape needs: a GEMM each
  if (!ta && !tb) {
    if (c.needs(0)) da = matmul(g, b, false, true);
    if (c.needs(1)) db = matmul(a, g, true, false);
  } else if (ta && !tb) {
    if (c.needs(0)) da = matmul(b, g, false, true);
    if (c.needs(1)) db = matmul(a, g);
  } else if (!ta && tb) {
    if (c.needs(0)) da = matmul(g, b);
    if (c.needs(1)) db = matmul(g, a, true, false);
  } else {
    if (c.needs(0)) da = matmul(b, g, true, true);
    if (c.needs(1)) db = matmul(g, a, true, true);
  }
  return {da.defined() ? unbroadcast(da, a.shape()) : Tensor(),
          db.defined() ? unbroadcast(db, b.shape()) : Tensor()};
}

template <>
Grads Grad<OpId::kMatMul>::run(const GradContext& c) {
  return matmul_grads(c);
}
template <>
Grads Grad<OpId::kBatchMatMulV2>::run(const GradContext& c) {
  return matmul_grads(c);
}
template <>
Grads Grad<OpId::kAddN>::run(const GradContext& c) {
  return Grads(c.inputs.size(), c.output_grads[0]);
}

// The two gradients of a broadcasting binary op, each summed back to its input's shape.
static Grads binary(const GradContext& c, const Tensor& da, const Tensor& db) {
  return {da.defined() ? unbroadcast(da, c.inputs[0].shape()) : Tensor(),
          db.defined() ? unbroadcast(db, c.inputs[1].shape()) : Tensor()};
}

template <>
Grads Grad<OpId::kAddV2>::run(const GradContext& c) {
  return binary(c, c.output_grads[0], c.output_grads[0]);
}
template <>
Grads Grad<OpId::kSub>::run(const GradContext& c) {
  return binary(c, c.output_grads[0], neg(c.output_grads[0]));
}
template <>
Grads Grad<OpId::kMul>::run(const GradContext& c) {
  const Tensor& g = c.output_grads[0];
  return binary(c, mul(g, c.inputs[1]), mul(g, c.inputs[0]));
}
template <>
Grads Grad<OpId::kRealDiv>::run(const GradContext& c) {
  const Tensor &g = c.output_grads[0], &a = c.inputs[0], &b = c.inputs[1];
  return binary(c, div(g, b), neg(div(mul(g, a), mul(b, b))));
}
// d(a^b)/da = b a^(b-1); d/db = a^b log(a) where a > 0, else 0 (TensorFlow's choice).
template <>
Grads Grad<OpId::kPow>::run(const GradContext& c) {
  const Tensor &g = c.output_grads[0], &a = c.inputs[0], &b = c.inputs[1], &y = c.outputs[0];
  const Tensor da = mul(g, mul(b, pow(a, sub(b, scalar_like(b, 1)))));
  const Tensor zero = zeros_like(a);
  const Tensor positive = greater(a, zero);
  const Tensor log_a = where(positive, log(where(positive, a, ones_like(a))), zero);
  return binary(c, da, mul(g, mul(y, log_a)));
}
// The gradient goes to a where a >= b (Maximum) or a <= b (Minimum), else to b.
static Grads select_grads(const GradContext& c, const Tensor& a_wins) {
  const Tensor& g = c.output_grads[0];
  const Tensor zero = zeros_like(g);
  return binary(c, where(a_wins, g, zero), where(a_wins, zero, g));
}
template <>
Grads Grad<OpId::kMaximum>::run(const GradContext& c) {
  return select_grads(c, greater_equal(c.inputs[0], c.inputs[1]));
}
template <>
Grads Grad<OpId::kMinimum>::run(const GradContext& c) {
  return select_grads(c, less_equal(c.inputs[0], c.inputs[1]));
}
template <>
Grads Grad<OpId::kSquaredDifference>::run(const GradContext& c) {
  const Tensor d =
      mul(mul(scalar_like(c.inputs[0], 2), c.output_grads[0]), sub(c.inputs[0], c.inputs[1]));
  return binary(c, d, neg(d));
}

// The unary ops: d(input) = g * f'(x), written with the output y where TensorFlow does.
#define MT_UNARY_GRAD(Name, expr)                                             \
  template <>                                                                 \
  Grads Grad<OpId::k##Name>::run(const GradContext& c) {                      \
    const Tensor &g = c.output_grads[0], &x = c.inputs[0], &y = c.outputs[0]; \
    (void)x;                                                                  \
    (void)y;                                                                  \
    return {expr};                                                            \
  }
MT_UNARY_GRAD(Neg, neg(g))
MT_UNARY_GRAD(Abs, mul(g, sign(x)))
MT_UNARY_GRAD(Exp, mul(g, y))
MT_UNARY_GRAD(Relu, where(greater(y, scalar_like(y, 0)), g, scalar_like(g, 0)))
MT_UNARY_GRAD(Sqrt, div(mul(g, scalar_like(y, 0.5)), y))
MT_UNARY_GRAD(Rsqrt, mul(mul(g, scalar_like(y, -0.5)), mul(y, square(y))))
MT_UNARY_GRAD(Square, mul(g, mul(scalar_like(x, 2), x)))
MT_UNARY_GRAD(Log, div(g, x))
MT_UNARY_GRAD(Log1p, div(g, add(x, scalar_like(x, 1))))
MT_UNARY_GRAD(Erf,
              mul(g, mul(scalar_like(x, 1.1283791670955126), exp(neg(square(x))))))  // 2/sqrt(pi)
MT_UNARY_GRAD(Sin, mul(g, cos(x)))
MT_UNARY_GRAD(Cos, neg(mul(g, sin(x))))
MT_UNARY_GRAD(Tanh, mul(g, sub(scalar_like(y, 1), square(y))))
MT_UNARY_GRAD(Sigmoid, mul(g, mul(y, sub(scalar_like(y, 1), y))))
#undef MT_UNARY_GRAD

// Identity and Cast pass the gradient through (Cast back to the input's dtype; nothing for
// an integer or bool input).
template <>
Grads Grad<OpId::kIdentity>::run(const GradContext& c) {
  return {c.output_grads[0]};
}
template <>
Grads Grad<OpId::kCast>::run(const GradContext& c) {
  if (!is_floating(c.inputs[0].dtype())) return {Tensor()};
  return {cast(c.output_grads[0], c.inputs[0].dtype())};
}

}  // namespace mt::internal

namespace mt::internal {

// ClipByValue, as TensorFlow's: t's gradient passes where clip_value_min <= t <=
// clip_value_max; each bound takes it where t lies beyond that bound, summed to its shape.
template <>
Grads Grad<OpId::kClipByValue>::run(const GradContext& c) {
  const Tensor& g = c.output_grads[0];
  const Tensor &t = c.inputs[0], &lo = c.inputs[1], &hi = c.inputs[2];
  const Tensor zero = zeros_like(g);
  const Tensor below = less(t, lo), above = greater(t, hi);
  return {where(logical_or(below, above), zero, g), unbroadcast(where(below, g, zero), lo.shape()),
          unbroadcast(where(above, g, zero), hi.shape())};
}

}  // namespace mt::internal
