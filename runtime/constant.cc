#include "runtime/constant.h"

#include "absl/strings/str_cat.h"
#include "runtime/error.h"
#include "runtime/execute.h"

namespace mt {
namespace internal {

void check_row_length(int64_t expected, size_t actual, size_t depth) {
  if (static_cast<int64_t>(actual) != expected) {
    throw_error(absl::InvalidArgumentError(
        absl::StrCat("[_EagerConst] ragged nested list: a list at depth ", depth, " has ", actual,
                     " elements where its first sibling has ", expected)));
  }
}

Tensor make_constant(DType dtype, const void* data, size_t count, absl::Span<const int64_t> dims) {
  Shape shape = value_or_throw(Shape::make(dims));
  if (static_cast<int64_t>(count) != shape.num_elements()) {
    throw_error(absl::InvalidArgumentError(
        absl::StrCat("[_EagerConst] ", count, " values given for shape ", shape.to_string(),
                     ", which holds ", shape.num_elements())));
  }
  return value_or_throw(execute_source(OpId::kEagerConst, dtype, shape, data, OpAttrs()));
}

}  // namespace internal

Tensor fill(absl::Span<const int64_t> dims, double value, DType dtype) {
  Shape shape = internal::value_or_throw(Shape::make(dims));
  OpAttrs attrs;
  attrs.dst_dtype = dtype;
  attrs.value = Scalar{value, static_cast<int64_t>(value), value != 0};
  return internal::value_or_throw(
      internal::execute_source(OpId::kFill, dtype, shape, nullptr, attrs));
}

Tensor zeros(absl::Span<const int64_t> shape, DType dtype) { return fill(shape, 0, dtype); }
Tensor ones(absl::Span<const int64_t> shape, DType dtype) { return fill(shape, 1, dtype); }

}  // namespace mt
