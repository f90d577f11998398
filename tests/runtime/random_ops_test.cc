// The random ops through the public API (runtime/ops/random_ops.h): stateless values are
// TensorFlow's (uniforms bit for bit; normals the fill's, Note [TensorFlow's random bits]),
// stateful sequences follow tf.random.set_seed and seed= as TensorFlow 2.21's do on the CPU,
// the scaling keeps TensorFlow's bits, and bad calls fail before reserving any numbers.
// TensorFlow's values were generated in a throwaway venv (never a dependency).
#include "runtime/ops/random_ops.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "gmock/gmock.h"
#include "kernels/cpu/random_fill.h"
#include "tests/kernels/random_golden_values.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using ::testing::ElementsAreArray;
using testing::expect_error;

class RandomOpsTest : public testing::RuntimeTest {};

// Returns the bits of each element of `t`, zero-extended.
std::vector<uint64_t> bits(const Tensor& t) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<uint64_t> out;
    if constexpr (!std::is_same_v<T, bool>) {
      for (T v : t.to_vector<T>()) {
        uint64_t b = 0;
        std::memcpy(&b, &v, sizeof v);
        out.push_back(b);
      }
    }
    return out;
  });
}

std::vector<uint64_t> bits32(std::initializer_list<uint32_t> words) {
  return std::vector<uint64_t>(words.begin(), words.end());
}

// The standard values of the CPU fill for seed [s0, s1].
std::vector<uint64_t> fill_bits(RandomDistribution dist, DType dtype, int64_t s0, int64_t s1,
                                int64_t n) {
  std::vector<char> buffer(n * dtype_size(dtype));
  cpu::random_fill(dist, dtype, stateless_philox_seed(s0, s1), buffer.data(), n);
  std::vector<uint64_t> out(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(&out[i], buffer.data() + i * dtype_size(dtype), dtype_size(dtype));
  }
  return out;
}

Tensor stateless(RandomDistribution dist, DType dtype, random::StatelessSeed seed, int64_t n) {
  switch (dist) {
    case RandomDistribution::kUniform:
      return random::stateless_uniform({n}, seed, 0, 1, dtype);
    case RandomDistribution::kNormal:
      return random::stateless_normal({n}, seed, 0, 1, dtype);
    case RandomDistribution::kTruncatedNormal:
      return random::stateless_truncated_normal({n}, seed, 0, 1, dtype);
  }
  return Tensor();
}

TEST_F(RandomOpsTest, StatelessOpsGiveTensorFlowsUniformsAndTheFillsNormals) {
  for (const testutil::RandomGolden& golden : testutil::tensorflow_random_goldens()) {
    SCOPED_TRACE(::testing::Message()
                 << dtype_name(golden.dtype) << " seed " << golden.seed0 << "," << golden.seed1);
    const auto n = static_cast<int64_t>(golden.bits.size());
    const std::vector<uint64_t> got =
        bits(stateless(golden.dist, golden.dtype, {golden.seed0, golden.seed1}, n));
    if (golden.dist == RandomDistribution::kUniform) {
      EXPECT_EQ(got, golden.bits);
    } else {
      EXPECT_EQ(got, fill_bits(golden.dist, golden.dtype, golden.seed0, golden.seed1, n));
    }
  }
}

