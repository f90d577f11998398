#pragma once
// The layout the layer normalisation kernels read (Note [Layer normalisation] in
// kernels/layer_norm_shape.cc): x as [rows, cols] with the normalised trailing axes, from
// attrs.axis (the first of them, negative from the end) to the last, flattened into cols.
//
//   const LayerNormLayout l = layer_norm_layout(*x.shape, attrs.axis);
//   // row r is x[r * l.cols, (r + 1) * l.cols); mean[r] and inv_std[r] are its statistics

#include <cstdint>

#include "core/dtype.h"
#include "core/shape.h"

namespace mt::internal {

struct LayerNormLayout {
  int64_t rows;
  int64_t cols;
};

// Returns the first normalised axis of an x of rank `rank` for attrs.axis (negative from
// the end), or -1 when it lies outside [-rank, rank).
inline int layer_norm_begin_axis(int rank, int64_t axis) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  return a >= 0 && a < rank ? static_cast<int>(a) : -1;
}

// Returns the layout of a validated call on `x` with attrs.axis `axis`.
inline LayerNormLayout layer_norm_layout(const Shape& x, int64_t axis) {
  const int begin = layer_norm_begin_axis(x.rank(), axis);
  int64_t rows = 1, cols = 1;
  for (int i = 0; i < x.rank(); ++i) (i < begin ? rows : cols) *= x.dim(i);
  return {rows, cols};
}

// The dtype of gamma, beta, the statistics and the parameters' gradients for an x of `x`:
// float64 for float64, float32 for the others (the 2-byte floats compute in float32).
constexpr DType layer_norm_stats_dtype(DType x) {
  return x == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
}

}  // namespace mt::internal
