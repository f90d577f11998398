// infer_outputs: checks the arity of the op's row and calls its shape function
// (kernels/shape_fns.h); the checks the shape functions share.
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

namespace {

using ShapeFn = absl::Status (*)(OpId, absl::Span<const TensorMeta>, const OpAttrs&, OutputMetas*);

#define MT_SHAPE_FN(Name, tf, cc, py, arity, dtypes, shape_fn, flags) &internal::shape_fn,
constexpr ShapeFn kShapeFns[] = {MT_OP_TABLE(MT_SHAPE_FN)};
#undef MT_SHAPE_FN
static_assert(sizeof(kShapeFns) / sizeof(kShapeFns[0]) == kNumOps);

}  // namespace

absl::Status infer_outputs(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                           OutputMetas* out) {
  const int arity = op_info(op).arity;
  if (arity != kVariadic) {
    MT_RETURN_IF_ERROR(internal::check_arity(op, inputs.size(), static_cast<size_t>(arity)));
  }
  const size_t before = out->size();
  absl::Status status = kShapeFns[static_cast<int>(op)](op, inputs, attrs, out);
  if (__builtin_expect(!status.ok(), 0)) out->resize(before);
  return status;
}

absl::StatusOr<OutputMeta> infer_output(OpId op, absl::Span<const TensorMeta> inputs,
                                        const OpAttrs& attrs) {
  OutputMetas out;
  MT_RETURN_IF_ERROR(infer_outputs(op, inputs, attrs, &out));
  if (out.empty()) return internal::op_error(op, "has no output");  // the assignments
  return std::move(out[0]);
}

}  // namespace mt
