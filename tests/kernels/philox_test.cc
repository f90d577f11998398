// Philox4x32-10 against Random123's known answers, the random distributions and the CPU
// fill against TensorFlow's bits (random_golden_values.h), the fill's independence of the
// thread count, and the distributions' moments.
#include "kernels/philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/half.h"
#include "gtest/gtest.h"
#include "kernels/cpu/random_fill.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/random_distributions.h"
#include "kernels/random_math.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/random_golden_values.h"

namespace mt {
namespace {

constexpr RandomDistribution kDistributions[] = {RandomDistribution::kUniform,
                                                 RandomDistribution::kNormal,
                                                 RandomDistribution::kTruncatedNormal};
constexpr DType kRandomDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                                   DType::kFloat16};

const char* name(RandomDistribution dist) {
  switch (dist) {
    case RandomDistribution::kUniform:
      return "uniform";
    case RandomDistribution::kNormal:
      return "normal";
    default:
      return "truncated_normal";
  }
}

bool operator==(const PhiloxBlock& a, const PhiloxBlock& b) {
  return std::memcmp(a.word, b.word, sizeof a.word) == 0;
}

// Returns n values of `dist` as `dtype` from the CPU fill, each as its bits.
std::vector<uint64_t> fill_bits(RandomDistribution dist, DType dtype, const PhiloxSeed& seed,
                                int64_t n) {
  const size_t size = dtype_size(dtype);
  std::vector<unsigned char> bytes(n * size);
  cpu::random_fill(dist, dtype, seed, bytes.data(), n);
  std::vector<uint64_t> bits(n, 0);
  for (int64_t i = 0; i < n; ++i) std::memcpy(&bits[i], &bytes[i * size], size);  // little-endian
  return bits;
}

// Returns n values of `dist` as doubles (float32 for the standard dtype).
std::vector<double> fill_values(RandomDistribution dist, DType dtype, int64_t n) {
  std::vector<double> values(n);
  const std::vector<uint64_t> bits = fill_bits(dist, dtype, stateless_philox_seed(7, 8), n);
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == DType::kFloat64) {
      std::memcpy(&values[i], &bits[i], 8);
    } else if (dtype == DType::kFloat32) {
      float f;
      std::memcpy(&f, &bits[i], 4);
      values[i] = f;
    } else if (dtype == DType::kBFloat16) {
      values[i] = static_cast<float>(bfloat16::from_bits(static_cast<uint16_t>(bits[i])));
    } else {
      values[i] = static_cast<float>(float16::from_bits(static_cast<uint16_t>(bits[i])));
    }
  }
  return values;
}

// Returns how many units in the last place apart two finite values of the same sign are.
int64_t ulps_apart(uint64_t a, uint64_t b) {
  return a > b ? static_cast<int64_t>(a - b) : static_cast<int64_t>(b - a);
}

