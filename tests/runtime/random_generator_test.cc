// mt::random::Generator: TensorFlow's numbers and state steps, bad states, and a checkpoint
// that restores the generator's next draws.
#include "runtime/ops/random_generator.h"

#include "runtime/ops/constant.h"
#include "runtime/train/checkpoint.h"
#include "tests/runtime/checkpoint_fixture.h"

namespace mt::testing {
namespace {

using absl::StatusCode;

class RandomGeneratorTest : public CheckpointTestBase {};

std::vector<int64_t> state_of(const random::Generator& g) {
  return g.state().read_value().to_vector<int64_t>();
}

// Values from tf.random.Generator.from_seed(1234) in TensorFlow 2.21.
TEST_F(RandomGeneratorTest, DrawsTensorFlowsUniformNumbersAndSteps) {
  random::Generator g = random::Generator::from_seed(1234);
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{1234, 0, 0}));
  EXPECT_EQ(g.uniform({3}).to_vector<float>(),
            (std::vector<float>{0.3581475019454956f, 0.11322760581970215f, 0.566709041595459f}));
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{2002, 0, 0}));  // 3 outputs * 256 blocks
  EXPECT_EQ(g.uniform({2}, 0, 10, DType::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{9, 1}));
  g.normal({2});
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{3026, 0, 0}));
  random::Generator h = random::Generator::from_state(constant(std::vector<int64_t>{5, 7, 9}, {3}));
  EXPECT_EQ(h.uniform({2}).to_vector<float>(),
            (std::vector<float>{0.16008341312408447f, 0.4439568519592285f}));
}

TEST_F(RandomGeneratorTest, CopiesShareOneState) {
  random::Generator a = random::Generator::from_seed(3);
  random::Generator b = a;
  std::vector<float> first = a.normal({4}).to_vector<float>();
  EXPECT_NE(b.normal({4}).to_vector<float>(), first);  // b goes on from where a left off
  EXPECT_EQ(state_of(a), state_of(b));
}

TEST_F(RandomGeneratorTest, RejectsBadStatesAndBadCallsReserveNothing) {
  expect_error(
      [] {
        random::Generator::from_state(constant(std::vector<int64_t>{1, 2}, {2}));
      },
      StatusCode::kInvalidArgument, "[Generator] the state must be int64 [3]");
  expect_error(
      [] {
        random::Generator::from_state(constant({1.f, 2.f, 3.f}));
      },
      StatusCode::kInvalidArgument, "not float32 (3,)");
  random::Generator g = random::Generator::from_seed(1);
  expect_error([&] { g.uniform({2}, 0, std::nullopt, DType::kInt32); },
               StatusCode::kInvalidArgument, "Must specify maxval");
  EXPECT_EQ(state_of(g), (std::vector<int64_t>{1, 0, 0}));
}

TEST_F(RandomGeneratorTest, CheckpointRestoresTheNextDraws) {
  random::Generator g = random::Generator::from_seed(42);
  g.uniform({5});
  train::Checkpoint ckpt;
  ckpt.track("rng/state", g.state());
  ckpt.write(dir_ + "/ckpt");
  std::vector<float> after_save = g.normal({16}).to_vector<float>();
  std::vector<float> more = g.uniform({16}).to_vector<float>();
  random::Generator fresh = random::Generator::from_seed(7);
  train::Checkpoint other;
  other.track("rng/state", fresh.state());
  other.restore(dir_ + "/ckpt");
  EXPECT_EQ(fresh.normal({16}).to_vector<float>(), after_save);
  EXPECT_EQ(fresh.uniform({16}).to_vector<float>(), more);
  ckpt.restore(dir_ + "/ckpt");  // the saved generator too goes back
  EXPECT_EQ(g.normal({16}).to_vector<float>(), after_save);
}

}  // namespace
}  // namespace mt::testing
