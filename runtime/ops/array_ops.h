#pragma once
// The shape and data movement ops, with TensorFlow's names and semantics. Each returns a
// new tensor (tensors are immutable and contiguous: reshape copies too) on the device the
// placement rules choose; every op runs on the CPU and on GPUs, for every dtype.
//
//   mt::Tensor x = mt::reshape(t, {2, -1});           // Reshape, -1 inferred
//   mt::Tensor y = mt::transpose(x);                  // Transpose, reversing the axes
//   mt::Tensor z = mt::concat({x, x}, /*axis=*/0);    // ConcatV2
//   std::vector<mt::Tensor> parts = mt::split(z, 2);  // SplitV, two equal parts
//   mt::Tensor r = mt::strided_slice(z, {0, 3}, {4, 0}, {1, -1});  // z[0:4, 3:0:-1]
//
// Errors throw mt::Error with code InvalidArgument and TensorFlow's message prefixed by the
// op name: "[Reshape] Input to reshape is a tensor with 6 values, but the requested shape
// has 4". Axes count from the end when negative.

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "absl/types/span.h"
#include "core/dtype.h"
#include "runtime/eager/tensor.h"

namespace mt {

using Ints = std::vector<int64_t>;

// Returns `tensor` with shape `shape` (one entry may be -1: inferred).
Tensor reshape(const Tensor& tensor, const Ints& shape);
// Permutes the dimensions: output dim i is input dim perm[i]; an empty perm reverses them.
Tensor transpose(const Tensor& a, const Ints& perm = {});
// Inserts a dimension of size 1 at `axis` (in [-rank - 1, rank]).
Tensor expand_dims(const Tensor& input, int64_t axis);
// Removes the listed dimensions, each of size 1, or every size-1 dimension when empty.
Tensor squeeze(const Tensor& input, const Ints& axis = {});
// Joins tensors of one rank and dtype along an existing axis.
Tensor concat(absl::Span<const Tensor> values, int64_t axis);
inline Tensor concat(std::initializer_list<Tensor> values, int64_t axis) {
  return concat(absl::MakeConstSpan(values.begin(), values.size()), axis);
}
// Joins tensors of one shape and dtype along a new axis.
Tensor stack(absl::Span<const Tensor> values, int64_t axis = 0);
inline Tensor stack(std::initializer_list<Tensor> values, int64_t axis = 0) {
  return stack(absl::MakeConstSpan(values.begin(), values.size()), axis);
}
// Splits `value` along `axis` into `num_split` equal parts.
std::vector<Tensor> split(const Tensor& value, int64_t num_split, int64_t axis = 0);
// Splits `value` along `axis` into parts of the given sizes (one may be -1: the rest).
std::vector<Tensor> split(const Tensor& value, const Ints& size_splits, int64_t axis = 0);
// Returns the block starting at `begin` of `size` (-1: to the end of the dimension).
Tensor slice(const Tensor& input, const Ints& begin, const Ints& size);

// StridedSlice's masks: bit i applies to entry i of begin/end/strides (TensorFlow's).
struct StridedSliceOptions {
  int32_t begin_mask = 0;
  int32_t end_mask = 0;
  int32_t ellipsis_mask = 0;
  int32_t new_axis_mask = 0;
  int32_t shrink_axis_mask = 0;
};
// Returns input[begin:end:strides] per entry, with TensorFlow's masks (Python's
// t[a:b:c, ..., None, i] produces them); strides may be negative, never zero.
Tensor strided_slice(const Tensor& input, const Ints& begin, const Ints& end,
                     const Ints& strides = {}, const StridedSliceOptions& options = {});

// Gathers slices of `params` along `axis` at `indices` (int32 or int64). An index out of
// [0, dim) is InvalidArgument; a GPU writes zeros for it (as TensorFlow's) and reports it
// at the next wait for the device (Note [GPU index faults] in kernels/cuda/index_fault.h).
Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis = 0);
// One-hot encodes int32/int64 `indices` along a new `axis` (-1: last) of size `depth`;
// indices out of [0, depth) give rows of off_value.
Tensor one_hot(const Tensor& indices, int64_t depth, double on_value = 1, double off_value = 0,
               int64_t axis = -1, DType dtype = DType::kFloat32);
// Broadcasts `input` to `shape` with NumPy's rules.
Tensor broadcast_to(const Tensor& input, const Ints& shape);
// Repeats `input` multiples[i] times along dimension i.
Tensor tile(const Tensor& input, const Ints& multiples);
// Returns the running sum of `x` along `axis` (tf.math.cumsum): without element i when
// `exclusive`, from the end when `reverse`.
Tensor cumsum(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false);
// Scatter (Note [Scatter] in kernels/scatter.h): `indices` (int32 or int64) of shape
// [..., K] name slices of the output's first K dimensions, `updates` of shape
// indices.shape[:-1] + output.shape[K:] fills them. An index row outside the output is
// InvalidArgument ("indices[1] = [5] does not index into shape [4]") on every device.
// scatter_nd adds the updates into zeros of `shape` (duplicates add) (tf.scatter_nd).
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const Ints& shape);
// Writes the updates into a copy of `tensor` (the last of duplicates wins, on a GPU too)
// (tf.tensor_scatter_nd_update).
Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates);
// Adds the updates into a copy of `tensor` (tf.tensor_scatter_nd_add).
Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates);
// Returns a tensor of the input's shape and dtype filled with 0 (false) or 1 (true).
Tensor zeros_like(const Tensor& input);
Tensor ones_like(const Tensor& input);
// Picks x where `condition` (bool) is true, else y (SelectV2, tf.where with three
// arguments); the three broadcast together, x and y have one dtype.
Tensor where(const Tensor& condition, const Tensor& x, const Tensor& y);

namespace linalg {
// Keeps the band of each innermost matrix of `input` (rank >= 2): element (m, n) where
// m - n <= num_lower and n - m <= num_upper, a negative bound keeping that whole triangle;
// the rest is zero (tf.linalg.band_part).
Tensor band_part(const Tensor& input, int64_t num_lower, int64_t num_upper);
}  // namespace linalg

}  // namespace mt
