#pragma once
// Internal to kernels/: what the CPU and CUDA kernels of the random ops read from a row and
// its attrs (Note [Random ops] in kernels/random_shape.cc): the distribution an op draws and
// the multiply and add that turn its standard values into the op's output.
//
//   const RandomAffine a = random_affine<float>(OpId::kRandomUniform, attrs);
//   float v = rnd;
//   if (a.multiply) v = v * static_cast<float>(a.scale);  // rounded, never fused
//   if (a.add) v = v + static_cast<float>(a.shift);

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/op_attrs.h"
#include "kernels/op_id.h"
#include "kernels/random_distributions.h"

namespace mt::internal {

// Returns the distribution `op` (a random op) draws in its standard form.
constexpr RandomDistribution random_op_distribution(OpId op) {
  switch (op) {
    case OpId::kRandomStandardNormal:
    case OpId::kStatelessRandomNormalV2:
      return RandomDistribution::kNormal;
    case OpId::kTruncatedNormal:
    case OpId::kStatelessTruncatedNormalV2:
      return RandomDistribution::kTruncatedNormal;
    default:
      return RandomDistribution::kUniform;
  }
}

// Returns whether `op` is one of the stateless random ops (its stream comes from its seed).
constexpr bool random_op_stateless(OpId op) {
  return op == OpId::kStatelessRandomUniformV2 || op == OpId::kStatelessRandomUniformIntV2 ||
         op == OpId::kStatelessRandomNormalV2 || op == OpId::kStatelessTruncatedNormalV2;
}

// A float random op's output from its standard values: rnd * scale, then + shift, each
// rounded to the output dtype; a step is skipped where it cannot change a bit.
struct RandomAffine {
  double scale = 1;  // exactly a value of the output dtype
  double shift = 0;
  bool multiply = false;
  bool add = false;
};

// Returns the multiply and add of a float random op with output element type T (float,
// double, bfloat16 or float16) as TensorFlow's Python computes them in T: uniform
// (maxval - minval) and minval, normal stddev and mean. The stateful uniform skips the add
// when minval is 0 (TensorFlow's random.uniform with its default minval); elsewhere the add
// of 0 is kept when it turns a product of -0 into +0 (a negative scale).
template <typename T>
RandomAffine random_affine(OpId op, const OpAttrs& attrs) {
  using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const bool uniform = random_op_distribution(op) == RandomDistribution::kUniform;
  const T lo = static_cast<T>(uniform ? attrs.minval.f : attrs.mean);
  const T hi = static_cast<T>(attrs.maxval.f);
  const T scale = uniform ? static_cast<T>(static_cast<Compute>(hi) - static_cast<Compute>(lo))
                          : static_cast<T>(attrs.stddev);
  RandomAffine a;
  a.scale = static_cast<double>(static_cast<Compute>(scale));
  a.shift = static_cast<double>(static_cast<Compute>(lo));
  a.multiply = a.scale != 1;
  const bool skip_zero = op == OpId::kRandomUniform;
  a.add = a.shift != 0 || (!skip_zero && std::signbit(a.scale));
  return a;
}

}  // namespace mt::internal
