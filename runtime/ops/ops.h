#pragma once
// The ops. Each is a free function that runs eagerly on the device the placement rules
// choose (docs/design.md, "Placement") and returns the result; inputs living on other
// devices are copied there first. Errors throw mt::Error: InvalidArgument for bad shapes
// or dtypes (the message starts with the TensorFlow op name: "[MatMul] ..."), NotFound
// for an unknown device, ResourceExhausted when the device's pool is out of memory.
//
//   mt::Tensor c = mt::matmul(a, b);              // MatMul (BatchMatMulV2 above rank 2)
//   mt::Tensor s = mt::add_n({c, c, c});          // AddN
//   mt::Tensor d = (a + b) * mt::constant(2.f);   // AddV2, Mul (the scalar broadcasts)
//   mt::Tensor m = mt::reduce_mean(d, {0}, true); // Mean over axis 0, keeping it

#include <cstdint>
#include <initializer_list>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "kernels/op_table.h"
#include "runtime/eager/tensor.h"

namespace mt {

// Multiplies matrices, optionally transposing either first (adjoint is the same for real
// dtypes; only one of transpose_x and adjoint_x may be set, else InvalidArgument). Rank-2
// inputs run MatMul; higher ranks run BatchMatMulV2, a product per matrix of the
// broadcast batch dimensions (all but the last two), as tf.matmul does:
// (5, 2, 3) x (3, 4) is (5, 2, 4). InvalidArgument for a rank below 2, inner dimensions
// that differ or batch dimensions that do not broadcast.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false,
              bool adjoint_a = false, bool adjoint_b = false);

// Sum of one or more tensors of the same shape and dtype, in one pass.
Tensor add_n(absl::Span<const Tensor> inputs);
inline Tensor add_n(std::initializer_list<Tensor> inputs) {
  return add_n(absl::MakeConstSpan(inputs.begin(), inputs.size()));
}

// Element-wise binary ops with NumPy broadcasting, one per row of MT_BINARY_OPS
// (kernels/op_table.h, which names each op's dtypes): add, sub, mul, div (RealDiv,
// floating types only), pow, maximum, minimum (NaN propagates), squared_difference,
// floordiv and floormod (rounding toward -inf, as Python), logical_and, logical_or (bool),
// and the comparisons equal, not_equal, less, less_equal, greater, greater_equal, whose
// result is bool (equal and not_equal take bool inputs too; NaN is unequal to everything).
// On the CPU, integer floordiv/floormod by zero and integer pow to a negative power throw
// InvalidArgument; the GPU gives 0 and the truncated power (docs/bad-input.md).
#define MT_DECLARE_BINARY(Name, tf, cc, ...) Tensor cc(const Tensor& a, const Tensor& b);
MT_BINARY_OPS(MT_DECLARE_BINARY)
#undef MT_DECLARE_BINARY

// Element-wise unary ops, one per row of MT_UNARY_OPS: neg, abs, exp, relu, sqrt, rsqrt,
// square, log, log1p, tanh, sigmoid, sign, floor, round (half to even), logical_not (bool).
#define MT_DECLARE_UNARY(Name, tf, cc, ...) Tensor cc(const Tensor& x);
MT_UNARY_OPS(MT_DECLARE_UNARY)
#undef MT_DECLARE_UNARY

// The axes a reduction runs over: all of them by default, or a list (negative axes count
// from the end): reduce_sum(x), reduce_sum(x, 0), reduce_sum(x, {0, -1}, true).
class Axes {
 public:
  Axes() : all_(true) {}
  Axes(int64_t axis) : axes_{axis} {}  // NOLINT: implicit by design
  Axes(std::initializer_list<int64_t> axes) : axes_(axes), all_(axes.size() == 0) {}
  Axes(absl::Span<const int64_t> axes) : axes_(axes.begin(), axes.end()) {}  // NOLINT
  // Returns an empty list: the reduction is an identity over no axis.
  static Axes none() { return Axes(absl::Span<const int64_t>()); }

  bool all() const { return all_; }
  absl::Span<const int64_t> list() const { return axes_; }

 private:
  absl::InlinedVector<int64_t, 4> axes_;
  bool all_ = false;
};

// Reductions, one per row of MT_REDUCTION_OPS: reduce_sum, reduce_mean, reduce_max,
// reduce_min (NaN wins in max and min), reduce_prod (integers wrap), and reduce_any and
// reduce_all (bool only). Over no elements each gives its identity (Note [Reductions] in
// kernels/op_def.h).
#define MT_DECLARE_REDUCTION(Name, tf, cc, ...) \
  Tensor cc(const Tensor& x, const Axes& axes = Axes(), bool keep_dims = false);
MT_REDUCTION_OPS(MT_DECLARE_REDUCTION)
#undef MT_DECLARE_REDUCTION

// Returns the index of the largest (argmax) or smallest (argmin) element along `axis`, as
// int64 or int32 (`output_type`); the first on ties, and a NaN never wins (as TensorFlow).
// InvalidArgument for an axis out of [-rank, rank) or of size 0.
Tensor argmax(const Tensor& input, int64_t axis = 0, DType output_type = DType::kInt64);
Tensor argmin(const Tensor& input, int64_t axis = 0, DType output_type = DType::kInt64);

// Sums the rows of `data` into `num_segments` rows by `segment_ids` (int32 or int64, whose
// shape prefixes data's): output row s is the sum of the data rows whose id is s, zeros
// when none. A negative id drops its row; an id >= num_segments is InvalidArgument (a GPU
// drops its row and reports it at the next wait for the device).
Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments);

// Returns `t` with each element limited to [clip_value_min, clip_value_max] (ClipByValue):
// above the max it is the max, below the min the min (the min when min > max), a NaN stays
// NaN. The bounds have t's dtype and broadcast to its shape without growing it.
Tensor clip_by_value(const Tensor& t, const Tensor& clip_value_min, const Tensor& clip_value_max);

// Converts to `dtype`. Cast has only a CPU kernel, as in TensorFlow's guide.
Tensor cast(const Tensor& x, DType dtype);

// Copies `x` to the device the scope asks for (a new tensor even on the same device).
Tensor identity(const Tensor& x);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& x);

}  // namespace mt
