// The placement-policy interface (runtime/eager/placement_policy.h): what the execute body
// asks a policy and tells it, seen through a policy that records the calls.
#include "runtime/eager/placement_policy.h"

#include <string>
#include <vector>

#include "core/status.h"
#include "runtime/cost/cost_policy.h"
#include "runtime/eager/device.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using internal::PlacementPolicy;
using internal::PolicyTiming;

// Places every op on the last device, asks for every run to be timed, and writes each call
// down as a word.
class Recorder final : public PlacementPolicy {
 public:
  explicit Recorder(const internal::Runtime& rt) : rt_(rt) {}

  absl::StatusOr<Placement> place(OpId op, DType dtype, absl::Span<const Tensor* const>, int64_t,
                                  bool, std::string* why) override {
    calls().push_back(std::string("place:") + op_name(op));
    if (why != nullptr) *why = "recorder: the last device";
    const int device = rt_.num_devices() - 1;
    return Placement{device, rt_.placer().kernel(device, op, dtype), PlacementReason::kCost,
                     /*measure=*/true};
  }
  absl::StatusOr<Explained> explain(OpId op, DType dtype, absl::Span<const Tensor* const> inputs,
                                    int64_t out_bytes) override {
    MT_ASSIGN_OR_RETURN(Placement p, place(op, dtype, inputs, out_bytes, true, nullptr));
    return Explained{p, "recorder"};
  }
  void copied(OpId op, internal::TensorImpl&, internal::TensorImpl&) override {
    calls().push_back(std::string("copied:") + op_name(op));
  }
  void writing(internal::TensorImpl&) override { calls().push_back("writing"); }
  PolicyTiming begin(internal::Device&) override {
    calls().push_back("begin");
    return {};
  }
  void launched(const Placement&, absl::Span<const Tensor> outputs) override {
    calls().push_back("launched:" + std::to_string(outputs.size()));
  }
  void measured(const PolicyTiming&, internal::Device&, OpId op, DType,
                absl::Span<const Tensor* const>, int64_t) override {
    calls().push_back(std::string("measured:") + op_name(op));
  }

  static std::vector<std::string>& calls() {
    static std::vector<std::string> list;
    return list;
  }

 private:
  const internal::Runtime& rt_;
};

std::unique_ptr<PlacementPolicy> make_recorder(const internal::Runtime& rt) {
  return std::make_unique<Recorder>(rt);
}

class PlacementPolicyTest : public testing::RuntimeTest {
 protected:
  void SetUp() override {
    internal::set_policy_factory(&make_recorder);
    Recorder::calls().clear();
    testing::RuntimeTest::SetUp();
  }
  void TearDown() override {
    config::set_placement_policy(config::PlacementPolicy::kPriority);
    testing::RuntimeTest::TearDown();
    internal::set_policy_factory(&internal::make_cost_policy);
  }
};

TEST_F(PlacementPolicyTest, UnscopedOpsAskThePolicyAndItHearsOfTheirRuns) {
  split_cpu(2);
  Tensor a = constant({1.f, 2.f});  // before the policy is on: CPU:0
  config::set_placement_policy(config::PlacementPolicy::kCost);
  Tensor b = a + a;
  EXPECT_EQ(b.device(), cpu(1));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(Recorder::calls(),
            (std::vector<std::string>{"place:AddV2", "copied:AddV2", "copied:AddV2", "begin",
                                      "launched:1", "measured:AddV2"}));
}

TEST_F(PlacementPolicyTest, ScopedOpsFollowTheScopeWithoutThePolicy) {
  split_cpu(2);
  config::set_placement_policy(config::PlacementPolicy::kCost);
  Recorder::calls().clear();
  Tensor a;
  {
    DeviceScope scope("/CPU:0");
    a = constant({1.f}) + constant({2.f});
  }
  EXPECT_EQ(a.device(), cpu(0));
  EXPECT_TRUE(Recorder::calls().empty());
}

TEST_F(PlacementPolicyTest, AnOpThatWritesAVariableTellsThePolicyWhoeverPlacedIt) {
  Variable v(constant({1.f, 2.f}));
  Recorder::calls().clear();
  v.assign_add(constant({1.f, 1.f}));  // priority rules: the policy is off
  EXPECT_EQ(Recorder::calls(), (std::vector<std::string>{"writing"}));
  EXPECT_EQ(v.read_value().to_vector<float>(), (std::vector<float>{2, 3}));
}

TEST_F(PlacementPolicyTest, TheLogShowsThePolicysWords) {
  split_cpu(2);
  config::set_placement_policy(config::PlacementPolicy::kCost);
  debugging::set_log_device_placement(true);
  debugging::set_log_placement_reasons(true);
  Tensor a = zeros({2});
  ASSERT_FALSE(log().empty());
  EXPECT_NE(log().back().find("recorder: the last device"), std::string::npos) << log().back();
  debugging::set_log_placement_reasons(false);
}

}  // namespace
}  // namespace mt
