// Placement reasons: the opt-in log suffix and mt::debugging::explain_placement.

#include "runtime/eager/explain.h"

#include "gtest/gtest.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

class ExplainTest : public RuntimeTest {
 protected:
  void TearDown() override {
    debugging::set_log_placement_reasons(false);
    RuntimeTest::TearDown();
  }
};

TEST_F(ExplainTest, LogKeepsTensorFlowLinesByDefault) {
  debugging::set_log_device_placement(true);
  Tensor a = constant({1.f, 2.f});
  EXPECT_EQ(log(), (std::vector<std::string>{"Executing op _EagerConst in device " + cpu(0)}));
}

TEST_F(ExplainTest, LogAppendsReasonsAndCopiesWhenAsked) {
  split_cpu(2);
  debugging::set_log_device_placement(true);
  debugging::set_log_placement_reasons(true);
  EXPECT_TRUE(debugging::get_log_placement_reasons());
  Tensor a = constant(std::vector<float>(16384, 1.f), {16384});
  {
    DeviceScope scope("/CPU:1");
    Tensor b = relu(a);
  }
  EXPECT_EQ(log(), (std::vector<std::string>{
                       "Executing op _EagerConst in device " + cpu(0) +
                           " (default: the best device with a kernel)",
                       "Executing op Relu in device " + cpu(1) +
                           " (asked for /device:CPU:1; input 0 copied from CPU:0, 64 KiB)",
                   }));
}

TEST_F(ExplainTest, LogSaysWhenSoftPlacementChose) {
  config::set_soft_device_placement(true);
  debugging::set_log_device_placement(true);
  debugging::set_log_placement_reasons(true);
  DeviceScope scope("/device:GPU:2");
  Tensor a = constant({1.f});
  EXPECT_EQ(log(), (std::vector<std::string>{"Executing op _EagerConst in device " + cpu(0) +
                                             " (soft placement: /device:GPU:2 does not exist)"}));
}

TEST_F(ExplainTest, ExplainsScopeAndCopiesWithoutRunning) {
  split_cpu(2);
  debugging::set_log_device_placement(true);
  Tensor a = constant({1.f, 2.f});
  DeviceScope scope("/CPU:1");
  debugging::PlacementExplanation e = debugging::explain_placement("AddV2", {a, a});
  EXPECT_EQ(e.op, "AddV2");
  EXPECT_EQ(e.device, cpu(1));
  EXPECT_EQ(e.requested, "/device:CPU:1");
  EXPECT_EQ(e.reason, "scope");
  EXPECT_EQ(e.detail, "asked for /device:CPU:1");
  ASSERT_EQ(e.copies.size(), 2u);
  EXPECT_EQ(e.copies[1].input, 1);
  EXPECT_EQ(e.copies[1].from, "CPU:0");
  EXPECT_EQ(e.copies[1].bytes, 8);
  EXPECT_EQ(log().size(), 1u);  // only the constant ran
}

TEST_F(ExplainTest, ExplainsDefaultAndSoftFallback) {
  debugging::PlacementExplanation d = debugging::explain_placement("Fill", {}, DType::kInt32);
  EXPECT_EQ(d.reason, "default");
  EXPECT_EQ(d.requested, "");
  EXPECT_TRUE(d.copies.empty());
  config::set_soft_device_placement(true);
  DeviceScope scope("/GPU:2");
  debugging::PlacementExplanation s = debugging::explain_placement("MatMul", {});
  EXPECT_EQ(s.reason, "soft_fallback");
  EXPECT_EQ(s.device, cpu(0));
  EXPECT_EQ(s.detail, "soft placement: /device:GPU:2 does not exist");
}

TEST_F(ExplainTest, NoKernelFallbackNamesTheMissingKernel) {
  Placement p{0, nullptr, PlacementReason::kNoKernelFallback};
  DeviceSpec gpu{.type = "GPU", .id = 0};
  EXPECT_EQ(internal::placement_detail(OpId::kCast, DType::kFloat32, &gpu, p),
            "no GPU kernel for Cast on float32; asked for /device:GPU:0");
}

TEST_F(ExplainTest, UnknownOpIsInvalidArgument) {
  Error e = expect_error([] { debugging::explain_placement("Conv3D", {}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "[explain_placement] unknown op 'Conv3D'");
}

TEST_F(ExplainTest, EmptyInputIsInvalidArgument) {
  Error e = expect_error([] { debugging::explain_placement("Neg", {Tensor()}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "[explain_placement] input 0 is an empty tensor");
}

TEST_F(ExplainTest, UnknownDeviceIsNotFound) {
  config::set_soft_device_placement(false);  // the strict behaviour this test checks
  DeviceScope scope("/GPU:3");
  Error e = expect_error([] { debugging::explain_placement("Neg", {}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kNotFound);
}

TEST_F(ExplainTest, HumanBytesPicksTheUnit) {
  EXPECT_EQ(internal::human_bytes(512), "512 B");
  EXPECT_EQ(internal::human_bytes(65536), "64 KiB");
  EXPECT_EQ(internal::human_bytes(3 << 19), "1.5 MiB");
}

}  // namespace
}  // namespace mt::testing
