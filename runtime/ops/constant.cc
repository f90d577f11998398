#include "runtime/ops/constant.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/range.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"

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

Tensor constant(const std::vector<float>& values, absl::Span<const int64_t> shape, DType dtype) {
  if (static_cast<int>(dtype) >= kNumDTypes || !is_floating(dtype)) {
    internal::throw_error(absl::InvalidArgumentError(
        absl::StrCat("[_EagerConst] float values need a floating dtype, not ", dtype_name(dtype))));
  }
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      return internal::make_constant(dtype, values.data(), values.size(), shape);
    } else if constexpr (!is_floating(dtype_of<T>())) {
      MT_CHECK(false && "checked above");
      return Tensor();
    } else {
      std::vector<T> narrowed;
      narrowed.reserve(values.size());
      for (float v : values) narrowed.push_back(static_cast<T>(v));
      return internal::make_constant(dtype, narrowed.data(), narrowed.size(), shape);
    }
  });
}

namespace {

// Checks that `dtype` is a DType and that `value` is representable in it.
absl::Status check_fill(double value, DType dtype) {
  if (static_cast<int>(dtype) >= kNumDTypes) {
    return absl::InvalidArgumentError(
        absl::StrCat("[Fill] invalid dtype ", static_cast<int>(dtype)));
  }
  // Integers go through int64 (the kernels check the int32 range): the value must convert,
  // so NaN, infinities and |value| >= 2^63 are out of range. 2^63 - 1024 is the largest
  // double below 2^63.
  const bool integer = dtype_kind(dtype) == DTypeKind::kInt;
  if (integer && !(value >= -9223372036854775808.0 && value <= 9223372036854774784.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("[Fill] value ", value, " is out of range for ", dtype_name(dtype)));
  }
  return absl::OkStatus();
}

}  // namespace

Tensor fill(absl::Span<const int64_t> dims, double value, DType dtype) {
  internal::throw_if_error(check_fill(value, dtype));
  Shape shape = internal::value_or_throw(Shape::make(dims));
  OpAttrs attrs;
  // Only integer dtypes read `i`; check_fill has made sure the value converts for them.
  const bool integer = dtype_kind(dtype) == DTypeKind::kInt;
  attrs.value = Scalar{value, integer ? static_cast<int64_t>(value) : 0, value != 0};
  return internal::value_or_throw(
      internal::execute_source(OpId::kFill, dtype, shape, nullptr, attrs));
}

namespace {

// Returns `v` as Range's Scalar for `dtype`: InvalidArgument for an integer dtype unless `v`
// is an integer it holds.
absl::StatusOr<Scalar> range_scalar(double v, DType dtype) {
  if (dtype_kind(dtype) != DTypeKind::kInt) return Scalar{v, 0, v != 0};
  const double lo =
      dtype == DType::kInt32 ? std::numeric_limits<int32_t>::min() : -9223372036854775808.0;
  const double hi = dtype == DType::kInt32 ? std::numeric_limits<int32_t>::max()
                                           : 9223372036854774784.0;  // below 2^63
  if (!(v >= lo && v <= hi) || std::trunc(v) != v) {
    return absl::InvalidArgumentError(
        absl::StrCat("[Range] Cannot convert ", v, " to ", dtype_name(dtype)));
  }
  return Scalar{v, static_cast<int64_t>(v), v != 0};
}

}  // namespace

Tensor range(double start, double limit, double delta, DType dtype) {
  if (static_cast<int>(dtype) >= kNumDTypes) {
    internal::throw_if_error(absl::InvalidArgumentError(
        absl::StrCat("[Range] invalid dtype ", static_cast<int>(dtype))));
  }
  OpAttrs attrs;
  attrs.start = internal::value_or_throw(range_scalar(start, dtype));
  attrs.limit = internal::value_or_throw(range_scalar(limit, dtype));
  attrs.delta = internal::value_or_throw(range_scalar(delta, dtype));
  const int64_t size =
      internal::value_or_throw(internal::range_size(dtype, attrs.start, attrs.limit, attrs.delta));
  Shape shape = internal::value_or_throw(Shape::make({size}));
  return internal::value_or_throw(
      internal::execute_source(OpId::kRange, dtype, shape, nullptr, attrs));
}

Tensor zeros(absl::Span<const int64_t> shape, DType dtype) { return fill(shape, 0, dtype); }
Tensor ones(absl::Span<const int64_t> shape, DType dtype) { return fill(shape, 1, dtype); }

}  // namespace mt