TEST_F(RandomOpsTest, StatelessScalingKeepsTensorFlowsBits) {
  // tf.random.stateless_uniform([6], seed=[1, 2], minval=-2.5, maxval=3.0, dtype=...).
  EXPECT_EQ(bits(random::stateless_uniform({6}, {1, 2}, -2.5, 3.0)),
            bits32({0x40091bf8, 0xbfb8ccd2, 0x403eabaa, 0xbfcf1658, 0xbf8084d8, 0x3f8923bc}));
  EXPECT_EQ(bits(random::stateless_uniform({6}, {1, 2}, -2.5, 3.0, DType::kFloat16)),
            bits32({0x37c8, 0xbcd2, 0xc056, 0x40d4, 0xbed8, 0xac40}));
  std::vector<float> b16;
  for (bfloat16 v :
       random::stateless_uniform({6}, {1, 2}, -2.5, 3.0, DType::kBFloat16).to_vector<bfloat16>()) {
    b16.push_back(static_cast<float>(v));
  }
  EXPECT_EQ(b16, (std::vector<float>{-0.609375, 2.34375, 0.15625, -1.6875, -1.6875, 0.46875}));
  EXPECT_EQ(bits(random::stateless_uniform({4}, {1, 2}, -2.5, 3.0, DType::kFloat64)),
            (std::vector<uint64_t>{0x3ffa37f439c7332c, 0x4006abaabcb874d4, 0xbff884d250b6dc44,
                                   0x4001a4faa056efea}));
  // minval=0.0, maxval=-3.0: the add of 0 stays (it turns -0 into +0).
  EXPECT_EQ(bits(random::stateless_uniform({6}, {1, 2}, 0.0, -3.0)),
            bits32({0xc0220f42, 0xbf137da6, 0xc03f465d, 0xbef65ae4, 0xbf50e372, 0xbff9594f}));
  // mean=1.5, stddev=0.3 and mean=-1.0, stddev=2.0.
  EXPECT_EQ(bits(random::stateless_normal({6}, {1, 2}, 1.5, 0.3)),
            bits32({0x3fd4e4d2, 0x3fc7f6a2, 0x3fc2d32b, 0x3fc1c878, 0x3f8e04da, 0x3f9b5f35}));
  EXPECT_EQ(bits(random::stateless_truncated_normal({6}, {1, 2}, -1.0, 2.0)),
            bits32({0x3db4acd0, 0xbf15d240, 0xbf5a55c7, 0xbf6839bb, 0xbf29e0ea, 0xc08bd796}));
}

TEST_F(RandomOpsTest, StatelessIntegersAreTensorFlows) {
  EXPECT_EQ(random::stateless_uniform({6}, {1, 2}, -5, 17, DType::kInt32).to_vector<int32_t>(),
            (std::vector<int32_t>{-1, 0, 7, 12, 2, -2}));
  EXPECT_EQ(
      random::stateless_uniform_int({4}, {3, 4}, -(int64_t{1} << 40), int64_t{1} << 50,
                                    DType::kInt64)
          .to_vector<int64_t>(),
      (std::vector<int64_t>{1109998077682699, 62464613693090, 811163199933895, 781874846601018}));
}

TEST_F(RandomOpsTest, StatefulUniformFollowsTensorFlowsSequence) {
  // tf.random.set_seed(1); tf.random.uniform([6], seed=7) twice; set_seed restarts it.
  const std::vector<float> first = {0.787847638130188,  0.7003978490829468, 0.9041969776153564,
                                    0.6824533939361572, 0.598848819732666,  0.44210636615753174};
  random::set_seed(1);
  EXPECT_THAT(random::uniform({6}, 0, 1, DType::kFloat32, 7).to_vector<float>(),
              ElementsAreArray(first));
  EXPECT_THAT(
      random::uniform({6}, 0, 1, DType::kFloat32, 7).to_vector<float>(),
      ElementsAreArray<float>({0.13742351531982422, 0.5428975820541382, 0.5307563543319702,
                               0.5423014163970947, 0.4795536994934082, 0.9962340593338013}));
  random::set_seed(1);
  EXPECT_EQ(random::uniform({6}, 0, 1, DType::kFloat32, 7).to_vector<float>(), first);
  // tf.random.set_seed(5); tf.random.uniform([6]): the op seed comes from the global seed.
  random::set_seed(5);
  EXPECT_THAT(
      random::uniform({6}).to_vector<float>(),
      ElementsAreArray<float>({0.6263930797576904, 0.5298432111740112, 0.7584571838378906,
                               0.5084884166717529, 0.3441537618637085, 0.3195977210998535}));
  // tf.random.set_seed(1); uniform([6], -1.0, 2.0, seed=7); uniform([6], maxval=4.0, seed=7).
  random::set_seed(1);
  EXPECT_EQ(bits(random::uniform({6}, -1.0, 2.0, DType::kFloat32, 7)),
            bits32({0x3fae8894, 0x3f8cf3e8, 0x3fdb362e, 0x3f860fe6, 0x3f4bea78, 0x3ea7134c}));
  EXPECT_EQ(bits(random::uniform({6}, 0, 4.0, DType::kFloat32, 7)),
            bits32({0x3f0cb8c0, 0x400afb56, 0x4007dfa6, 0x400ad444, 0x3ff58810, 0x407f0932}));
}

