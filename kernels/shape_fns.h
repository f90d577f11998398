#pragma once
// Internal to kernels/: the shape functions behind infer_outputs, one per op family
// (data_shape.cc, math_shape.cc, reduction_shape.cc), and the checks they share. CPU and
// CUDA kernels reuse reduction_mask to read a validated Sum/Mean/Max call.

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/status.h"
#include "kernels/op_def.h"
#include "kernels/op_id.h"

namespace mt::internal {

// Returns InvalidArgument with the message "[<op name>] " followed by `args`.
template <typename... Args>
absl::Status op_error(OpId op, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat("[", op_name(op), "] ", args...));
}

// Returns an error unless `got` inputs is what `op` takes.
absl::Status check_arity(OpId op, size_t got, size_t want);
// Returns an error naming the accepted dtypes unless `op` accepts `dtype`.
absl::Status dtype_not_supported(OpId op, DType dtype);
inline absl::Status check_dtype(OpId op, DType dtype) {
  if (__builtin_expect((op_dtypes(op) & dtype_bit(dtype)) != 0, 1)) return absl::OkStatus();
  return dtype_not_supported(op, dtype);
}
// Returns an error naming both dtypes unless `a` and `b` are the same.
absl::Status dtypes_differ(OpId op, DType a, DType b);
inline absl::Status check_same_dtype(OpId op, DType a, DType b) {
  if (__builtin_expect(a == b, 1)) return absl::OkStatus();
  return dtypes_differ(op, a, b);
}
// Validates an output shape built by an op (it may overflow even when the inputs do not).
absl::StatusOr<Shape> make_output_shape(OpId op, absl::Span<const int64_t> dims);

// The shape functions, by family, named in the shape_fn column of kernels/op_table.h.
// Each validates dtypes, shapes and attributes (infer_outputs has checked a fixed arity)
// and appends the outputs to `*out`.
#define MT_DECLARE_SHAPE_FN(Name, tf, cc, py, arity, dtypes, shape_fn, flags)               \
  absl::Status shape_fn(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs, \
                        OutputMetas* out);
MT_OP_TABLE(MT_DECLARE_SHAPE_FN)
#undef MT_DECLARE_SHAPE_FN

// Which input dimensions a reduction removes: mask[i] is true when dimension i is reduced.
using AxisMask = absl::InlinedVector<bool, 8>;

// Fills `mask` for a Sum/Mean/Max call on `input`; InvalidArgument for an axis out of
// [-rank, rank) or a repeated axis. Ignores attrs.axes when attrs.reduce_all is set.
absl::Status reduction_mask(OpId op, const Shape& input, const OpAttrs& attrs, AxisMask* mask);

}  // namespace mt::internal
