#pragma once
// ScatterNd, TensorScatterUpdate and TensorScatterAdd: where each update lands.
//
// Note [Scatter]: indices of shape [..., K] address the output's first K dimensions; each
// of the N = indices.num_elements() / K index rows names one slice of the output (its
// remaining dimensions, `slice` elements), which the update of the same row fills. ScatterNd
// adds the updates into zeros (duplicates add), TensorScatterAdd into a copy of the tensor,
// TensorScatterUpdate writes them in order, so the last duplicate wins (on the GPU too:
// Note [Last duplicate wins] in cuda/scatter_kernels.cu). An index row outside the output
// is InvalidArgument with TensorFlow's message ("indices[1] = [5] does not index into shape
// [4]") on both backends: the CPU checks every row before writing; the GPU checks them in a
// kernel, reads the first bad row's position back (the op waits for its stream) and writes
// nothing when there is one. The scatter kernels themselves skip a row outside the output,
// so that nothing is ever written out of bounds. (The wait cannot be captured: an
// mt.function holding a GPU scatter replays its steps without a CUDA graph.)
//
//   ScatterLayout l = make_scatter_layout(out_shape, indices_shape);
//   const int64_t at = scatter_offset(l, idx + n * l.depth);  // -1: outside the output

#include <cstdint>

#include "absl/status/status.h"
#include "core/shape.h"
#include "kernels/op_id.h"
#include "kernels/philox.h"  // MT_HOST_DEVICE

namespace mt {

// The most output dimensions an index row may address (TensorFlow's GPU kernels take 7).
inline constexpr int kMaxScatterDepth = 8;

struct ScatterLayout {
  int depth = 0;            // K: the indices' last dimension
  int64_t num_updates = 0;  // N: index rows (updates)
  int64_t slice = 1;        // elements per slice: the output's dimensions after the first K
  int64_t num_slices = 0;   // the output's elements / slice
  int64_t dims[kMaxScatterDepth] = {};     // the output's first K dimensions
  int64_t strides[kMaxScatterDepth] = {};  // in slices
};

// The layout of a validated call (infer_scatter_nd, infer_tensor_scatter).
ScatterLayout make_scatter_layout(const Shape& out, const Shape& indices);

// Returns the slice index row `index` names, or -1 when it lies outside the output.
template <typename I>
MT_HOST_DEVICE inline int64_t scatter_offset(const ScatterLayout& l, const I* index) {
  int64_t at = 0;
  for (int k = 0; k < l.depth; ++k) {
    const int64_t v = static_cast<int64_t>(index[k]);
    if (v < 0 || v >= l.dims[k]) return -1;
    at += v * l.strides[k];
  }
  return at;
}

namespace internal {

// TensorFlow's error for index row `n` (its K values at `index`) outside `out`.
absl::Status scatter_index_error(OpId op, int64_t n, const int64_t* index, int depth,
                                 const Shape& out);

}  // namespace internal
}  // namespace mt
