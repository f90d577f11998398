#pragma once
// mt::random::Generator: a random number generator whose whole state is one int64 variable
// of shape [3] (tf.random.Generator with the Philox algorithm): the 128-bit Philox counter
// (low word first) and the 64-bit key. A draw of n numbers starts at the counter and moves
// it on by n * 256 blocks, as TensorFlow's stateful random ops do, so a generator made from
// the same seed or state gives TensorFlow's uniform numbers bit for bit. Since the state is
// a variable, a checkpoint that tracks it restores the generator: the next draws after a
// restore are the draws the saved program would have made next.
//
//   mt::random::Generator g = mt::random::Generator::from_seed(1234);  // state [1234, 0, 0]
//   mt::Tensor u = g.uniform({3});              // TensorFlow's 0.3581475, 0.1132276, ...
//   mt::Tensor n = g.normal({2, 2}, 0.0, 1.0);
//   ckpt.track("rng/state", g.state());         // as mt.train.Checkpoint(rng=g) names it
//
// Copies of a Generator share one state. Draws are thread-safe (one lock per state); each
// runs on the device the current scope picks, the state staying where it was made. Errors
// throw mt::Error: InvalidArgument for a state that is not int64 [3], and the draws' errors
// of runtime/ops/random_ops.h.

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/types/span.h"
#include "core/dtype.h"
#include "runtime/eager/tensor.h"
#include "runtime/train/variable.h"

namespace mt::random {

class Generator {
 public:
  // Returns a generator of state [seed, 0, 0] (tf.random.Generator.from_seed).
  static Generator from_seed(uint64_t seed);
  // Returns a generator of state `state`, an int64 tensor of shape [3] (copied).
  static Generator from_state(const Tensor& state);
  // Returns a generator whose state comes from std::random_device.
  static Generator from_non_deterministic_state();
  // Makes a generator over `state`, an int64 variable of shape [3], shared with the caller
  // (the Python Generator keeps its state so).
  explicit Generator(Variable state);

  // Returns the state variable (shared: assigning it moves the generator).
  const Variable& state() const { return state_; }

  // Returns values uniform in [minval, maxval); int32 and int64 need maxval and integral
  // bounds (random::uniform's rules).
  Tensor uniform(absl::Span<const int64_t> shape, double minval = 0,
                 std::optional<double> maxval = std::nullopt, DType dtype = DType::kFloat32);
  Tensor normal(absl::Span<const int64_t> shape, double mean = 0, double stddev = 1,
                DType dtype = DType::kFloat32);
  Tensor truncated_normal(absl::Span<const int64_t> shape, double mean = 0, double stddev = 1,
                          DType dtype = DType::kFloat32);

 private:
  struct Lock;
  Variable state_;
  std::shared_ptr<Lock> lock_;
};

}  // namespace mt::random
