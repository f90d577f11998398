// RandomSeedState (kernels/random_seed.h) follows TensorFlow's seed rules, and its streams
// give TensorFlow's stateful tf.random.uniform/normal values (TensorFlow 2.21 on the CPU,
// generated in a throwaway venv), move on between calls and restart with set_global_seed.
#include "kernels/random_seed.h"

#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/random_fill.h"

namespace mt {
namespace {

using ::testing::ElementsAreArray;

constexpr int64_t kMaxInt32 = (int64_t{1} << 31) - 1;

std::vector<float> uniform(const PhiloxSeed& start, int64_t n) {
  std::vector<float> out(n);
  cpu::random_fill(RandomDistribution::kUniform, DType::kFloat32, start, out.data(), n);
  return out;
}

TEST(PythonRandomTest, DrawsPythonsRandintSequence) {
  // [random.Random(s).randint(0, 2**31 - 1) for _ in range(3)] in CPython 3.11.
  const struct {
    int64_t seed;
    int64_t draws[3];
  } cases[] = {{5, {1097127993, 1539898300, 124576495}},
               {0, {1654615998, 1806341205, 173879092}},
               {-3, {1022050301, 560161641, 1588945316}},
               {(int64_t{1} << 40) + 5, {1153647273, 117802120, 200118061}}};
  for (const auto& c : cases) {
    internal::PythonRandom random(c.seed);
    for (int64_t want : c.draws) EXPECT_EQ(random.randint31(), want) << "seed " << c.seed;
  }
}

TEST(RandomSeedStateTest, FollowsTensorFlowsSeedRules) {
  RandomSeedState state;
  EXPECT_EQ(state.op_seeds(std::nullopt), (SeedPair{0, 0}));  // nondeterministic
  EXPECT_EQ(state.op_seeds(3), (SeedPair{87654321, 3}));
  EXPECT_EQ(state.op_seeds(-1), (SeedPair{87654321, kMaxInt32 - 1}));  // Python's modulo
  state.set_global_seed(5);
  EXPECT_EQ(state.global_seed(), 5);
  EXPECT_EQ(state.op_seeds(7), (SeedPair{5, 7}));
  EXPECT_EQ(state.op_seeds(std::nullopt), (SeedPair{5, 1097127993}));
  EXPECT_EQ(state.op_seeds(std::nullopt), (SeedPair{5, 1539898300}));
  state.set_global_seed(kMaxInt32);  // truncates to 0
  EXPECT_EQ(state.op_seeds(0), (SeedPair{0, kMaxInt32}));
  state.set_global_seed(std::nullopt);
  EXPECT_EQ(state.global_seed(), std::nullopt);
  EXPECT_EQ(state.op_seeds(std::nullopt), (SeedPair{0, 0}));
}

TEST(RandomSeedStateTest, GivesTensorFlowsStatefulUniformValues) {
  // tf.random.set_seed(1); tf.random.uniform([6], seed=7), twice.
  RandomSeedState state;
  state.set_global_seed(1);
  const std::vector<float> first = uniform(state.reserve(1, state.op_seeds(7), 6), 6);
  EXPECT_THAT(
      first, ElementsAreArray<float>({0.787847638130188, 0.7003978490829468, 0.9041969776153564,
                                      0.6824533939361572, 0.598848819732666, 0.44210636615753174}));
  EXPECT_THAT(
      uniform(state.reserve(1, state.op_seeds(7), 6), 6),
      ElementsAreArray<float>({0.13742351531982422, 0.5428975820541382, 0.5307563543319702,
                               0.5423014163970947, 0.4795536994934082, 0.9962340593338013}));
  state.set_global_seed(1);  // restarts the stream
  EXPECT_EQ(uniform(state.reserve(1, state.op_seeds(7), 6), 6), first);
  // tf.random.set_seed(5); tf.random.uniform([6]): the op seed is drawn from the global one.
  state.set_global_seed(5);
  EXPECT_THAT(
      uniform(state.reserve(1, state.op_seeds(std::nullopt), 6), 6),
      ElementsAreArray<float>({0.6263930797576904, 0.5298432111740112, 0.7584571838378906,
                               0.5084884166717529, 0.3441537618637085, 0.3195977210998535}));
  // Without a global seed: tf.random.uniform([6], seed=3).
  state.set_global_seed(std::nullopt);
  EXPECT_THAT(
      uniform(state.reserve(1, state.op_seeds(3), 6), 6),
      ElementsAreArray<float>({0.38692939281463623, 0.3600262403488159, 0.9768795967102051,
                               0.0865163803100586, 0.5038012266159058, 0.3585019111633301}));
}

TEST(RandomSeedStateTest, GivesTensorFlowsStatefulNormalValues) {
  // tf.random.normal([4], seed=3, dtype=tf.float64) without a global seed.
  RandomSeedState state;
  std::vector<double> out(4);
  cpu::random_fill(RandomDistribution::kNormal, DType::kFloat64,
                   state.reserve(2, state.op_seeds(3), 4), out.data(), 4);
  EXPECT_THAT(out, ElementsAreArray<double>({-1.9891512607565875, 0.8613319661711827,
                                             -2.3519238994697904, -1.2059862321712569}));
}

TEST(RandomSeedStateTest, GivesTensorFlowsStatefulTruncatedNormalValues) {
  // tf.random.set_seed(1); tf.random.truncated_normal([5], seed=7), twice.
  RandomSeedState state;
  state.set_global_seed(1);
  std::vector<float> out(5);
  for (const std::vector<float>& want :
       {std::vector<float>{-0.657312273979187, -0.21175844967365265, -0.40897825360298157,
                           -0.1848050057888031, 0.48211053013801575},
        std::vector<float>{0.8323692083358765, -0.8254317045211792, 0.8464173078536987,
                           -0.8496364951133728, -0.5305209755897522}}) {
    cpu::random_fill(RandomDistribution::kTruncatedNormal, DType::kFloat32,
                     state.reserve(3, state.op_seeds(7), 5), out.data(), 5);
    EXPECT_EQ(out, want);
  }
}

TEST(RandomSeedStateTest, GivesTensorFlowsStatefulUniformIntegers) {
  // tf.random.set_seed(1); tf.random.uniform([5], -5, 17, seed=7, dtype=tf.int32) twice,
  // then tf.random.uniform([3], 0, 2**62, seed=7, dtype=tf.int64).
  RandomSeedState state;
  state.set_global_seed(1);
  std::vector<int32_t> i32(5);
  cpu::random_fill_uniform_int(DType::kInt32, state.reserve(5, state.op_seeds(7), 5), -5, 22,
                               i32.data(), 5);
  EXPECT_EQ(i32, (std::vector<int32_t>{12, 6, 9, -3, 5}));
  cpu::random_fill_uniform_int(DType::kInt32, state.reserve(5, state.op_seeds(7), 5), -5, 22,
                               i32.data(), 5);
  EXPECT_EQ(i32, (std::vector<int32_t>{8, 2, 8, -1, 0}));
  std::vector<int64_t> i64(3);
  cpu::random_fill_uniform_int(DType::kInt64, state.reserve(6, state.op_seeds(7), 3), 0,
                               uint64_t{1} << 62, i64.data(), 3);
  EXPECT_EQ(i64,
            (std::vector<int64_t>{1214184793712154673, 1645883844449254586, 2790145933164979988}));
}

TEST(RandomSeedStateTest, KeepsOneStreamPerStreamIdAndSeedPair) {
  RandomSeedState state;
  const SeedPair seeds{1, 2};
  const PhiloxSeed a = state.reserve(10, seeds, 3);
  EXPECT_EQ(a.counter.word[0], 0u);
  EXPECT_EQ(state.reserve(10, seeds, 1).counter.word[0], 3u * 256);  // 256 blocks per output
  EXPECT_EQ(state.reserve(11, seeds, 1).counter.word[0], 0u);        // another stream
  EXPECT_EQ(state.reserve(10, SeedPair{1, 3}, 1).counter.word[0], 0u);
}

TEST(RandomSeedStateTest, GivesEachStreamItsOwnRandomSeedsWithoutSeeds) {
  RandomSeedState state;
  const PhiloxSeed a = state.reserve(1, SeedPair{0, 0}, 4);
  const PhiloxSeed b = state.reserve(1, SeedPair{0, 0}, 4);
  EXPECT_EQ(a.key.word[0], b.key.word[0]);
  EXPECT_EQ(a.counter.word[2], b.counter.word[2]);
  EXPECT_EQ(b.counter.word[0], 4u * 256);  // the stream moved on
  const PhiloxSeed other = state.reserve(2, SeedPair{0, 0}, 4);
  EXPECT_NE(other.counter.word[2], a.counter.word[2]);  // another stream, other seeds
  state.set_global_seed(std::nullopt);                  // new random seeds
  const PhiloxSeed after = state.reserve(1, SeedPair{0, 0}, 4);
  EXPECT_EQ(after.counter.word[0], 0u);
  EXPECT_NE(after.key.word[0], a.key.word[0]);
}

TEST(RandomSeedStateTest, ReservesDisjointRangesFromManyThreads) {
  RandomSeedState state;
  std::vector<std::vector<uint32_t>> starts(4);
  std::vector<std::thread> threads;
  for (auto& mine : starts) {
    threads.emplace_back([&state, &mine] {
      for (int i = 0; i < 1000; ++i) mine.push_back(state.reserve(1, {1, 2}, 1).counter.word[0]);
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<uint32_t> all;
  for (const auto& mine : starts) all.insert(mine.begin(), mine.end());
  EXPECT_EQ(all.size(), 4000u);
  EXPECT_EQ(*all.rbegin(), 3999u * 256);
}

}  // namespace
}  // namespace mt
