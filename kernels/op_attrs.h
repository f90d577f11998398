#pragma once
// OpAttrs: the attributes an op call carries besides its inputs. One flat struct for every
// op, so that building an op call needs no heap; each op reads only the fields it names.

#include <array>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "core/dtype.h"
#include "kernels/philox.h"

namespace mt {

// A scalar of any dtype: `f` for floating types, `i` for integers, `b` for bool.
struct Scalar {
  double f = 0;
  int64_t i = 0;
  bool b = false;
};

// Conv2D's and the pools' padding (TensorFlow's `padding`): none, the output size of
// ceil(input / stride) with the padding split evenly (the extra one after), or
// explicit_paddings.
enum class Padding : uint8_t { kValid, kSame, kExplicit };

struct OpAttrs {
  // MatMul; BatchMatMulV2's adj_x and adj_y (the adjoint is the transpose for real types).
  bool transpose_a = false;
  bool transpose_b = false;
  // Sum, Mean, Max: axes to reduce, each in [-rank, rank); `reduce_all` ignores them.
  absl::InlinedVector<int64_t, 4> axes;
  bool reduce_all = false;
  bool keep_dims = false;
  DType dst_dtype = DType::kFloat32;  // Cast: the target dtype
  Scalar value;  // Fill: the value to fill with; OneHot: on_value; PadV2: constant_values
  // Range: the first value, the bound it stops before and the step (`f` for the float
  // dtypes, `i` for the integers).
  Scalar start;
  Scalar limit;
  Scalar delta = {1, 1, true};
  // The array ops (Note [Array op attributes] in kernels/array_layout.h):
  //   dims:  Reshape, BroadcastTo: the shape; Transpose: perm; Tile: multiples; SplitV:
  //          size_splits (empty: num_split equal parts); Slice, StridedSlice: begin;
  //          MatrixBandPart: (num_lower, num_upper); Pad, PadV2, MirrorPad,
  //          MirrorPadGrad: (before, after) of each dimension, flattened; ScatterNd:
  //          the output's shape
  //   dims2: Slice: size; StridedSlice: end
  //   dims3: StridedSlice: strides
  absl::InlinedVector<int64_t, 4> dims;
  absl::InlinedVector<int64_t, 4> dims2;
  absl::InlinedVector<int64_t, 4> dims3;
  // ExpandDims, ConcatV2, Pack, SplitV, GatherV2, OneHot, Cumsum: the axis (negative from
  // the end); LayerNorm and LayerNormGrad: the first normalised axis (-1: the last alone)
  int64_t axis = 0;
  // Cumsum: leave each element out of its own sum (exclusive), sum from the end (reverse).
  bool exclusive = false;
  bool reverse = false;
  // MirrorPad, MirrorPadGrad: mode SYMMETRIC (the edge repeated) or REFLECT (false).
  bool symmetric = false;
  // TopKV2: how many of the largest elements to keep along the last axis, and whether
  // they come sorted by value (TensorFlow leaves the order of unsorted ones open).
  int64_t k = 0;
  bool sorted = true;
  // Gelu: the tanh approximation (tf.nn.gelu's approximate=True) instead of the exact erf.
  bool approximate = false;
  int64_t num_split = 0;  // SplitV without size_splits: the number of equal parts
  int64_t depth = 0;      // OneHot
  Scalar off_value;       // OneHot (the output dtype is dst_dtype)
  // StridedSlice: bit i of each mask applies to entry i of begin/end/strides.
  int32_t begin_mask = 0;
  int32_t end_mask = 0;
  int32_t ellipsis_mask = 0;
  int32_t new_axis_mask = 0;
  int32_t shrink_axis_mask = 0;
  // The random ops (Note [Random ops] in kernels/random_shape.cc): where the output's
  // Philox stream starts, fixed on the host at the call; the uniform's bounds (`f` for the
  // float ops, `i` for the integer ones); the normals' mean and standard deviation.
  PhiloxSeed philox = {};
  Scalar minval;
  Scalar maxval = {1, 1, false};
  double mean = 0;
  double stddev = 1;
  // ResourceApplyAdam (Note [Fused Adam] in kernels/optimizer_shape.cc): the optimizer's
  // constants (the step's learning rate is an input).
  double beta_1 = 0;
  double beta_2 = 0;
  double epsilon = 0;  // also the batch and layer normalisations'
  // Conv2D, its backprops and the pools (Note [Convolutions] in kernels/conv_shape.cc), in
  // the data format's dimension order (N, H, W, C, or N, C, H, W when channels_first): the
  // window's strides, dilations (Conv2D) and size (ksize, the pools), the padding and, for
  // Padding::kExplicit, the (before, after) pair of each dimension. The backprops and
  // AvgPoolGrad take the shape they write (TensorFlow's input_sizes, filter_sizes and
  // orig_input_shape) in `dims`.
  std::array<int32_t, 4> strides = {1, 1, 1, 1};
  std::array<int32_t, 4> dilations = {1, 1, 1, 1};
  std::array<int32_t, 4> ksize = {1, 1, 1, 1};
  Padding padding = Padding::kValid;
  std::array<int32_t, 8> explicit_paddings = {};
  bool channels_first = false;  // data_format "NCHW"; also FusedBatchNormV3 and its gradient
  // FusedBatchNormV3 and FusedBatchNormGradV3 (with `epsilon`, added to the variance): batch
  // statistics (true) or the given ones, and the weight of the batch's statistics in the
  // running ones it returns (1: the batch's alone).
  bool is_training = true;
  double exponential_avg_factor = 1;
  // DotProductAttention and its gradient (Note [Dot-product attention] in
  // kernels/attention_shape.cc): the factor of q . k (finite; the API's default is 1 /
  // sqrt(depth)), and whether query i sees only keys j <= i.
  double scale = 1;
  bool causal = false;
};

}  // namespace mt
