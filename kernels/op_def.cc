// infer_output: dispatches to the shape function of each op family (kernels/shape_fns.h)
// and holds the checks they share.
#include "kernels/op_def.h"

#include "absl/strings/str_join.h"
#include "kernels/shape_fns.h"

namespace mt {
namespace internal {

absl::Status check_arity(OpId op, size_t got, size_t want) {
  if (__builtin_expect(got == want, 1)) return absl::OkStatus();
  return op_error(op, "expects ", want, want == 1 ? " input" : " inputs", ", got ", got);
}

absl::Status dtype_not_supported(OpId op, DType dtype) {
  std::string names;
  for (int d = 0; d < kNumDTypes; ++d) {
    if ((op_dtypes(op) & dtype_bit(static_cast<DType>(d))) == 0) continue;
    absl::StrAppend(&names, names.empty() ? "" : ", ", dtype_name(static_cast<DType>(d)));
  }
  return op_error(op, "dtype ", dtype_name(dtype), " is not supported; expected one of ", names);
}

absl::Status dtypes_differ(OpId op, DType a, DType b) {
  return op_error(op, "dtypes differ: ", dtype_name(a), " vs ", dtype_name(b));
}

absl::StatusOr<Shape> make_output_shape(OpId op, absl::Span<const int64_t> dims) {
  absl::StatusOr<Shape> shape = Shape::make(dims);
  if (__builtin_expect(shape.ok(), 1)) return shape;
  return op_error(op, "output shape [", absl::StrJoin(dims, ","),
                  "] has too many elements: its byte size overflows int64");
}

}  // namespace internal

absl::StatusOr<OutputMeta> infer_output(OpId op, absl::Span<const TensorMeta> inputs,
                                        const OpAttrs& attrs) {
  switch (op) {
    case OpId::kEagerConst:
    case OpId::kFill:
    case OpId::kIdentity:
    case OpId::kCast:
      return internal::infer_data_op(op, inputs, attrs);
    case OpId::kMatMul:
      return internal::infer_matmul(inputs, attrs);
    case OpId::kAddN:
      return internal::infer_add_n(inputs);
    case OpId::kAddV2:
    case OpId::kSub:
    case OpId::kMul:
    case OpId::kRealDiv:
      return internal::infer_binary(op, inputs);
    case OpId::kNeg:
    case OpId::kAbs:
    case OpId::kExp:
    case OpId::kRelu:
      return internal::infer_unary(op, inputs);
    case OpId::kSum:
    case OpId::kMean:
    case OpId::kMax:
      return internal::infer_reduction(op, inputs, attrs);
  }
  MT_CHECK(false && "unknown OpId");
  __builtin_unreachable();
}

}  // namespace mt
