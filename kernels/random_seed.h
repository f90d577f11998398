#pragma once
// The seeds of the random ops: tf.random.set_seed's global seed, an op's own seed, and how
// far each stateful op's stream has gone, so that consecutive calls give new numbers.
//
//   RandomSeedState& state = ...;                   // one per runtime
//   state.set_global_seed(42);
//   SeedPair seeds = state.op_seeds(std::nullopt);  // (42, the next op seed drawn from 42)
//   PhiloxSeed start = state.reserve(stream, seeds, n);
//   cpu::random_fill(RandomDistribution::kUniform, DType::kFloat32, start, out, n);
//
// Note [Seeds of the stateful random ops]
// An op's seed pair follows TensorFlow's random_seed.get_seed in eager mode:
//   1. global seed g and op seed o: (g, o), both reduced modulo 2^31 - 1 (never negative);
//   2. global seed only: (g, o) with o the next of a sequence that set_global_seed restarts:
//      what Python's random.Random(g).randint(0, 2**31 - 1) gives, as TensorFlow draws it;
//   3. op seed only: (87654321, o), TensorFlow's default graph seed;
//   4. neither: (0, 0), which reserve() reads as a random pair the state draws when made and
//      at every set_global_seed, its second seed mixed with the stream id;
//   (0, 0) from rules 1-3 becomes (0, 2^31 - 1).
// A stream is the caller's `stream` id (one per op, dtype and device, as TensorFlow keeps
// one generator per cached kernel) plus the seed pair. Its numbers are stateful_philox_seed
// (seed, seed2, position): each call starts at the stream's position and moves it on by
// n * 256 blocks (TensorFlow's reservation, enough for the truncated normal). So
// tf.random.set_seed(1); tf.random.uniform([n], seed=7) twice gives the same two tensors
// as two calls with seeds (1, 7) here. set_global_seed restarts every stream, as
// TensorFlow's set_seed clears its kernel cache. Differences from TensorFlow: rule 4's seeds
// come from one random pair per state and set_global_seed, mixed with the stream id, where
// TensorFlow draws two random seeds per kernel instance (either way each stream has its own
// unpredictable numbers); the state keeps one position per stream ever used, never
// forgetting one (TensorFlow's kernel cache grows the same way).

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "kernels/philox.h"

namespace mt {

namespace internal {
// The Mersenne Twister MT19937 as Python's random.Random(seed) seeds it for an int seed.
class PythonRandom {
 public:
  explicit PythonRandom(int64_t seed = 0);
  // Returns the next 32 bits (Python's getrandbits(32)).
  uint32_t next();
  // Returns randint(0, 2**31 - 1).
  int64_t randint31();

 private:
  static constexpr int kN = 624;
  uint32_t state_[kN];
  int index_ = kN;
};
}  // namespace internal

// The two seeds of a random op (TensorFlow's `seed` and `seed2` attributes).
struct SeedPair {
  int64_t seed = 0;
  int64_t seed2 = 0;
  friend bool operator==(const SeedPair&, const SeedPair&) = default;
};

// Thread-safe: every method may be called from any thread.
class RandomSeedState {
 public:
  // Draws the pair rule 4 stands for from std::random_device (again at set_global_seed).
  RandomSeedState();
  RandomSeedState(const RandomSeedState&) = delete;
  RandomSeedState& operator=(const RandomSeedState&) = delete;

  // Sets (or with nullopt clears) the global seed, restarts the op-seed sequence and every
  // stream, and draws a new pair for rule 4 (tf.random.set_seed).
  void set_global_seed(std::optional<int64_t> seed);
  // Returns the global seed, if set.
  std::optional<int64_t> global_seed() const;

  // Returns the seed pair of an op given its own seed, if any (rules 1-4); draws the next
  // op seed under rule 2.
  SeedPair op_seeds(std::optional<int64_t> op_seed);

  // Returns where the next `n` outputs of stream (`stream`, `seeds`) start and moves the
  // stream past them. n >= 0.
  PhiloxSeed reserve(uint64_t stream, SeedPair seeds, int64_t n);

 private:
  mutable internal::Mutex mu_;
  SeedPair random_pair_ ABSL_GUARDED_BY(mu_);
  std::optional<int64_t> global_seed_ ABSL_GUARDED_BY(mu_);
  internal::PythonRandom op_seed_sequence_ ABSL_GUARDED_BY(mu_);
  std::map<std::tuple<uint64_t, int64_t, int64_t>, uint64_t> positions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mt
