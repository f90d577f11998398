// Shape functions of the data ops: _EagerConst, Fill, Range, Identity and Cast; Range's
// length (kernels/range.h).
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/half.h"
#include "kernels/range.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

// Returns an error when Fill's value does not fit its integer dtype.
absl::Status check_fill_value(DType dtype, const Scalar& value) {
  if (dtype != DType::kInt32) return absl::OkStatus();
  if (value.i >= std::numeric_limits<int32_t>::min() &&
      value.i <= std::numeric_limits<int32_t>::max()) {
    return absl::OkStatus();
  }
  return op_error(OpId::kFill, "value ", value.i, " is out of range for int32");
}

constexpr OpId kRange = OpId::kRange;

// TensorFlow's checks of the bounds, on values already of the dtype.
template <typename V>
absl::Status check_range(V start, V limit, V delta) {
  if (delta == 0) return op_error(kRange, "Requires delta != 0: ", delta);
  if (delta > 0 && start > limit) {
    return op_error(kRange, "Requires start <= limit when delta > 0: ", start, "/", limit);
  }
  if (delta < 0 && start < limit) {
    return op_error(kRange, "Requires start >= limit when delta < 0: ", start, "/", limit);
  }
  return absl::OkStatus();
}

absl::Status too_long() {
  return op_error(kRange,
                  "Requires ((limit - start) / delta) <= ", std::numeric_limits<int64_t>::max());
}

// A float dtype's length: ceil(|(limit - start) / delta|) in T's arithmetic (float32 for the
// 2-byte types, each step rounded to T), as TensorFlow computes it.
template <typename T>
absl::StatusOr<int64_t> float_range_size(double start_d, double limit_d, double delta_d) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const auto round = [](C v) { return static_cast<C>(static_cast<T>(v)); };
  const auto narrow = [](double v) {
    if constexpr (std::is_same_v<C, double>) {
      return v;
    } else {
      return narrow_to_float(v);
    }
  };
  const C start = round(narrow(start_d)), limit = round(narrow(limit_d));
  const C delta = round(narrow(delta_d));
  MT_RETURN_IF_ERROR(check_range(start, limit, delta));
  const double size =
      std::ceil(static_cast<double>(std::fabs(round(round(limit - start) / delta))));
  if (!(size < 9.2233720368547758e18)) return too_long();  // below 2^63, and not NaN
  return static_cast<int64_t>(size);
}

}  // namespace

absl::StatusOr<int64_t> range_size(DType dtype, const Scalar& start, const Scalar& limit,
                                   const Scalar& delta) {
  switch (dtype) {
    case DType::kInt32:
    case DType::kInt64: {
      if (dtype == DType::kInt32) {  // the wrapper checks; a remote or fuzzed call may not
        for (int64_t v : {start.i, limit.i, delta.i}) {
          if (v != static_cast<int32_t>(v)) {
            return op_error(kRange, "bound ", v, " is out of range for int32");
          }
        }
      }
      MT_RETURN_IF_ERROR(check_range(start.i, limit.i, delta.i));
      const __int128 span = static_cast<__int128>(limit.i) - start.i;
      const __int128 step = delta.i < 0 ? -static_cast<__int128>(delta.i) : delta.i;
      const __int128 size = ((span < 0 ? -span : span) + step - 1) / step;
      if (size > std::numeric_limits<int64_t>::max()) return too_long();
      return static_cast<int64_t>(size);
    }
    case DType::kFloat32:
      return float_range_size<float>(start.f, limit.f, delta.f);
    case DType::kFloat64:
      return float_range_size<double>(start.f, limit.f, delta.f);
    case DType::kBFloat16:
      return float_range_size<bfloat16>(start.f, limit.f, delta.f);
    case DType::kFloat16:
      return float_range_size<float16>(start.f, limit.f, delta.f);
    default:
      return dtype_not_supported(kRange, dtype);
  }
}

absl::Status infer_data_op(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                           OutputMetas* out) {
  const TensorMeta& in = inputs[0];
  MT_RETURN_IF_ERROR(check_dtype(op, in.dtype));
  if (op == OpId::kFill) MT_RETURN_IF_ERROR(check_fill_value(in.dtype, attrs.value));
  if (op != OpId::kCast) {
    out->push_back(OutputMeta{*in.shape, in.dtype});
    return absl::OkStatus();
  }
  const int dst = static_cast<int>(attrs.dst_dtype);
  if (dst >= kNumDTypes) {
    return op_error(op, "invalid destination dtype ", dst);
  }
  out->push_back(OutputMeta{*in.shape, attrs.dst_dtype});
  return absl::OkStatus();
}

// Range: the output its wrapper sized (a source op sees it as its input) must hold the range.
absl::Status infer_range(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                         OutputMetas* out) {
  const TensorMeta& in = inputs[0];
  MT_RETURN_IF_ERROR(check_dtype(op, in.dtype));
  MT_ASSIGN_OR_RETURN(int64_t size, range_size(in.dtype, attrs.start, attrs.limit, attrs.delta));
  if (in.shape->rank() != 1 || in.shape->dim(0) != size) {
    return op_error(op, "output shape ", in.shape->to_list_string(), " does not hold the range's ",
                    size, " elements");
  }
  out->push_back(OutputMeta{*in.shape, in.dtype});
  return absl::OkStatus();
}

// The assignments to a variable: the value has the variable's dtype and shape; no output.
absl::Status infer_assign(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs&,
                          OutputMetas*) {
  const TensorMeta& var = inputs[0];
  const TensorMeta& value = inputs[1];
  MT_RETURN_IF_ERROR(check_same_dtype(op, var.dtype, value.dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, var.dtype));
  if (*var.shape != *value.shape) {
    return op_error(op, "Trying to assign to variable with tensor with wrong shape. Expected ",
                    var.shape->to_string(), " got ", value.shape->to_string());
  }
  return absl::OkStatus();
}

}  // namespace mt::internal
