#pragma once
// Internal: the random ops of runtime/ops/random_ops.h with their numbers' start given by
// the caller (a Generator's state) instead of the seed state: `reserve(n)` returns where
// the op's n outputs start and moves its owner past them; it runs after the call is
// checked, so a bad call reserves nothing.

#include <cstdint>
#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "kernels/philox.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

using RandomReserve = std::function<absl::StatusOr<PhiloxSeed>(int64_t n)>;

// As random::uniform (RandomUniform, or RandomUniformInt for int32 and int64).
absl::StatusOr<Tensor> random_uniform_from(const RandomReserve& reserve,
                                           absl::Span<const int64_t> shape, double minval,
                                           std::optional<double> maxval, DType dtype);
// As random::normal, or random::truncated_normal when `truncated`.
absl::StatusOr<Tensor> random_normal_from(const RandomReserve& reserve,
                                          absl::Span<const int64_t> shape, double mean,
                                          double stddev, DType dtype, bool truncated);

}  // namespace mt::internal
