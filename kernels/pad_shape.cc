// Shape functions of Pad, PadV2, MirrorPad, MirrorPadGrad and TopKV2, with TensorFlow's
// error messages.
//
// Note [Pads and top k]
// TensorFlow passes the paddings, PadV2's constant and TopKV2's k as tensors; here they are
// attributes (a pad's (before, after) pairs flattened in `dims`, the constant in `value`,
// `k`), read on the host by the wrappers, as MatrixBandPart's bounds are. A constant pad
// writes the value outside the input; MirrorPad copies the input mirrored at each edge,
// without the edge element (REFLECT) or with it (SYMMETRIC), so each padding stays below
// (REFLECT) or at most (SYMMETRIC) the dimension. MirrorPadGrad is MirrorPad's gradient: each
// output element sums the gradient of every padded element that copied it (at most three
// per dimension, added in a fixed order on both backends, kernels/pad.h).
// TopKV2 keeps the k largest elements of each last-axis row, the larger first and, on ties,
// the lower index first (TensorFlow's order); a NaN ranks above every number (TensorFlow's
// order of NaNs depends on its sort). sorted=false returns them in that order too, which
// TensorFlow leaves open.
#include <cstdint>
#include <string>

#include "absl/strings/str_join.h"
#include "kernels/pad.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

std::string list(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// The paddings' own checks: (before, after) for each dimension, none negative.
absl::Status check_paddings(OpId op, const Shape& in, absl::Span<const int64_t> pads) {
  if (pads.size() % 2 != 0) {
    return op_error(op, "paddings must be a matrix with 2 columns: got ", pads.size(), " values");
  }
  const int64_t rank = in.rank();
  if (static_cast<int64_t>(pads.size()) / 2 != rank) {
    return op_error(op, "The first dimension of paddings must be the rank of inputs[",
                    pads.size() / 2, ",2]", op == OpId::kMirrorPad ? ", " : " ", list(in.dims()));
  }
  const bool mirror = op == OpId::kMirrorPad || op == OpId::kMirrorPadGrad;
  if (!mirror && rank > 6) {
    return op_error(op, "Only ranks up to 6 supported: ", list(in.dims()));
  }
  if (mirror && rank > 5) {
    return absl::UnimplementedError(
        absl::StrCat("[", op_name(op), "] inputs rank not in [0,5]: ", rank));
  }
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t before = pads[2 * d], after = pads[2 * d + 1];
    if (before >= 0 && after >= 0) continue;
    if (op == OpId::kMirrorPad) {
      return op_error(op, "paddings must be non-negative: ", before, " ", after);
    }
    return op_error(op, "Paddings must be non-negative: ", before,
                    op == OpId::kMirrorPadGrad ? ", " : " ", after);
  }
  return absl::OkStatus();
}

// MirrorPad's and MirrorPadGrad's bound on a padding: below the unpadded size `n` (REFLECT)
// or at most `n` (SYMMETRIC). `what` names the unpadded side as TensorFlow does.
absl::Status check_mirror(OpId op, int64_t before, int64_t after, int64_t n, bool symmetric,
                          const char* what) {
  if (symmetric && (before > n || after > n)) {
    return op_error(op, "paddings must be no greater than the ", what, " size: ", before, ", ",
                    after, " greater than ", n);
  }
  if (!symmetric && (before >= n || after >= n)) {
    return op_error(op, "paddings must be less than the ", what, " size: ", before, ", ", after,
                    " not less than ", n);
  }
  return absl::OkStatus();
}

}  // namespace

// Pad, PadV2, MirrorPad: the input grown by the paddings; MirrorPadGrad: the gradient
// shrunk by them.
absl::Status infer_pad(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                       OutputMetas* out) {
  const Shape& in = *inputs[0].shape;
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  MT_RETURN_IF_ERROR(check_paddings(op, in, attrs.dims));
  absl::InlinedVector<int64_t, kMaxPadRank> dims;
  for (int d = 0; d < in.rank(); ++d) {
    const int64_t before = attrs.dims[2 * d], after = attrs.dims[2 * d + 1], n = in.dim(d);
    if (op == OpId::kMirrorPad) {
      MT_RETURN_IF_ERROR(check_mirror(op, before, after, n, attrs.symmetric, "dimension"));
    }
    int64_t total = 0, size = 0;
    if (__builtin_add_overflow(before, after, &total) || __builtin_add_overflow(n, total, &size)) {
      return op_error(op, "the paddings of dimension ", d, " overflow int64");
    }
    if (op != OpId::kMirrorPadGrad) {
      dims.push_back(size);
      continue;
    }
    if (total >= n) {
      return op_error(op, "Total paddings must be less than the input dimension size: ", total,
                      " was not less than ", n);
    }
    size = n - total;
    MT_RETURN_IF_ERROR(check_mirror(op, before, after, size, attrs.symmetric, "output dimension"));
    dims.push_back(size);
  }
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  out->push_back(OutputMeta{std::move(shape), inputs[0].dtype});
  return absl::OkStatus();
}

// TopKV2: values and int32 indices of the attrs.k largest along the last axis.
absl::Status infer_top_k(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                         OutputMetas* out) {
  const Shape& in = *inputs[0].shape;
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  if (attrs.k < 0) return op_error(op, "Need k >= 0, got ", attrs.k);
  if (in.rank() < 1) return op_error(op, "input must be >= 1-D, got shape ", list(in.dims()));
  const int64_t cols = in.dim(in.rank() - 1);
  if (cols < attrs.k) {
    return op_error(op, "input must have at least k columns. Had ", cols, ", needed ", attrs.k);
  }
  if (cols > INT32_MAX) {
    return op_error(op, "input has ", cols, " columns, more than int32 indices can name");
  }
  absl::InlinedVector<int64_t, 8> dims(in.dims().begin(), in.dims().end());
  dims.back() = attrs.k;
  MT_ASSIGN_OR_RETURN(Shape shape, make_output_shape(op, dims));
  out->push_back(OutputMeta{shape, inputs[0].dtype});
  out->push_back(OutputMeta{std::move(shape), DType::kInt32});
  return absl::OkStatus();
}

}  // namespace mt::internal
