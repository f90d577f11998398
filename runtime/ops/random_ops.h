#pragma once
// Random tensors, as tf.random: the stateful ops, whose numbers follow the global seed
// (set_seed) and each call's own seed, and the stateless ones, whose numbers are a function
// of the seed pair alone. Each runs one op on the device the current scope asks for; the
// same calls give the same numbers on every device (the CPU and GPUs compute the same bits).
//
//   mt::random::set_seed(42);
//   mt::Tensor u = mt::random::uniform({2, 3});                        // float32 in [0, 1)
//   mt::Tensor i = mt::random::uniform({4}, 0, 10, mt::DType::kInt32);  // int32 in [0, 10)
//   mt::Tensor n = mt::random::normal({8}, 0.0, 2.0, mt::DType::kFloat32, /*seed=*/7);
//   mt::Tensor s = mt::random::stateless_uniform({3}, {1, 2});          // TensorFlow's bits
//
// Seeds follow tf.random.set_seed and the `seed=` argument (Note [Seeds of the stateful
// random ops] in kernels/random_seed.h); the values follow Note [Random ops] in
// kernels/random_shape.cc. Uniform values are TensorFlow's bit for bit; normal values may
// differ from TensorFlow's in the last bits (docs/guide.md). Errors throw mt::Error
// (InvalidArgument): a dtype the op does not take, a negative or overflowing shape, an
// integer dtype without maxval or with minval >= maxval or bounds outside the dtype.

#include <array>
#include <cstdint>
#include <optional>

#include "absl/types/span.h"
#include "core/dtype.h"
#include "runtime/eager/tensor.h"

namespace mt::random {

// Sets the global seed (tf.random.set_seed), or with nullopt clears it; restarts the
// sequence of every stateful op. Thread-safe.
void set_seed(std::optional<int64_t> seed);

// Returns values uniform in [minval, maxval) (RandomUniform, or RandomUniformInt for int32
// and int64, which need maxval and integral bounds). maxval defaults to 1 for floats.
Tensor uniform(absl::Span<const int64_t> shape, double minval = 0,
               std::optional<double> maxval = std::nullopt, DType dtype = DType::kFloat32,
               std::optional<int64_t> seed = std::nullopt);
// Returns int32 or int64 values uniform in [minval, maxval) (RandomUniformInt).
Tensor uniform_int(absl::Span<const int64_t> shape, int64_t minval, int64_t maxval,
                   DType dtype = DType::kInt32, std::optional<int64_t> seed = std::nullopt);
// Returns normal values (RandomStandardNormal, then * stddev + mean).
Tensor normal(absl::Span<const int64_t> shape, double mean = 0, double stddev = 1,
              DType dtype = DType::kFloat32, std::optional<int64_t> seed = std::nullopt);
// Returns normal values redrawn until within two standard deviations (TruncatedNormal).
Tensor truncated_normal(absl::Span<const int64_t> shape, double mean = 0, double stddev = 1,
                        DType dtype = DType::kFloat32, std::optional<int64_t> seed = std::nullopt);

// The stateless forms (StatelessRandom*V2 with the Philox algorithm): `seed` is
// tf.random.stateless_*'s seed=[a, b].
using StatelessSeed = std::array<int64_t, 2>;
// Returns stateless uniform values; int32 and int64 need maxval and integral bounds.
Tensor stateless_uniform(absl::Span<const int64_t> shape, StatelessSeed seed, double minval = 0,
                         std::optional<double> maxval = std::nullopt,
                         DType dtype = DType::kFloat32);
// Returns stateless int32 or int64 values uniform in [minval, maxval).
Tensor stateless_uniform_int(absl::Span<const int64_t> shape, StatelessSeed seed, int64_t minval,
                             int64_t maxval, DType dtype = DType::kInt32);
Tensor stateless_normal(absl::Span<const int64_t> shape, StatelessSeed seed, double mean = 0,
                        double stddev = 1, DType dtype = DType::kFloat32);
Tensor stateless_truncated_normal(absl::Span<const int64_t> shape, StatelessSeed seed,
                                  double mean = 0, double stddev = 1,
                                  DType dtype = DType::kFloat32);

}  // namespace mt::random
