#include "kernels/random_seed.h"

#include <random>

#include "core/check.h"

namespace mt {
namespace {

constexpr int64_t kMaxInt32 = (int64_t{1} << 31) - 1;
constexpr int64_t kDefaultGraphSeed = 87654321;
constexpr uint64_t kBlocksPerOutput = 256;

// Returns `seed` modulo 2^31 - 1, in [0, 2^31 - 1) as Python's % gives it.
int64_t truncate_seed(int64_t seed) {
  const int64_t r = seed % kMaxInt32;
  return r < 0 ? r + kMaxInt32 : r;
}

// Returns `x` scrambled (the finaliser of SplitMix64), so that nearby stream ids give
// unrelated seeds.
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Returns a seed pair from std::random_device, for ops without any seed.
SeedPair draw_random_pair() {
  std::random_device device;
  const auto draw = [&] { return (int64_t{device()} << 31) ^ device(); };
  return SeedPair{draw(), draw()};
}

}  // namespace

namespace internal {

// init_by_array of the reference MT19937 with the 32-bit words of |seed|, low word first, as
// CPython's random.seed does for an int.
PythonRandom::PythonRandom(int64_t seed) {
  uint64_t magnitude = seed < 0 ? 0 - static_cast<uint64_t>(seed) : static_cast<uint64_t>(seed);
  uint32_t key[2] = {static_cast<uint32_t>(magnitude), static_cast<uint32_t>(magnitude >> 32)};
  const int len = key[1] != 0 ? 2 : 1;
  uint32_t* mt = state_;
  mt[0] = 19650218u;
  for (int i = 1; i < kN; ++i) mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i;
  int i = 1;
  for (int k = kN, j = 0; k > 0; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + j;
    if (++i >= kN) mt[0] = mt[kN - 1], i = 1;
    if (++j >= len) j = 0;
  }
  for (int k = kN - 1; k > 0; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - i;
    if (++i >= kN) mt[0] = mt[kN - 1], i = 1;
  }
  mt[0] = 0x80000000u;
}

uint32_t PythonRandom::next() {
  if (index_ == kN) {  // regenerate the whole state
    for (int i = 0; i < kN; ++i) {
      const uint32_t y = (state_[i] & 0x80000000u) | (state_[(i + 1) % kN] & 0x7fffffffu);
      state_[i] = state_[(i + 397) % kN] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index_ = 0;
  }
  uint32_t y = state_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  return y ^ (y >> 18);
}

int64_t PythonRandom::randint31() {
  uint32_t r = next();
  while (r >= (uint32_t{1} << 31)) r = next();  // Python draws 32 bits until one is < 2^31
  return r;
}

}  // namespace internal

RandomSeedState::RandomSeedState() : random_pair_(draw_random_pair()) {}

void RandomSeedState::set_global_seed(std::optional<int64_t> seed) {
  internal::MutexLock lock(&mu_);
  global_seed_ = seed;
  if (seed) op_seed_sequence_ = internal::PythonRandom(*seed);
  positions_.clear();
  random_pair_ = draw_random_pair();  // TensorFlow's new kernels draw new random seeds
}

std::optional<int64_t> RandomSeedState::global_seed() const {
  internal::MutexLock lock(&mu_);
  return global_seed_;
}

SeedPair RandomSeedState::op_seeds(std::optional<int64_t> op_seed) {
  internal::MutexLock lock(&mu_);
  SeedPair seeds;
  if (global_seed_) {
    const int64_t op = op_seed ? *op_seed : op_seed_sequence_.randint31();
    seeds = {truncate_seed(*global_seed_), truncate_seed(op)};
  } else if (op_seed) {
    seeds = {kDefaultGraphSeed, truncate_seed(*op_seed)};
  } else {
    return SeedPair{0, 0};  // rule 4: reserve() substitutes random_pair_
  }
  if (seeds == SeedPair{0, 0}) seeds.seed2 = kMaxInt32;
  return seeds;
}

PhiloxSeed RandomSeedState::reserve(uint64_t stream, SeedPair seeds, int64_t n) {
  MT_CHECK(n >= 0);
  uint64_t position;
  {
    internal::MutexLock lock(&mu_);
    if (seeds == SeedPair{0, 0}) {  // each stream its own random pair, as each kernel has
      seeds = {random_pair_.seed, random_pair_.seed2 ^ static_cast<int64_t>(mix(stream))};
    }
    uint64_t& next = positions_[{stream, seeds.seed, seeds.seed2}];
    position = next;
    next += static_cast<uint64_t>(n) * kBlocksPerOutput;
  }
  return stateful_philox_seed(seeds.seed, seeds.seed2, position);
}

}  // namespace mt
