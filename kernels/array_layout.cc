// The element layouts of the array ops (Note [Array ops] in array_layout.h).
#include "kernels/array_layout.h"

#include "core/check.h"
#include "core/status.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

// Row-major strides of `shape`, in elements.
absl::InlinedVector<int64_t, 8> row_major_strides(const Shape& shape) {
  absl::InlinedVector<int64_t, 8> strides(shape.rank());
  int64_t s = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape.dim(i);
  }
  return strides;
}

// Drops size-1 dimensions and merges a dimension into the next when the input steps
// through both as through one.
void simplify(CopyPlan* plan) {
  auto& dims = plan->dims;
  auto& strides = plan->strides;
  size_t k = 0;  // dimensions kept so far; k <= i, so the merge runs in place
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i], s = strides[i];
    if (d == 1) continue;
    // Merges only where the products fit in int64: the dimensions of an output with no
    // element (or of one its shape function rejects next) may multiply past it.
    int64_t step, merged;
    if (k > 0 && !__builtin_mul_overflow(s, d, &step) && strides[k - 1] == step &&
        !__builtin_mul_overflow(dims[k - 1], d, &merged)) {
      dims[k - 1] = merged;
      strides[k - 1] = s;
      continue;
    }
    dims[k] = d;
    strides[k] = s;
    ++k;
  }
  dims.resize(k);
  strides.resize(k);
}

// Adds output dimension `dim` whose steps move `stride` input elements.
void add(CopyPlan* plan, int64_t dim, int64_t stride) {
  plan->dims.push_back(dim);
  plan->strides.push_back(stride);
}

}  // namespace

absl::Status make_copy_plan(OpId op, const Shape& in, const OpAttrs& attrs, CopyPlan* plan) {
  plan->dims.clear();
  plan->strides.clear();
  plan->offset = 0;
  if (in.num_elements() == 0) {
    // Each of these ops keeps a 0 dimension of its input (or rejects the call in its shape
    // function first), so the output has no element either: nothing to copy, and the
    // input's strides overflow where the dimensions beside the 0 multiply past int64.
    add(plan, 0, 0);
    return absl::OkStatus();
  }
  const auto strides = row_major_strides(in);
  const int rank = in.rank();
  switch (op) {
    case OpId::kTranspose:
      for (int i = 0; i < rank; ++i) add(plan, in.dim(attrs.dims[i]), strides[attrs.dims[i]]);
      break;
    case OpId::kSlice:
      for (int i = 0; i < rank; ++i) {
        const int64_t size = attrs.dims2[i] == -1 ? in.dim(i) - attrs.dims[i] : attrs.dims2[i];
        plan->offset += attrs.dims[i] * strides[i];
        add(plan, size, strides[i]);
      }
      break;
    case OpId::kStridedSlice: {
      StridedSliceSpec spec;
      MT_RETURN_IF_ERROR(resolve_strided_slice(in, attrs, &spec));
      for (int i = 0; i < rank; ++i) plan->offset += spec.begin[i] * strides[i];
      for (size_t j = 0; j < spec.out_dims.size(); ++j) {
        const int src = spec.out_source[j];
        add(plan, spec.out_dims[j], src < 0 ? 0 : spec.stride[src] * strides[src]);
      }
      break;
    }
    case OpId::kBroadcastTo: {
      const int out_rank = static_cast<int>(attrs.dims.size());
      for (int i = 0; i < out_rank; ++i) {
        const int j = i - (out_rank - rank);
        const bool kept = j >= 0 && in.dim(j) == attrs.dims[i];
        add(plan, attrs.dims[i], kept ? strides[j] : 0);
      }
      break;
    }
    case OpId::kTile:
      for (int i = 0; i < rank; ++i) {
        add(plan, attrs.dims[i], 0);
        add(plan, in.dim(i), strides[i]);
      }
      break;
    default:
      MT_CHECK(false && "no copy plan for this op");
  }
  simplify(plan);
  if (plan->dims.size() > kMaxCopyRank) {
    return op_error(op, "the copy needs ", plan->dims.size(),
                    " dimensions after merging, more than the ", kMaxCopyRank, " supported");
  }
  return absl::OkStatus();
}

ConcatLayout make_concat_layout(const Shape& whole, absl::Span<const Shape* const> pieces,
                                int64_t axis, size_t elem_size) {
  ConcatLayout layout;
  if (whole.num_elements() == 0) {
    // Nothing to copy; the rows' byte sizes may overflow with huge dimensions beside a 0.
    layout.outer = 0;
    layout.piece_row.assign(pieces.size(), 0);
    layout.offset.assign(pieces.size(), 0);
    return layout;
  }
  for (int64_t i = 0; i < axis; ++i) layout.outer *= whole.dim(i);
  int64_t row = static_cast<int64_t>(elem_size);
  for (int i = static_cast<int>(axis); i < whole.rank(); ++i) row *= whole.dim(i);
  layout.total_row = row;
  int64_t offset = 0;
  for (const Shape* piece : pieces) {
    int64_t piece_row = static_cast<int64_t>(elem_size);
    for (int i = static_cast<int>(axis); i < piece->rank(); ++i) piece_row *= piece->dim(i);
    layout.piece_row.push_back(piece_row);
    layout.offset.push_back(offset);
    offset += piece_row;
  }
  return layout;
}

}  // namespace mt::internal
