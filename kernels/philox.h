#pragma once
// Philox4x32-10, the counter-based generator behind every random op, usable from host C++
// and from CUDA device code (no CUDA header is included; .cu files include it as is).
//
// Philox maps a 128-bit counter and a 64-bit key to 128 random bits (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC'11). A random tensor is a key plus a starting
// counter: output block i is philox4x32_10(start + i, key), so any element can be computed
// without the ones before it, on any thread of any device, with the same bits.
//
//   PhiloxSeed s = stateless_philox_seed(1, 2);        // tf.random.stateless_*(seed=[1, 2])
//   PhiloxBlock bits = philox4x32_10(counter_add(s.counter, 5), s.key);  // block 5
//   float u = uint32_to_float(bits.word[0]);          // in [0, 1)
//
// The seed derivations and the uniform conversions are TensorFlow's (Note [TensorFlow's
// random bits] in kernels/random_distributions.h says what is and is not bit-identical).

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define MT_HOST_DEVICE __host__ __device__
#else
#define MT_HOST_DEVICE
#endif

namespace mt {

// The 64-bit key, low word first.
struct PhiloxKey {
  uint32_t word[2];
};

// A 128-bit counter or the 128 bits one counter gives, low word first.
struct PhiloxBlock {
  uint32_t word[4];
};

// Where a stream of random blocks starts: its key and its first counter.
struct PhiloxSeed {
  PhiloxKey key;
  PhiloxBlock counter;
};

// Returns `counter` plus `n`, as a 128-bit integer (TensorFlow's PhiloxRandom::Skip).
MT_HOST_DEVICE inline PhiloxBlock counter_add(PhiloxBlock counter, uint64_t n) {
  const uint64_t low = (uint64_t{counter.word[1]} << 32 | counter.word[0]) + n;
  PhiloxBlock out = counter;
  out.word[0] = static_cast<uint32_t>(low);
  out.word[1] = static_cast<uint32_t>(low >> 32);
  if (low < n) {  // carry into the high 64 bits
    out.word[2] += 1;
    if (out.word[2] == 0) out.word[3] += 1;
  }
  return out;
}

// Returns the 128 bits Philox4x32 with 10 rounds gives for `counter` and `key`.
MT_HOST_DEVICE inline PhiloxBlock philox4x32_10(PhiloxBlock counter, PhiloxKey key) {
  constexpr uint32_t kMultiplierA = 0xD2511F53u;
  constexpr uint32_t kMultiplierB = 0xCD9E8D57u;
  constexpr uint32_t kWeylA = 0x9E3779B9u;  // the key schedule's increments
  constexpr uint32_t kWeylB = 0xBB67AE85u;
  uint32_t* c = counter.word;
  for (int round = 0; round < 10; ++round) {
    const uint64_t product_a = uint64_t{kMultiplierA} * c[0];
    const uint64_t product_b = uint64_t{kMultiplierB} * c[2];
    const uint32_t next[4] = {static_cast<uint32_t>(product_b >> 32) ^ c[1] ^ key.word[0],
                              static_cast<uint32_t>(product_b),
                              static_cast<uint32_t>(product_a >> 32) ^ c[3] ^ key.word[1],
                              static_cast<uint32_t>(product_a)};
    c[0] = next[0], c[1] = next[1], c[2] = next[2], c[3] = next[3];
    key.word[0] += kWeylA;
    key.word[1] += kWeylB;
  }
  return counter;
}

// Returns the key and counter of tf.random.stateless_*(seed=[seed0, seed1]) with the Philox
// algorithm: one Philox block of the seeds, under a fixed key, scrambles them into a key
// and the upper half of the counter (TensorFlow's StatelessRandomGetKeyCounter).
inline PhiloxSeed stateless_philox_seed(int64_t seed0, int64_t seed1) {
  const auto s0 = static_cast<uint64_t>(seed0), s1 = static_cast<uint64_t>(seed1);
  const PhiloxBlock seeds = {{static_cast<uint32_t>(s0), static_cast<uint32_t>(s0 >> 32),
                              static_cast<uint32_t>(s1), static_cast<uint32_t>(s1 >> 32)}};
  const PhiloxBlock mix = philox4x32_10(seeds, PhiloxKey{{0x3ec8f720u, 0x02461e29u}});
  return PhiloxSeed{{{mix.word[0], mix.word[1]}}, {{0, 0, mix.word[2], mix.word[3]}}};
}

// Returns the stream of a stateful op with seeds (seed, seed2), `offset` blocks in: the key
// is `seed`, the upper half of the counter `seed2` (TensorFlow's PhiloxRandom(seed, seed2)).
inline PhiloxSeed stateful_philox_seed(int64_t seed, int64_t seed2, uint64_t offset) {
  const auto s = static_cast<uint64_t>(seed), s2 = static_cast<uint64_t>(seed2);
  const PhiloxSeed start = {{{static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32)}},
                            {{0, 0, static_cast<uint32_t>(s2), static_cast<uint32_t>(s2 >> 32)}}};
  return PhiloxSeed{start.key, counter_add(start.counter, offset)};
}

// Returns a float in [0, 1) from the low 23 bits of `x`: they become the fraction of a
// float in [1, 2), from which 1 is subtracted (exactly).
MT_HOST_DEVICE inline float uint32_to_float(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f - 1.0f;
}

// Returns a double in [0, 1) from 52 bits: the low 20 of `high` and all of `low`.
MT_HOST_DEVICE inline double uint32x2_to_double(uint32_t high, uint32_t low) {
  const uint64_t bits = (uint64_t{1023} << 52) | (uint64_t{high & 0xfffffu} << 32) | low;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d - 1.0;
}

// Returns a value in [0, 1) with the 10-bit fraction of a float16, from the low 10 bits of
// `x`, as a float (exactly representable in float16).
MT_HOST_DEVICE inline float uint32_to_float16_value(uint32_t x) {
  return static_cast<float>(x & 0x3ffu) * (1.0f / 1024.0f);
}

// Returns a value in [0, 1) with the 7-bit fraction of a bfloat16, from the low 7 bits of
// `x`, as a float (exactly representable in bfloat16).
MT_HOST_DEVICE inline float uint32_to_bfloat16_value(uint32_t x) {
  return static_cast<float>(x & 0x7fu) * (1.0f / 128.0f);
}

}  // namespace mt
