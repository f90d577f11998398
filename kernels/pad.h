#pragma once
// The index arithmetic of Pad, PadV2, MirrorPad and MirrorPadGrad, shared by the kernels of
// both backends (Note [Pads and top k] in kernels/pad_shape.cc): which input element a padded
// element copies, and which padded elements a MirrorPadGrad output element sums.
//
//   PadGeometry g = pad_geometry(*ctx.inputs[0].shape, *ctx.attrs);  // Pad: the input
//   const int64_t from = pad_source(g, i, /*mirror=*/false);         // -1: in the padding

#include <cstdint>

#include "core/shape.h"
#include "kernels/op_attrs.h"
#include "kernels/philox.h"  // MT_HOST_DEVICE

namespace mt::internal {

// The most dimensions a pad takes (TensorFlow's Pad takes 6, MirrorPad 5).
inline constexpr int kMaxPadRank = 6;

// A validated pad call, passed by value to GPU kernels: the unpadded sizes (Pad's input,
// MirrorPadGrad's output), the padded ones and the padding before each dimension.
struct PadGeometry {
  int rank = 0;
  int64_t in[kMaxPadRank] = {};
  int64_t out[kMaxPadRank] = {};
  int64_t before[kMaxPadRank] = {};
  bool symmetric = false;
};

// Returns the geometry of a call whose unpadded shape is `unpadded` (infer_pad checked it).
inline PadGeometry pad_geometry(const Shape& unpadded, const OpAttrs& attrs) {
  PadGeometry g;
  g.rank = unpadded.rank();
  for (int d = 0; d < g.rank; ++d) {
    g.in[d] = unpadded.dim(d);
    g.before[d] = attrs.dims[2 * d];
    g.out[d] = g.in[d] + attrs.dims[2 * d] + attrs.dims[2 * d + 1];
  }
  g.symmetric = attrs.symmetric;
  return g;
}

// Returns the coordinate of a dimension of size `n`, padded by `before`, that padded
// coordinate `o` mirrors (REFLECT leaves the edge out, SYMMETRIC repeats it).
MT_HOST_DEVICE inline int64_t mirror_source(int64_t o, int64_t before, int64_t n, bool symmetric) {
  const int64_t i = o - before;
  if (i < 0) return symmetric ? -i - 1 : -i;
  if (i >= n) return symmetric ? 2 * n - 1 - i : 2 * n - 2 - i;
  return i;
}

// Returns the flat input index padded element `o` copies, or -1 where a constant pad
// (mirror false) writes its value.
MT_HOST_DEVICE inline int64_t pad_source(const PadGeometry& g, int64_t o, bool mirror) {
  int64_t from = 0, stride = 1;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t q = o / g.out[d], c = o - q * g.out[d];
    o = q;
    const int64_t i =
        mirror ? mirror_source(c, g.before[d], g.in[d], g.symmetric) : c - g.before[d];
    if (i < 0 || i >= g.in[d]) return -1;
    from += i * stride;
    stride *= g.in[d];
  }
  return from;
}

// The padded elements MirrorPad copies one unpadded element to: per dimension up to three
// coordinates (its mirror before the data, itself, its mirror after), walked as an odometer.
struct MirrorTargets {
  int64_t at[kMaxPadRank][3];
  int count[kMaxPadRank];
  int pick[kMaxPadRank];
};

// Starts `t` at the first padded element unpadded flat element `j` is copied to.
MT_HOST_DEVICE inline void mirror_targets(const PadGeometry& g, int64_t j, MirrorTargets* t) {
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t q = j / g.in[d], i = j - q * g.in[d], n = g.in[d], b = g.before[d];
    j = q;
    int count = 0;
    const int64_t left = g.symmetric ? b - 1 - i : b - i;
    if (left >= 0 && left < b) t->at[d][count++] = left;
    t->at[d][count++] = b + i;
    const int64_t right = b + (g.symmetric ? 2 * n - 1 - i : 2 * n - 2 - i);
    if (right >= b + n && right < g.out[d]) t->at[d][count++] = right;
    t->count[d] = count;
    t->pick[d] = 0;
  }
}

// Returns the flat padded index `t` is at.
MT_HOST_DEVICE inline int64_t mirror_target(const PadGeometry& g, const MirrorTargets& t) {
  int64_t flat = 0;
  for (int d = 0; d < g.rank; ++d) flat = flat * g.out[d] + t.at[d][t.pick[d]];
  return flat;
}

// Moves `t` to its next padded element; false after the last.
MT_HOST_DEVICE inline bool mirror_next(const PadGeometry& g, MirrorTargets* t) {
  for (int d = g.rank - 1; d >= 0; --d) {
    if (++t->pick[d] < t->count[d]) return true;
    t->pick[d] = 0;
  }
  return false;
}

}  // namespace mt::internal
