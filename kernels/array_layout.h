#pragma once
// Internal to kernels/: how the array ops (MT_ARRAY_OPS in op_table.h) move elements, shared
// by their shape functions (array_shape.cc) and the CPU and CUDA kernels.
//
// Note [Array ops]
// Tensors are immutable and contiguous, so every array op writes a new buffer:
// - Reshape, ExpandDims, Squeeze: a plain copy of the bytes (no aliasing in this runtime).
// - Transpose, Slice, StridedSlice, BroadcastTo, Tile: a CopyPlan, an affine gather where
//   output index (i0, .., ik) reads input element offset + sum(ij * strides[j]); strides
//   may be 0 (broadcast, new axis) or negative (reversed strided slice). Tile is a plan of
//   twice the rank: output (m0 * d0, m1 * d1) is (m0, d0, m1, d1) with strides (0, s0, 0, s1).
// - ConcatV2, Pack, SplitV: 2-D block copies of (outer, rows) bytes (ConcatLayout).
// - GatherV2: params viewed as (outer, n, inner) and the output as (outer, k, inner). Out of
//   range indices are an error on the CPU (as TensorFlow) and read zeros on the GPU.
// - OneHot: one pass over the output.
// Kernels only copy elements, so they are instantiated per element size, not per dtype.
//
// Note [Array op attributes]
// Shape-like arguments are attributes (OpAttrs::dims, dims2, dims3, axis), not tensors:
// reshape's shape, transpose's perm (its length is the rank: the API fills the default),
// slice's begin and size, strided_slice's begin, end and strides with TensorFlow's five
// masks, tile's multiples, broadcast_to's shape, split's size_splits or num_split.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/op_attrs.h"
#include "kernels/op_id.h"

namespace mt::internal {

// The unsigned integer of N bytes: kernels that only move elements use it for every dtype
// of that size.
template <size_t N>
using Word = std::conditional_t<
    N == 1, uint8_t,
    std::conditional_t<N == 2, uint16_t, std::conditional_t<N == 4, uint32_t, uint64_t>>>;

// The most dimensions a CopyPlan has after merging (Tile doubles the rank before merging).
inline constexpr int kMaxCopyRank = 12;

struct CopyPlan {
  absl::InlinedVector<int64_t, 8> dims;     // the output, merged; empty for one element
  absl::InlinedVector<int64_t, 8> strides;  // input elements per step of each dimension
  int64_t offset = 0;                       // the input element of output index 0
};

// Returns the plan of a validated Transpose, Slice, StridedSlice, BroadcastTo or Tile call
// on `in`, with size-1 dimensions dropped and contiguous runs merged. InvalidArgument when
// more than kMaxCopyRank dimensions remain.
absl::Status make_copy_plan(OpId op, const Shape& in, const OpAttrs& attrs, CopyPlan* plan);

// StridedSlice resolved against the input's shape: per input dimension the first element,
// the step and the count; the output's dimensions, each an input dimension or a new axis.
struct StridedSliceSpec {
  absl::InlinedVector<int64_t, 8> begin, stride, size;  // per input dimension
  absl::InlinedVector<int64_t, 8> out_dims;
  absl::InlinedVector<int, 8> out_source;  // the input dimension of each output one; -1: new
};

// Returns a OneHot value, or 1 for OnesLike, as T: floats (the 2-byte ones too) through
// float32, integers from `i`, bool from `b`. The same on every device.
template <typename T>
T scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<T, bool>) {
    return s.b;
  } else if constexpr (is_floating(dtype_of<T>())) {
    return T(static_cast<float>(s.f));
  } else {
    return static_cast<T>(s.i);
  }
}
template <typename T>
T one_as() {
  return scalar_as<T>(Scalar{1.0, 1, true});
}

// Resolves a StridedSlice call as TensorFlow does; InvalidArgument with its messages.
absl::Status resolve_strided_slice(const Shape& in, const OpAttrs& attrs, StridedSliceSpec* spec);

// Returns `axis` counted from the front (axis + rank when negative); no check.
inline int64_t canonical_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// ConcatV2 and Pack (inputs into the output) and SplitV (the output into pieces): each
// piece is `outer` rows of piece_rows[i] bytes, at byte column offset[i] of rows of
// total_row bytes.
struct ConcatLayout {
  int64_t outer = 1;
  int64_t total_row = 0;
  absl::InlinedVector<int64_t, 8> piece_row;
  absl::InlinedVector<int64_t, 8> offset;
};

// Returns the layout of a validated ConcatV2, Pack or SplitV call whose large side (the
// output of a concat, the input of a split) is `whole` and whose pieces are `pieces`.
ConcatLayout make_concat_layout(const Shape& whole, absl::Span<const Shape* const> pieces,
                                int64_t axis, size_t elem_size);

}  // namespace mt::internal