TEST(PhiloxTest, MatchesRandom123KnownAnswers) {
  // Philox4x32-10 test vectors published with Random123 (kat_vectors).
  EXPECT_TRUE(philox4x32_10({{0, 0, 0, 0}}, {{0, 0}}) ==
              (PhiloxBlock{{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}));
  EXPECT_TRUE(philox4x32_10({{~0u, ~0u, ~0u, ~0u}}, {{~0u, ~0u}}) ==
              (PhiloxBlock{{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}));
  EXPECT_TRUE(philox4x32_10({{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
                            {{0xa4093822, 0x299f31d0}}) ==
              (PhiloxBlock{{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}));
}

TEST(PhiloxTest, CounterAddCarriesAcrossAll128Bits) {
  EXPECT_TRUE(counter_add({{~0u, 0, 5, 6}}, 1) == (PhiloxBlock{{0, 1, 5, 6}}));
  EXPECT_TRUE(counter_add({{~0u, ~0u, 5, 6}}, 2) == (PhiloxBlock{{1, 0, 6, 6}}));
  EXPECT_TRUE(counter_add({{~0u, ~0u, ~0u, 6}}, 1) == (PhiloxBlock{{0, 0, 0, 7}}));
  EXPECT_TRUE(counter_add({{3, 4, 5, 6}}, uint64_t{1} << 32) == (PhiloxBlock{{3, 5, 5, 6}}));
}

TEST(PhiloxTest, StatelessSeedGivesTensorFlowsKeyAndCounter) {
  // tf.raw_ops.StatelessRandomGetKeyCounter(seed=[1, 2]): key 0x908502c96d2f7fba,
  // counter [0, 0xf7734320619cb60b].
  const PhiloxSeed s = stateless_philox_seed(1, 2);
  EXPECT_EQ(s.key.word[0], 0x6d2f7fbau);
  EXPECT_EQ(s.key.word[1], 0x908502c9u);
  EXPECT_TRUE(s.counter == (PhiloxBlock{{0, 0, 0x619cb60b, 0xf7734320}}));
}

TEST(PhiloxTest, StatefulSeedPutsSeedInTheKeyAndSeed2InTheCounter) {
  const PhiloxSeed s = stateful_philox_seed(int64_t{0x100000002}, int64_t{0x300000004}, 5);
  EXPECT_EQ(s.key.word[0], 2u);
  EXPECT_EQ(s.key.word[1], 1u);
  EXPECT_TRUE(s.counter == (PhiloxBlock{{5, 0, 4, 3}}));
}

TEST(RandomFillTest, MatchesTensorFlowBits) {
  // Uniform values and every bfloat16/float16 value here are TensorFlow's exactly; float32
  // and float64 normals may differ in the last bits where glibc's logf/sinf/cosf round
  // differently from ours (Note [TensorFlow's random bits]), which is rare.
  int inexact = 0, total = 0;
  for (const testutil::RandomGolden& golden : testutil::tensorflow_random_goldens()) {
    const std::vector<uint64_t> got =
        fill_bits(golden.dist, golden.dtype, stateless_philox_seed(golden.seed0, golden.seed1),
                  static_cast<int64_t>(golden.bits.size()));
    const bool exact =
        golden.dist == RandomDistribution::kUniform || dtype_kind(golden.dtype) == DTypeKind::kHalf;
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string where =
          absl::StrCat(name(golden.dist), " ", dtype_name(golden.dtype), " seed ", golden.seed0,
                       ",", golden.seed1, " [", i, "]");
      if (exact) {
        EXPECT_EQ(got[i], golden.bits[i]) << where;
      } else {
        EXPECT_LE(ulps_apart(got[i], golden.bits[i]), 3) << where;
        inexact += got[i] != golden.bits[i];
        ++total;
      }
    }
  }
  EXPECT_LE(inexact, total / 20) << inexact << " of " << total << " normals differ";
}

TEST(RandomFillTest, UniformIntegersMatchTensorFlow) {
  // tf.random.stateless_uniform([n], seed=[1, 2], minval, maxval, dtype), maxval and minval
  // None for the full range.
  const PhiloxSeed seed = stateless_philox_seed(1, 2);
  std::vector<int32_t> i32(7);
  cpu::random_fill_uniform_int(DType::kInt32, seed, -5, 22, i32.data(), 7);
  EXPECT_EQ(i32, (std::vector<int32_t>{-1, 0, 7, 12, 2, -2, -2}));
  cpu::random_fill_uniform_int(DType::kInt32, seed, 0, 0, i32.data(), 7);
  EXPECT_EQ(i32, (std::vector<int32_t>{1105988140, 1738052849, -335576002, 370444179, 10670227,
                                       -246211131, 1066250331}));
  std::vector<int64_t> i64(5);
  const int64_t lo = -(int64_t{1} << 40);
  cpu::random_fill_uniform_int(DType::kInt64, seed, lo, (uint64_t{1} << 41) + 3, i64.data(), 5);
  EXPECT_EQ(i64, (std::vector<int64_t>{-63328705202, 635317413237, 846095504361, 267350778842,
                                       753224182887}));
  cpu::random_fill_uniform_int(DType::kInt64, seed, 0, 0, i64.data(), 5);
  EXPECT_EQ(i64,
            (std::vector<int64_t>{7464880146280614444, 1591045637757961278, -1057468755545501549,
                                  2524363516007002203, 6884554327646026923}));
}

TEST(RandomFillTest, UniformIntegersAreTheSameAtAnyThreadCount) {
  constexpr int64_t kN = 300007;
  const PhiloxSeed seed = stateless_philox_seed(3, 4);
  std::vector<int32_t> i32_one(kN), i32(kN);
  std::vector<int64_t> i64_one(kN), i64(kN);
  cpu::set_intra_op_threads(1);
  cpu::random_fill_uniform_int(DType::kInt32, seed, -100, 1000, i32_one.data(), kN);
  cpu::random_fill_uniform_int(DType::kInt64, seed, 7, uint64_t{1} << 50, i64_one.data(), kN);
  cpu::set_intra_op_threads(7);
  cpu::random_fill_uniform_int(DType::kInt32, seed, -100, 1000, i32.data(), kN);
  cpu::random_fill_uniform_int(DType::kInt64, seed, 7, uint64_t{1} << 50, i64.data(), kN);
  cpu::set_intra_op_threads(testutil::test_intra_op_threads());
  EXPECT_EQ(i32, i32_one);
  EXPECT_EQ(i64, i64_one);
  EXPECT_EQ(*std::min_element(i32.begin(), i32.end()), -100);
  EXPECT_EQ(*std::max_element(i32.begin(), i32.end()), 899);
}

// FNV-1a (64-bit) of `size` bytes.
uint64_t fnv1a(const unsigned char* bytes, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

TEST(RandomFillTest, UniformMatchesTensorFlowOver100003Elements) {
  constexpr int64_t kN = 100003;
  for (const testutil::UniformHash& expected : testutil::kTensorFlowUniformHashes) {
    std::vector<unsigned char> bytes(kN * dtype_size(expected.dtype));
    cpu::random_fill(RandomDistribution::kUniform, expected.dtype, stateless_philox_seed(12345, -7),
                     bytes.data(), kN);
    EXPECT_EQ(fnv1a(bytes.data(), bytes.size()), expected.fnv1a) << dtype_name(expected.dtype);
  }
}

TEST(RandomFillTest, GivesPinnedNormalBitsAtEveryIsaLevel) {
  // FNV-1a of 100003 values of seed [12345, -7], from this implementation (TensorFlow's
  // differ in a few values). ctest runs this at every ISA level (MT_CPU_ISA), where the fill
  // computes fused multiply-adds in hardware or in the C library, and the GPU test compares
  // the CUDA fill with this one: all must give these bits.
  constexpr int64_t kN = 100003;
  const struct {
    RandomDistribution dist;
    DType dtype;
    uint64_t fnv1a;
  } cases[] = {
      {RandomDistribution::kNormal, DType::kFloat32, 0x4b79ea79c842f595ull},
      {RandomDistribution::kNormal, DType::kFloat64, 0xe2e66643c0b70ce0ull},
      {RandomDistribution::kNormal, DType::kBFloat16, 0xd8ac807bf6d61bb6ull},
      {RandomDistribution::kNormal, DType::kFloat16, 0xecd941e8063c4212ull},
      {RandomDistribution::kTruncatedNormal, DType::kFloat32, 0x829a8568a2137a77ull},
      {RandomDistribution::kTruncatedNormal, DType::kFloat64, 0xf7f15e49abd29756ull},
      {RandomDistribution::kTruncatedNormal, DType::kBFloat16, 0x18cf151837c282eaull},
      {RandomDistribution::kTruncatedNormal, DType::kFloat16, 0x4245f54145402096ull},
  };
  for (const auto& c : cases) {
    std::vector<unsigned char> bytes(kN * dtype_size(c.dtype));
    cpu::random_fill(c.dist, c.dtype, stateless_philox_seed(12345, -7), bytes.data(), kN);
    EXPECT_EQ(fnv1a(bytes.data(), bytes.size()), c.fnv1a)
        << name(c.dist) << " " << dtype_name(c.dtype) << std::hex << " 0x"
        << fnv1a(bytes.data(), bytes.size());
  }
}

TEST(RandomFillTest, GivesTheSameBitsAtAnyThreadCount) {
  constexpr int64_t kN = 300007;  // many groups per thread, and a partial last group
  const PhiloxSeed seed = stateless_philox_seed(3, 4);
  for (RandomDistribution dist : kDistributions) {
    for (DType dtype : kRandomDTypes) {
      cpu::set_intra_op_threads(1);
      const std::vector<uint64_t> one = fill_bits(dist, dtype, seed, kN);
      for (int threads : {2, 7}) {
        cpu::set_intra_op_threads(threads);
        EXPECT_EQ(fill_bits(dist, dtype, seed, kN), one)
            << name(dist) << " " << dtype_name(dtype) << " at " << threads << " threads";
      }
    }
  }
  cpu::set_intra_op_threads(testutil::test_intra_op_threads());
}

TEST(RandomFillTest, ShorterFillIsAPrefixOfALongerOne) {
  const PhiloxSeed seed = stateless_philox_seed(5, 6);
  for (RandomDistribution dist : kDistributions) {
    for (DType dtype : kRandomDTypes) {
      const std::vector<uint64_t> longer = fill_bits(dist, dtype, seed, 1001);
      const std::vector<uint64_t> shorter = fill_bits(dist, dtype, seed, 7);
      EXPECT_EQ(shorter, std::vector<uint64_t>(longer.begin(), longer.begin() + 7))
          << name(dist) << " " << dtype_name(dtype);
    }
  }
}

TEST(RandomFillTest, FillsNothingForZeroElements) {
  cpu::random_fill(RandomDistribution::kNormal, DType::kFloat32, stateless_philox_seed(1, 2),
                   nullptr, 0);
}

TEST(RandomFillTest, AbortsOnADtypeItDoesNotFill) {
  // The ops check dtypes first (random_fill_supports), so another one here is a bug.
  EXPECT_FALSE(cpu::random_fill_supports(DType::kInt32));
  int32_t out[4];
  EXPECT_DEATH(cpu::random_fill(RandomDistribution::kUniform, DType::kInt32,
                                stateless_philox_seed(1, 2), out, 4),
               "MT_CHECK failed: random_fill_supports\\(dtype\\)");
}

struct Moments {
  double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};

Moments moments(const std::vector<double>& values) {
  Moments m;
  for (double v : values) {
    m.mean += v;
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
  }
  m.mean /= values.size();
  for (double v : values) m.variance += (v - m.mean) * (v - m.mean);
  m.variance /= values.size();
  return m;
}

TEST(RandomDistributionTest, HaveTheirMeanVarianceAndRange) {
  // 2^20 samples: the sample mean's standard error is about 0.001 for the normal, so the
  // bounds below are over five standard errors wide. The truncated normal's variance at
  // +-2 standard deviations is 1 - 4 phi(2) / (Phi(2) - Phi(-2)) = 0.773741. As in
  // TensorFlow, a 2-byte truncated normal may round to +-2.
  constexpr int64_t kN = int64_t{1} << 20;
  for (DType dtype : kRandomDTypes) {
    const Moments u = moments(fill_values(RandomDistribution::kUniform, dtype, kN));
    EXPECT_NEAR(u.mean, 0.5, 0.005) << dtype_name(dtype);
    EXPECT_NEAR(u.variance, 1.0 / 12, 0.005) << dtype_name(dtype);
    EXPECT_GE(u.min, 0.0);
    EXPECT_LT(u.max, 1.0);
    const Moments n = moments(fill_values(RandomDistribution::kNormal, dtype, kN));
    EXPECT_NEAR(n.mean, 0.0, 0.006) << dtype_name(dtype);
    EXPECT_NEAR(n.variance, 1.0, 0.01) << dtype_name(dtype);
    EXPECT_GT(n.max, 4.0) << dtype_name(dtype);
    const Moments t = moments(fill_values(RandomDistribution::kTruncatedNormal, dtype, kN));
    EXPECT_NEAR(t.mean, 0.0, 0.006) << dtype_name(dtype);
    EXPECT_NEAR(t.variance, 0.773741, 0.01) << dtype_name(dtype);
    if (dtype_kind(dtype) == DTypeKind::kHalf) {  // within (-2, 2) in float, then rounded
      EXPECT_GE(t.min, -2.0) << dtype_name(dtype);
      EXPECT_LE(t.max, 2.0) << dtype_name(dtype);
    } else {
      EXPECT_GT(t.min, -2.0) << dtype_name(dtype);
      EXPECT_LT(t.max, 2.0) << dtype_name(dtype);
    }
  }
}

// Returns |got - want| in units in the last place of `got`.
double error_ulps(double got, long double want) {
  const double ulp = std::nextafter(std::fabs(got), INFINITY) - std::fabs(got);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

TEST(RandomMathTest, LogSinAndCosAreCorrectlyRoundedNearlyAlways) {
  double worst_log = 0, worst_sin = 0, worst_cos = 0;
  internal::PhiloxWords words(stateless_philox_seed(9, 9), 0);
  for (int i = 0; i < 200000; ++i) {
    const double u = std::max(uint32x2_to_double(words.next(), words.next()), 1e-20);
    worst_log = std::max(
        worst_log, error_ulps(internal::portable_log(u), std::log(static_cast<long double>(u))));
    const double angle = 6.283185307179586 * uint32x2_to_double(words.next(), words.next());
    double s, c;
    internal::portable_sincos(angle, &s, &c);
    worst_sin = std::max(worst_sin, error_ulps(s, std::sin(static_cast<long double>(angle))));
    worst_cos = std::max(worst_cos, error_ulps(c, std::cos(static_cast<long double>(angle))));
  }
  // Half a unit is correct rounding; long double's own error and our rare misroundings
  // add a little.
  EXPECT_LT(worst_log, 0.55);
  EXPECT_LT(worst_sin, 0.55);
  EXPECT_LT(worst_cos, 0.55);
}

}  // namespace
}  // namespace mt
