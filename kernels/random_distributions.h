#pragma once
// The random distributions as groups of outputs computed from Philox blocks: the one piece
// of random-number code the CPU fill (kernels/cpu/random_fill.h) and the CUDA fill
// (kernels/cuda/random_kernels.h) share, so both give the same bits. Host and device code.
//
//   float group[4];
//   random_group(RandomDistribution::kNormal, seed, /*group=*/7, group);  // elements 28..31
//
// An output tensor of n elements is ceil(n / G) groups of G outputs (G = 4 for float32,
// bfloat16, float16 and int32, 2 for float64 and int64), element i being output i % G of group i /
// G. For bfloat16 and float16 a group is computed in float and rounded to nearest even, except the
// uniform values, which are exact (uniform_half_group).
//
// Note [TensorFlow's random bits]
// Groups map to Philox blocks as in TensorFlow's FillPhiloxRandom: the uniform and normal
// group g is block g; a truncated-normal group g starts at block g * 256 * G / 4 (the 256
// samples per output TensorFlow reserves) and takes 32-bit words from there (two per float
// attempt, four per double attempt) until G values fall within two standard deviations.
// Uniform integers are minval + bits % (maxval - minval), one word per int32 and two per
// int64, as TensorFlow's (its modulo's slight bias included).
// Uniform values of every dtype are bit-identical to TensorFlow's on every device. Normal
// and truncated-normal values use TensorFlow's Box-Muller formulas, but log, sin and cos
// are our own (kernels/random_math.h: the same bits on every device, correctly rounded in
// all but rare cases) where TensorFlow calls the C library's on the CPU and CUDA's on a GPU,
// which differ from each other. Against TensorFlow 2.21 on the CPU (glibc 2.36), over 2^20
// values of seed [12345, -7]: float32 normals differ in 1.5% of values, by at most 3 units
// in the last place, where glibc's logf or sinf/cosf is not correctly rounded; float64
// normals in 0.18%, by at most 2 units; bfloat16 and float16 normals in none, truncated
// normals in 1 float16 value (a float one unit off that rounds the other way). As in
// TensorFlow, a bfloat16 or float16 truncated normal may round to -2 or 2.

#include <cstdint>

#include "kernels/philox.h"
#include "kernels/random_math.h"

namespace mt {

enum class RandomDistribution {
  kUniform,          // [0, 1)
  kNormal,           // mean 0, standard deviation 1
  kTruncatedNormal,  // the normal, resampled until within (-2, 2)
};

namespace internal {

// The 32-bit words of a stream in order, one Philox block at a time.
class PhiloxWords {
 public:
  MT_HOST_DEVICE PhiloxWords(const PhiloxSeed& seed, uint64_t first_block)
      : key_(seed.key), counter_(counter_add(seed.counter, first_block)), used_(4) {}
  // Returns the next word.
  MT_HOST_DEVICE uint32_t next() {
    if (used_ == 4) {
      block_ = philox4x32_10(counter_, key_);
      counter_ = counter_add(counter_, 1);
      used_ = 0;
    }
    return block_.word[used_++];
  }

