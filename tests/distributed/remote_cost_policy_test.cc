// The cost policy with a connected cluster (Note [Remote candidates] in
// runtime/cost/cost_policy.h): an op follows its data to a task when the estimates say so, an op
// whose data is here never leaves, the remote run's issue is timed, and the network link is
// measured against a real task.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "runtime/cost/bus_calibration.h"
#include "runtime/cost/cost_policy.h"
#include "runtime/eager/context.h"
#include "tests/distributed/distributed_fixture.h"
#include "tests/runtime/fake_cost_clock.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

class RemoteCostPolicyTest : public testing::DistributedTest {
 protected:
  void TearDown() override {
    config::set_placement_policy(config::PlacementPolicy::kPriority);
    DistributedTest::TearDown();
  }
  internal::Runtime& runtime() { return *internal::Context::get().runtime().value(); }
  testing::FakeCostClock clock_;
  int index_of(const std::string& name) {
    for (int i = 0; i < runtime().num_devices(); ++i) {
      if (runtime().device(i).name() == name) return i;
    }
    return -1;
  }
};

TEST_F(RemoteCostPolicyTest, TheNetworkToATaskIsMeasured) {
  std::optional<LinkCost> net = internal::measure_network(runtime());
  ASSERT_TRUE(net.has_value());
  EXPECT_GT(net->bytes_per_ns, 0);
  EXPECT_GE(net->latency_ns, 0);
}

TEST_F(RemoteCostPolicyTest, AnOpFollowsItsDataToATaskAndAnOpOnLocalDataStays) {
  Tensor a, b;
  {
    DeviceScope scope("/job:worker/task:1");
    a = constant(std::vector<float>(1024, 1.f), {1024});
    b = constant(std::vector<float>(1024, 2.f), {1024});
  }
  Tensor here = constant(std::vector<float>(1024, 3.f), {1024});
  const int local = index_of(cpu(0)), task = index_of(worker_cpu(1));
  ASSERT_GE(local, 0);
  ASSERT_GE(task, 0);
  config::set_placement_policy(config::PlacementPolicy::kCost);
  internal::CostPolicy& policy = internal::cost_policy(runtime());
  policy.reset_for_testing(&clock_);  // a clock that stands still: runs take 0 ns
  BusModel bus;
  bus.set(Link::kHostToHost, LinkCost{100, 20});
  bus.set(Link::kNetwork, LinkCost{100000, 1});  // 100 us + 1 ns a byte
  policy.model().set_bus(bus);
  // The same estimate on both: the copies decide.
  const CostKey key{OpId::kAddV2, DType::kFloat32, footprint_bucket(8192)};
  for (int i = 0; i < CostModel::kRefreshSamples; ++i) {
    policy.model().record(key, local, 8192, 2000);
    policy.model().record(key, task, 8192, 2000);
  }
  Tensor sum = add(a, b);
  EXPECT_EQ(sum.device(), worker_cpu(1));
  EXPECT_EQ(sum.to_vector<float>(), std::vector<float>(1024, 3.f));
  int64_t samples = 0;  // the remote run's issue joined the history
  for (const CostRecord& r : policy.model().history()) {
    if (r.op == OpId::kAddV2 && r.device == task) samples = r.count;
  }
  EXPECT_EQ(samples, CostModel::kRefreshSamples + 1);
  const std::string detail = debugging::explain_placement("AddV2", {a, b}).detail;
  EXPECT_THAT(detail, ::testing::StartsWith("cost policy: " + worker_cpu(1) + " "));
  EXPECT_THAT(detail, HasSubstr(" vs CPU:0 2.0 us + copy 208.2 us + back 104.1 us"));
  // Data here: the task is no candidate, even when it would win (a free network, and a
  // product 50x faster there).
  bus.set(Link::kNetwork, LinkCost{0, 1e9});
  policy.model().set_bus(bus);
  const CostKey mul{OpId::kMul, DType::kFloat32, footprint_bucket(8192)};
  for (int i = 0; i < CostModel::kRefreshSamples; ++i) {
    policy.model().record(mul, local, 8192, 50000);
    policy.model().record(mul, task, 8192, 1000);
  }
  EXPECT_EQ(mt::mul(here, here).device(), cpu(0));
  EXPECT_EQ(mt::mul(a, here).device(), worker_cpu(1));  // one input there: it may go
}

TEST_F(RemoteCostPolicyTest, TheFirstOpOnTaskDataMeasuresTheNetworkAndNoTaskIsSaved) {
  const std::string dir = ::testing::TempDir() + "/remote_cost_policy_" + std::to_string(getpid());
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = xdg != nullptr ? xdg : "";
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);  // the bus file of this test's own
  Tensor a;
  {
    DeviceScope scope("/job:worker/task:1");
    a = constant(std::vector<float>(1024, 1.f), {1024});
  }
  Tensor here = constant(std::vector<float>(1024, 3.f), {1024});
  config::set_placement_policy(config::PlacementPolicy::kCost);
  internal::CostPolicy& policy = internal::cost_policy(runtime());
  add(here, here);
  EXPECT_FALSE(policy.model().bus().has(Link::kNetwork));  // no data on a task yet
  for (int i = 0; i < 12; ++i) EXPECT_EQ(add(a, a).to_vector<float>()[0], 2.f);
  EXPECT_TRUE(policy.model().bus().has(Link::kNetwork));
  const std::string history = dir + "/history.txt";
  ASSERT_TRUE(policy.save_history(history).ok());
  std::ifstream in(history);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().find("/job:worker"), std::string::npos) << text.str();
  std::filesystem::remove_all(dir);
  if (xdg != nullptr) {
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_CACHE_HOME");
  }
}

// Remote devices run ops with one output only: a split of task data stays here.
TEST_F(RemoteCostPolicyTest, AnOpWithSeveralOutputsOnTaskDataRunsHere) {
  Tensor a;
  {
    DeviceScope scope("/job:worker/task:1");
    a = constant(std::vector<float>{1, 2, 3, 4}, {4});
  }
  config::set_placement_policy(config::PlacementPolicy::kCost);
  internal::CostPolicy& policy = internal::cost_policy(runtime());
  policy.reset_for_testing(&clock_);
  BusModel bus;
  bus.set(Link::kHostToHost, LinkCost{100, 20});
  bus.set(Link::kNetwork, LinkCost{0, 1e9});  // free, and the task 500x faster: only the
  policy.model().set_bus(bus);                // outputs keep the split here
  const int local = index_of(cpu(0)), task = index_of(worker_cpu(1));
  const CostKey key{OpId::kSplitV, DType::kFloat32, footprint_bucket(16)};
  for (int i = 0; i < CostModel::kRefreshSamples; ++i) {
    policy.model().record(key, local, 16, 50000);
    policy.model().record(key, task, 16, 100);
  }
  std::vector<Tensor> parts = split(a, 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].device(), cpu(0));
  EXPECT_EQ(parts[1].to_vector<float>(), (std::vector<float>{3, 4}));
}

}  // namespace
}  // namespace mt
