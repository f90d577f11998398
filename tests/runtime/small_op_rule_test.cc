// TensorFlow's small-op rule (placement/small_op_rule.h): ops whose every input is an int32
// or int64 of at most 64 elements on the host CPU run there, whatever the scope; each
// boundary of the rule, the reason it reports and the switch that turns it off.
#include "placement/small_op_rule.h"

#include <cstdlib>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/minitensor.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

// Returns a constant of `n` elements equal to `value` on the current scope's device.
template <typename T>
Tensor vec(int64_t n, T value) {
  return constant(std::vector<T>(n, value), {n});
}

class SmallOpRuleTest : public testing::RuntimeTest {
 protected:
  void SetUp() override {
    unsetenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING");
    RuntimeTest::SetUp();
    split_cpu(2);  // CPU:0 is the host; CPU:1 is another device to ask for
  }
  void TearDown() override {
    RuntimeTest::TearDown();
    unsetenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING");
  }

  // Returns where x + x runs under a /CPU:1 scope.
  static std::string add_under_cpu1(const Tensor& x) {
    DeviceScope scope("/CPU:1");
    return add(x, x).device();
  }
};

TEST_F(SmallOpRuleTest, SmallIntegerInputsOnTheHostPinTheOpThereUnderAnyScope) {
  Tensor i32 = vec<int32_t>(64, 1);
  Tensor i64 = vec<int64_t>(3, 2);
  EXPECT_EQ(add_under_cpu1(i32), cpu(0));
  EXPECT_EQ(add_under_cpu1(i64), cpu(0));
  DeviceScope scope("/CPU:1");
  debugging::PlacementExplanation e = debugging::explain_placement("AddV2", {i32, i32});
  EXPECT_EQ(e.reason, "small_op_on_host");
  EXPECT_EQ(e.detail,
            "every input is an int32 or int64 of at most 64 elements on the host CPU: pinned "
            "there (asked for /device:CPU:1)");
}

TEST_F(SmallOpRuleTest, SixtyFiveElementsOrAFloatInputOrAnInputElsewhereAreNotPinned) {
  EXPECT_EQ(add_under_cpu1(vec<int32_t>(65, 1)), cpu(1));
  EXPECT_EQ(add_under_cpu1(vec<float>(3, 1.f)), cpu(1));
  Tensor on_host = vec<int32_t>(3, 1);
  Tensor elsewhere;
  {
    DeviceScope scope("/CPU:1");
    elsewhere = vec<int32_t>(3, 1);
    EXPECT_EQ(add(on_host, elsewhere).device(), cpu(1));  // one input is not on the host
    EXPECT_EQ(add(elsewhere, elsewhere).device(), cpu(1));
  }
}

TEST_F(SmallOpRuleTest, OpsWithoutInputsAndIdentityAreNotPinned) {
  Tensor on_host = vec<int32_t>(3, 1);
  DeviceScope scope("/CPU:1");
  EXPECT_EQ(identity(on_host).device(), cpu(1));
  EXPECT_EQ(vec<int32_t>(3, 1).device(), cpu(1));
  EXPECT_EQ(fill({3}, 1.0, DType::kInt32).device(), cpu(1));
  EXPECT_FALSE(small_op_pinnable(OpId::kEagerConst, 1));
  EXPECT_FALSE(small_op_pinnable(OpId::kAddV2, 0));
  EXPECT_FALSE(small_op_pinnable(OpId::kIdentity, 1));
  EXPECT_TRUE(small_op_pinnable(OpId::kAddV2, 2));
}

TEST_F(SmallOpRuleTest, ThePlacementLogSaysWhy) {
  Tensor x = vec<int32_t>(2, 1);
  debugging::set_log_device_placement(true);
  debugging::set_log_placement_reasons(true);
  add_under_cpu1(x);
  debugging::set_log_placement_reasons(false);
  debugging::set_log_device_placement(false);
  ASSERT_FALSE(log().empty());
  EXPECT_EQ(log().back(),
            "Executing op AddV2 in device " + cpu(0) +
                " (every input is an int32 or int64 of at most 64 elements on the host CPU: "
                "pinned there (asked for /device:CPU:1))");
}

TEST_F(SmallOpRuleTest, TheEnvironmentTurnsItOffAtInitialisation) {
  // Each reset makes the GPUs visible again: hide them, as the fixture does.
  const auto restart = [] {
    ASSERT_TRUE(internal::Context::get().reset_for_testing().ok());
    config::set_visible_devices(std::vector<PhysicalDevice>{}, "GPU");
  };
  for (const char* off : {"0", "false", "False"}) {
    restart();
    setenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING", off, 1);
    split_cpu(2);
    EXPECT_EQ(add_under_cpu1(vec<int32_t>(3, 1)), cpu(1)) << off;
  }
  restart();
  setenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING", "1", 1);
  split_cpu(2);
  EXPECT_EQ(add_under_cpu1(vec<int32_t>(3, 1)), cpu(0));
  EXPECT_TRUE(small_op_pinning_enabled(nullptr));
  EXPECT_TRUE(small_op_pinning_enabled("true"));
  EXPECT_FALSE(small_op_pinning_enabled("FALSE"));
}

}  // namespace
}  // namespace mt
