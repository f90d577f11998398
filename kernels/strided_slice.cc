// StridedSlice's index spec, resolved against the input shape as TensorFlow does: the
// sparse spec (one entry per begin/end/strides element, with an ellipsis and new axes)
// becomes one (begin, stride, size) per input dimension.
#include <algorithm>
#include <vector>

#include "kernels/array_layout.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

constexpr OpId kOp = OpId::kStridedSlice;
constexpr int kNewAxis = -1;
constexpr int kShrink = -2;

struct DenseEntry {
  int64_t begin = 0, end = 0, stride = 1;
  bool begin_masked = false, end_masked = false, shrink = false;
};

// Expands the sparse spec (with an implicit trailing ellipsis when none is given) to one
// entry per input dimension; `gather` lists for each output dimension its source.
absl::Status dense_spec(const Shape& in, const OpAttrs& a, std::vector<DenseEntry>* dense,
                        absl::InlinedVector<int, 8>* gather) {
  const int n = static_cast<int>(a.dims.size());
  const int rank = in.rank();
  int ellipsis = a.ellipsis_mask, sparse = n;
  // No ellipsis among the entries (a mask bit past them counts for none, as in TensorFlow's
  // BuildDenseSpec): one goes at the end.
  if ((ellipsis & ((int64_t{1} << n) - 1)) == 0) {
    ellipsis = 1 << n;
    ++sparse;
  }
  int after_ellipsis = 0;  // new axes after the ellipsis
  bool seen = false;
  for (int i = 0; i < sparse; ++i) {
    if (seen && (a.new_axis_mask >> i & 1) && !(ellipsis >> i & 1)) ++after_ellipsis;
    if (ellipsis >> i & 1) seen = true;
  }
  dense->assign(rank, DenseEntry());
  int full = 0;
  for (int i = 0; i < sparse; ++i) {
    if (ellipsis >> i & 1) {
      const int next = std::min(rank - (sparse - i) + 1 + after_ellipsis, rank);
      for (; full < next; ++full) {
        (*dense)[full].begin_masked = (*dense)[full].end_masked = true;
        gather->push_back(full);
      }
    } else if (a.new_axis_mask >> i & 1) {
      gather->push_back(kNewAxis);
    } else {
      if (full >= rank) {
        return op_error(kOp, "Index out of range using input dim ", full, "; input has only ", rank,
                        " dims");
      }
      DenseEntry& e = (*dense)[full];
      e = DenseEntry{a.dims[i],
                     a.dims2[i],
                     a.dims3[i],
                     (a.begin_mask >> i & 1) != 0,
                     (a.end_mask >> i & 1) != 0,
                     (a.shrink_axis_mask >> i & 1) != 0};
      gather->push_back(e.shrink ? kShrink : full);
      ++full;
    }
  }
  return absl::OkStatus();
}

// Clamps a begin (c = 0) or end (c = 1) to the dimension as TensorFlow's canonical().
int64_t canonical(int64_t x, int c, bool masked, int64_t stride, int64_t dim) {
  const int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
  if (masked) return (stride > 0) == (c == 0) ? lo : hi;
  const int64_t fwd = x < 0 ? dim + x : x;
  return std::clamp(fwd, lo, hi);
}

}  // namespace

absl::Status resolve_strided_slice(const Shape& in, const OpAttrs& a, StridedSliceSpec* spec) {
  if (a.dims.size() != a.dims2.size() || a.dims.size() != a.dims3.size()) {
    return op_error(kOp, "Expected begin, end, and strides to be 1D equal size tensors, ",
                    "but got shapes [", a.dims.size(), "], [", a.dims2.size(), "], and [",
                    a.dims3.size(), "] instead.");
  }
  if (a.dims.size() > 31) return op_error(kOp, "at most 31 slice entries are supported");
  if ((a.ellipsis_mask & (a.ellipsis_mask - 1)) != 0) {
    return op_error(kOp, "Multiple ellipses in slice spec not allowed");
  }
  std::vector<DenseEntry> dense;
  absl::InlinedVector<int, 8> gather;
  MT_RETURN_IF_ERROR(dense_spec(in, a, &dense, &gather));
  for (auto* v : {&spec->begin, &spec->stride, &spec->size, &spec->out_dims}) v->clear();
  spec->out_source.clear();
  for (int i = 0; i < in.rank(); ++i) {
    const DenseEntry& e = dense[i];
    const int64_t dim = in.dim(i);
    if (e.stride == 0) return op_error(kOp, "strides[", i, "] must be non-zero");
    int64_t begin, size;
    if (e.shrink) {
      if (e.stride <= 0) return op_error(kOp, "only stride 1 allowed on non-range indexing.");
      const int64_t fwd = e.begin < 0 ? dim + e.begin : e.begin;
      if (fwd < 0 || fwd >= dim) {
        return op_error(kOp, "slice index ", e.begin, " of dimension ", i, " out of bounds.");
      }
      begin = fwd;
      size = 1;
    } else {
      begin = canonical(e.begin, 0, e.begin_masked, e.stride, dim);
      const int64_t end = canonical(e.end, 1, e.end_masked, e.stride, dim);
      const int64_t len = end - begin;
      size = (len == 0 || (len < 0) != (e.stride < 0))
                 ? 0
                 : len / e.stride + (len % e.stride != 0 ? 1 : 0);
    }
    // An empty dimension reads nothing: start at 0 so that no offset leaves the buffer. One
    // of at most one element never steps: stride 1 keeps the copy plan's stride x elements
    // products in range whatever the stride was (INT64_MIN overflowed them).
    spec->begin.push_back(size == 0 ? 0 : begin);
    spec->stride.push_back(size <= 1 ? 1 : e.stride);
    spec->size.push_back(size);
  }
  for (int g : gather) {
    if (g == kShrink) continue;
    spec->out_source.push_back(g == kNewAxis ? -1 : g);
    spec->out_dims.push_back(g == kNewAxis ? 1 : spec->size[g]);
  }
  return absl::OkStatus();
}

}  // namespace mt::internal
