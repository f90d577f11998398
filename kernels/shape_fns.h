#pragma once
// Internal to kernels/: the shape functions behind infer_output, one per op family
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

namespace mt::internal {

// A set of dtypes, one bit per DType.
using DTypeSet = uint32_t;
constexpr DTypeSet dtype_bit(DType dtype) { return DTypeSet{1} << static_cast<int>(dtype); }
// Returns the set of dtypes whose kind is `kind`.
constexpr DTypeSet dtypes_of_kind(DTypeKind kind) {
  DTypeSet set = 0;
  for (int d = 0; d < kNumDTypes; ++d) {
    if (dtype_kind(static_cast<DType>(d)) == kind) set |= dtype_bit(static_cast<DType>(d));
  }
  return set;
}
inline constexpr DTypeSet kAllDTypes = (DTypeSet{1} << kNumDTypes) - 1;
inline constexpr DTypeSet kHalfDTypes = dtypes_of_kind(DTypeKind::kHalf);
inline constexpr DTypeSet kFloatDTypes = dtypes_of_kind(DTypeKind::kFloat) | kHalfDTypes;
inline constexpr DTypeSet kNumericDTypes = kAllDTypes & ~dtypes_of_kind(DTypeKind::kBool);

// Returns the dtypes `op` accepts: the union of what the backends implement (Note [Dtype
// support] in op_def.h). The CPU registers a kernel for every one of them.
constexpr DTypeSet op_dtypes(OpId op) {
  switch (op) {
    case OpId::kEagerConst:
    case OpId::kFill:
    case OpId::kIdentity:
    case OpId::kCast:
      return kAllDTypes;
    case OpId::kRealDiv:
    case OpId::kExp:
      return kFloatDTypes;
    default:
      return kNumericDTypes;
  }
}

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

// The shape functions, by family. Each validates arity, dtypes, shapes and attributes.
absl::StatusOr<OutputMeta> infer_data_op(OpId op, absl::Span<const TensorMeta> inputs,
                                         const OpAttrs& attrs);
absl::StatusOr<OutputMeta> infer_matmul(absl::Span<const TensorMeta> inputs, const OpAttrs& attrs);
absl::StatusOr<OutputMeta> infer_add_n(absl::Span<const TensorMeta> inputs);
absl::StatusOr<OutputMeta> infer_binary(OpId op, absl::Span<const TensorMeta> inputs);
absl::StatusOr<OutputMeta> infer_unary(OpId op, absl::Span<const TensorMeta> inputs);
absl::StatusOr<OutputMeta> infer_reduction(OpId op, absl::Span<const TensorMeta> inputs,
                                           const OpAttrs& attrs);

// Which input dimensions a reduction removes: mask[i] is true when dimension i is reduced.
using AxisMask = absl::InlinedVector<bool, 8>;

// Fills `mask` for a Sum/Mean/Max call on `input`; InvalidArgument for an axis out of
// [-rank, rank) or a repeated axis. Ignores attrs.axes when attrs.reduce_all is set.
absl::Status reduction_mask(OpId op, const Shape& input, const OpAttrs& attrs, AxisMask* mask);

}  // namespace mt::internal
