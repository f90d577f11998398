#include "runtime/ops/random_ops.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/op_def.h"
#include "kernels/philox.h"
#include "runtime/eager/context.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"
#include "runtime/ops/random_reserve.h"

namespace mt::random {
namespace {

// Returns the stream a stateful op's calls share: one per op, dtype and device, as
// TensorFlow keeps one generator per cached kernel.
uint64_t stream_id(OpId op, DType dtype, int device) {
  return uint64_t{static_cast<uint8_t>(op)} << 40 | uint64_t{static_cast<uint8_t>(dtype)} << 32 |
         static_cast<uint32_t>(device);
}

// Sets attrs->philox for a stateful op: places the op, then reserves its numbers on the
// host, so that the same calls give the same numbers on every device.
absl::Status reserve(OpId op, DType dtype, const Shape& shape, std::optional<int64_t> seed,
                     OpAttrs* attrs) {
  internal::Context& ctx = internal::Context::get();
  MT_ASSIGN_OR_RETURN(internal::Runtime * rt, ctx.runtime());
  MT_ASSIGN_OR_RETURN(Placement p, internal::place(ctx, *rt, op, dtype));
  RandomSeedState& seeds = ctx.random_seeds();
  attrs->philox =
      seeds.reserve(stream_id(op, dtype, p.device), seeds.op_seeds(seed), shape.num_elements());
  return absl::OkStatus();
}

// Runs a random op: validates the call (before any numbers are reserved), sets where its
// stream starts (from `stateless` or the seed state) and executes it.
absl::StatusOr<Tensor> run(OpId op, DType dtype, absl::Span<const int64_t> dims, OpAttrs attrs,
                           std::optional<int64_t> seed, const StatelessSeed* stateless,
                           const internal::RandomReserve* reserve_from = nullptr) {
  if (static_cast<int>(dtype) >= kNumDTypes) {
    return absl::InvalidArgumentError(
        absl::StrCat("[", op_name(op), "] invalid dtype ", static_cast<int>(dtype)));
  }
  MT_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
  const TensorMeta meta{&shape, dtype};
  OutputMetas out;
  MT_RETURN_IF_ERROR(infer_outputs(op, {&meta, 1}, attrs, &out));
  if (stateless != nullptr) {
    attrs.philox = stateless_philox_seed((*stateless)[0], (*stateless)[1]);
  } else if (reserve_from != nullptr) {
    MT_ASSIGN_OR_RETURN(attrs.philox, (*reserve_from)(shape.num_elements()));
  } else {
    MT_RETURN_IF_ERROR(reserve(op, dtype, shape, seed, &attrs));
  }
  return internal::execute_source(op, dtype, shape, nullptr, attrs);
}

// Returns `v` as an integer bound of `op`, or InvalidArgument when it is not integral.
absl::StatusOr<int64_t> integer_bound(OpId op, const char* name, double v) {
  if (!(v >= -9223372036854775808.0 && v <= 9223372036854774784.0) || v != std::trunc(v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("[", op_name(op), "] ", name, " ", v, " is not an int64 integer"));
  }
  return static_cast<int64_t>(v);
}

// Sets the bounds of an integer uniform op given float bounds (uniform with an int dtype).
absl::Status int_bounds(OpId op, DType dtype, double minval, std::optional<double> maxval,
                        OpAttrs* attrs) {
  if (!maxval.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "[", op_name(op), "] Must specify maxval for integer dtype ", dtype_name(dtype)));
  }
  MT_ASSIGN_OR_RETURN(attrs->minval.i, integer_bound(op, "minval", minval));
  MT_ASSIGN_OR_RETURN(attrs->maxval.i, integer_bound(op, "maxval", *maxval));
  return absl::OkStatus();
}

OpAttrs float_bounds(double minval, std::optional<double> maxval) {
  OpAttrs attrs;
  attrs.minval.f = minval;
  attrs.maxval.f = maxval.value_or(1.0);
  return attrs;
}

OpAttrs normal_attrs(double mean, double stddev) {
  OpAttrs attrs;
  attrs.mean = mean;
  attrs.stddev = stddev;
  return attrs;
}

OpAttrs int_attrs(int64_t minval, int64_t maxval) {
  OpAttrs attrs;
  attrs.minval.i = minval;
  attrs.maxval.i = maxval;
  return attrs;
}

bool is_int(DType dtype) {
  return static_cast<int>(dtype) < kNumDTypes && dtype_kind(dtype) == DTypeKind::kInt;
}