TEST_F(RandomOpsTest, StatefulIntegersAndNormalsFollowTensorFlowsSequence) {
  // tf.random.set_seed(1); uniform([5], -5, 17, seed=7, dtype=tf.int32) twice, then
  // uniform([3], 0, 2**62, seed=7, dtype=tf.int64).
  random::set_seed(1);
  EXPECT_EQ(random::uniform({5}, -5, 17, DType::kInt32, 7).to_vector<int32_t>(),
            (std::vector<int32_t>{12, 6, 9, -3, 5}));
  EXPECT_EQ(random::uniform_int({5}, -5, 17, DType::kInt32, 7).to_vector<int32_t>(),
            (std::vector<int32_t>{8, 2, 8, -1, 0}));
  EXPECT_EQ(random::uniform_int({3}, 0, int64_t{1} << 62, DType::kInt64, 7).to_vector<int64_t>(),
            (std::vector<int64_t>{1214184793712154673, 1645883844449254586, 2790145933164979988}));
  // tf.random.set_seed(1); truncated_normal([5], seed=7) twice.
  for (const std::vector<float>& want :
       {std::vector<float>{-0.657312273979187, -0.21175844967365265, -0.40897825360298157,
                           -0.1848050057888031, 0.48211053013801575},
        std::vector<float>{0.8323692083358765, -0.8254317045211792, 0.8464173078536987,
                           -0.8496364951133728, -0.5305209755897522}}) {
    EXPECT_EQ(random::truncated_normal({5}, 0, 1, DType::kFloat32, 7).to_vector<float>(), want);
  }
  // Without a global seed: tf.random.normal([4], seed=3, dtype=tf.float64).
  random::set_seed(std::nullopt);
  EXPECT_THAT(random::normal({4}, 0, 1, DType::kFloat64, 3).to_vector<double>(),
              ElementsAreArray<double>({-1.9891512607565875, 0.8613319661711827,
                                        -2.3519238994697904, -1.2059862321712569}));
  // tf.random.set_seed(1); tf.random.normal([4], mean=2.0, stddev=3.0, seed=7).
  random::set_seed(1);
  EXPECT_EQ(bits(random::normal({4}, 2.0, 3.0, DType::kFloat32, 7)),
            bits32({0x3ce5e4c0, 0x3faeaf4c, 0x3f45e79a, 0x3fb908ee}));
}

TEST_F(RandomOpsTest, StatefulOpsWithoutSeedsDifferBetweenCalls) {
  const std::vector<float> a = random::uniform({64}).to_vector<float>();
  EXPECT_NE(random::uniform({64}).to_vector<float>(), a);
  const Tensor empty = random::uniform({0, 3});
  EXPECT_EQ(empty.shape().rank(), 2);
  EXPECT_EQ(empty.shape().num_elements(), 0);
}

TEST_F(RandomOpsTest, RejectsBadCallsWithTensorFlowsMessages) {
  struct Case {
    std::function<void()> call;
    const char* message;
  };
  const Case cases[] = {
      {[] { random::uniform({2}, 0, std::nullopt, DType::kInt32); },
       "[RandomUniformInt] Must specify maxval for integer dtype int32"},
      {[] { random::uniform({2}, 5, 3, DType::kInt32); },
       "[RandomUniformInt] Need minval < maxval, got 5 >= 3"},
      {[] {
         random::stateless_uniform({2}, {1, 2}, 5, 5, DType::kInt64);
       },
       "[StatelessRandomUniformIntV2] Need minval < maxval, got 5 >= 5"},
      {[] { random::uniform_int({2}, 0, int64_t{1} << 31, DType::kInt32); },
       "[RandomUniformInt] bound 2147483648 is out of range for int32"},
      {[] { random::uniform({2}, 0.5, 3, DType::kInt64); },
       "[RandomUniformInt] minval 0.5 is not an int64 integer"},
      {[] { random::normal({2}, 0, 1, DType::kInt32); },
       "[RandomStandardNormal] dtype int32 is not supported; expected one of float32, float64, "
       "bfloat16, float16"},
      {[] {
         random::stateless_uniform_int({2}, {1, 2}, 0, 3, DType::kFloat32);
       },
       "[StatelessRandomUniformIntV2] dtype float32 is not supported; expected one of int32, "
       "int64"},
  };
  for (const Case& c : cases) {
    Error e = expect_error(c.call);
    EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), c.message);
  }
  EXPECT_EQ(expect_error([] { random::uniform({-1}); }).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RandomOpsTest, FailedCallsReserveNoNumbers) {
  random::set_seed(1);
  expect_error([] { random::uniform({5}, 5, 3, DType::kInt32, 7); });
  EXPECT_EQ(random::uniform({5}, -5, 17, DType::kInt32, 7).to_vector<int32_t>(),
            (std::vector<int32_t>{12, 6, 9, -3, 5}));
}

}  // namespace
}  // namespace mt