 private:
  PhiloxKey key_;
  PhiloxBlock counter_;
  PhiloxBlock block_;
  int used_;
};

// Sets *f0 and *f1 to two normal floats from two words (TensorFlow's Box-Muller for float).
MT_HOST_DEVICE inline void box_muller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  constexpr double kTwoPi = 6.283185307179586;
  float u1 = uint32_to_float(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;  // keeps log away from 0
  const auto angle = static_cast<float>(kTwoPi * static_cast<double>(uint32_to_float(x1)));
  const float radius = std::sqrt(-2.0f * static_cast<float>(portable_log(u1)));
  double s, c;
  portable_sincos(angle, &s, &c);
  *f0 = static_cast<float>(s) * radius;
  *f1 = static_cast<float>(c) * radius;
}

// Sets *d0 and *d1 to two normal doubles from four words (the Box-Muller for double).
MT_HOST_DEVICE inline void box_muller(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3,
                                      double* d0, double* d1) {
  constexpr double kTwoPi = 6.283185307179586;
  double u1 = uint32x2_to_double(x0, x1);
  if (u1 < 1.0e-20) u1 = 1.0e-20;
  const double angle = mul_rn(kTwoPi, uint32x2_to_double(x2, x3));
  const double radius = std::sqrt(-2.0 * portable_log(u1));
  portable_sincos(angle, d0, d1);
  *d0 *= radius;
  *d1 *= radius;
}

// Computes group `g` of 4 floats of `dist` from the stream `seed`.
MT_HOST_DEVICE inline void random_group(RandomDistribution dist, const PhiloxSeed& seed, uint64_t g,
                                        float out[4]) {
  if (dist == RandomDistribution::kTruncatedNormal) {
    PhiloxWords words(seed, g * 256);
    for (int filled = 0; filled < 4;) {
      const uint32_t x0 = words.next(), x1 = words.next();
      float f[2];
      box_muller(x0, x1, &f[0], &f[1]);
      for (int i = 0; i < 2 && filled < 4; ++i) {
        if (std::fabs(f[i]) < 2.0f) out[filled++] = f[i];
      }
    }
    return;
  }
  const PhiloxBlock b = philox4x32_10(counter_add(seed.counter, g), seed.key);
  if (dist == RandomDistribution::kUniform) {
    for (int i = 0; i < 4; ++i) out[i] = uint32_to_float(b.word[i]);
  } else {
    box_muller(b.word[0], b.word[1], &out[0], &out[1]);
    box_muller(b.word[2], b.word[3], &out[2], &out[3]);
  }
}

// Computes group `g` of 2 doubles of `dist` from the stream `seed`.
MT_HOST_DEVICE inline void random_group(RandomDistribution dist, const PhiloxSeed& seed, uint64_t g,
                                        double out[2]) {
  if (dist == RandomDistribution::kTruncatedNormal) {
    PhiloxWords words(seed, g * 128);
    for (int filled = 0; filled < 2;) {
      const uint32_t x0 = words.next(), x1 = words.next();
      const uint32_t x2 = words.next(), x3 = words.next();
      double d[2];
      box_muller(x0, x1, x2, x3, &d[0], &d[1]);
      for (int i = 0; i < 2 && filled < 2; ++i) {
        if (std::fabs(d[i]) < 2.0) out[filled++] = d[i];
      }
    }
    return;
  }
  const PhiloxBlock b = philox4x32_10(counter_add(seed.counter, g), seed.key);
  if (dist == RandomDistribution::kUniform) {
    out[0] = uint32x2_to_double(b.word[0], b.word[1]);
    out[1] = uint32x2_to_double(b.word[2], b.word[3]);
  } else {
    box_muller(b.word[0], b.word[1], b.word[2], b.word[3], &out[0], &out[1]);
  }
}

// Computes the uniform group `g` of 4 bfloat16 (`bfloat16` true) or float16 values, as
// floats that convert to the 2-byte type exactly.
MT_HOST_DEVICE inline void uniform_half_group(bool bfloat16, const PhiloxSeed& seed, uint64_t g,
                                              float out[4]) {
  const PhiloxBlock b = philox4x32_10(counter_add(seed.counter, g), seed.key);
  for (int i = 0; i < 4; ++i) {
    out[i] = bfloat16 ? uint32_to_bfloat16_value(b.word[i]) : uint32_to_float16_value(b.word[i]);
  }
}

// Computes the uniform integer group `g` of 4 int32: minval + bits % range, where range is
// maxval - minval as unsigned, or each word itself when range is 0 (the full range).
MT_HOST_DEVICE inline void uniform_int_group(const PhiloxSeed& seed, uint64_t g, int32_t minval,
                                             uint32_t range, int32_t out[4]) {
  const PhiloxBlock b = philox4x32_10(counter_add(seed.counter, g), seed.key);
  for (int i = 0; i < 4; ++i) {
    const uint32_t offset = range == 0 ? b.word[i] : b.word[i] % range;
    out[i] = static_cast<int32_t>(static_cast<uint32_t>(minval) + offset);  // wraps
  }
}

// Computes the uniform integer group `g` of 2 int64, each from two words, low word first.
MT_HOST_DEVICE inline void uniform_int_group(const PhiloxSeed& seed, uint64_t g, int64_t minval,
                                             uint64_t range, int64_t out[2]) {
  const PhiloxBlock b = philox4x32_10(counter_add(seed.counter, g), seed.key);
  for (int i = 0; i < 2; ++i) {
    const uint64_t bits = b.word[2 * i] | uint64_t{b.word[2 * i + 1]} << 32;
    const uint64_t offset = range == 0 ? bits : bits % range;
    out[i] = static_cast<int64_t>(static_cast<uint64_t>(minval) + offset);  // wraps
  }
}

}  // namespace internal
}  // namespace mt