// uniform and stateless_uniform: the float op, or the integer one for int32 and int64.
absl::StatusOr<Tensor> run_uniform(OpId float_op, OpId int_op, absl::Span<const int64_t> shape,
                                   double minval, std::optional<double> maxval, DType dtype,
                                   std::optional<int64_t> seed, const StatelessSeed* stateless,
                                   const internal::RandomReserve* reserve_from = nullptr) {
  if (!is_int(dtype)) {
    return run(float_op, dtype, shape, float_bounds(minval, maxval), seed, stateless, reserve_from);
  }
  OpAttrs attrs;
  MT_RETURN_IF_ERROR(int_bounds(int_op, dtype, minval, maxval, &attrs));
  return run(int_op, dtype, shape, attrs, seed, stateless, reserve_from);
}

}  // namespace

void set_seed(std::optional<int64_t> seed) {
  internal::Context::get().random_seeds().set_global_seed(seed);
}

Tensor uniform(absl::Span<const int64_t> shape, double minval, std::optional<double> maxval,
               DType dtype, std::optional<int64_t> seed) {
  return internal::value_or_throw(run_uniform(OpId::kRandomUniform, OpId::kRandomUniformInt, shape,
                                              minval, maxval, dtype, seed, nullptr));
}

Tensor uniform_int(absl::Span<const int64_t> shape, int64_t minval, int64_t maxval, DType dtype,
                   std::optional<int64_t> seed) {
  return internal::value_or_throw(
      run(OpId::kRandomUniformInt, dtype, shape, int_attrs(minval, maxval), seed, nullptr));
}

Tensor normal(absl::Span<const int64_t> shape, double mean, double stddev, DType dtype,
              std::optional<int64_t> seed) {
  return internal::value_or_throw(
      run(OpId::kRandomStandardNormal, dtype, shape, normal_attrs(mean, stddev), seed, nullptr));
}

Tensor truncated_normal(absl::Span<const int64_t> shape, double mean, double stddev, DType dtype,
                        std::optional<int64_t> seed) {
  return internal::value_or_throw(
      run(OpId::kTruncatedNormal, dtype, shape, normal_attrs(mean, stddev), seed, nullptr));
}

Tensor stateless_uniform(absl::Span<const int64_t> shape, StatelessSeed seed, double minval,
                         std::optional<double> maxval, DType dtype) {
  return internal::value_or_throw(run_uniform(OpId::kStatelessRandomUniformV2,
                                              OpId::kStatelessRandomUniformIntV2, shape, minval,
                                              maxval, dtype, std::nullopt, &seed));
}

Tensor stateless_uniform_int(absl::Span<const int64_t> shape, StatelessSeed seed, int64_t minval,
                             int64_t maxval, DType dtype) {
  return internal::value_or_throw(run(OpId::kStatelessRandomUniformIntV2, dtype, shape,
                                      int_attrs(minval, maxval), std::nullopt, &seed));
}

Tensor stateless_normal(absl::Span<const int64_t> shape, StatelessSeed seed, double mean,
                        double stddev, DType dtype) {
  return internal::value_or_throw(run(OpId::kStatelessRandomNormalV2, dtype, shape,
                                      normal_attrs(mean, stddev), std::nullopt, &seed));
}

Tensor stateless_truncated_normal(absl::Span<const int64_t> shape, StatelessSeed seed, double mean,
                                  double stddev, DType dtype) {
  return internal::value_or_throw(run(OpId::kStatelessTruncatedNormalV2, dtype, shape,
                                      normal_attrs(mean, stddev), std::nullopt, &seed));
}

}  // namespace mt::random

namespace mt::internal {

absl::StatusOr<Tensor> random_uniform_from(const RandomReserve& reserve,
                                           absl::Span<const int64_t> shape, double minval,
                                           std::optional<double> maxval, DType dtype) {
  return random::run_uniform(OpId::kRandomUniform, OpId::kRandomUniformInt, shape, minval, maxval,
                             dtype, std::nullopt, nullptr, &reserve);
}

absl::StatusOr<Tensor> random_normal_from(const RandomReserve& reserve,
                                          absl::Span<const int64_t> shape, double mean,
                                          double stddev, DType dtype, bool truncated) {
  return random::run(truncated ? OpId::kTruncatedNormal : OpId::kRandomStandardNormal, dtype, shape,
                     random::normal_attrs(mean, stddev), std::nullopt, nullptr, &reserve);
}

}  // namespace mt::internal
