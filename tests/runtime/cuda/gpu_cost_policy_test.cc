// The cost policy on a real GPU: the bus calibration measures the links between the host
// and the GPU, a GPU op's timing reaches the model from its events without a wait, and an op
// seen completed cuts the GPU's queue (Note [A queue that follows the device] in
// runtime/cost/cost_model.h). Every test skips itself when no GPU is visible.
#include "runtime/cost/bus_calibration.h"
#include "runtime/cost/cost_policy.h"
#include "runtime/eager/context.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

constexpr const char* kGpu0 = "/job:localhost/replica:0/task:0/device:GPU:0";

class GpuCostPolicyTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty()) GTEST_SKIP() << "needs a GPU";
    rt_ = internal::Context::get().runtime().value();
  }
  void TearDown() override {
    config::set_placement_policy(config::PlacementPolicy::kPriority);
    RuntimeTest::TearDown();
  }
  // Returns the runtime's index of the first device of `type`.
  int first(DeviceType type) const {
    for (int i = 0; i < rt_->num_devices(); ++i) {
      if (rt_->device(i).type() == type) return i;
    }
    return -1;
  }

  internal::Runtime* rt_ = nullptr;
};

TEST_F(GpuCostPolicyTest, TheBusCalibrationMeasuresTheLinksToAndFromTheGpu) {
  BusModel bus = internal::load_or_measure_bus(*rt_, "m", "");  // measured, nothing written
  for (Link link : {Link::kHostToHost, Link::kHostToDevice, Link::kDeviceToHost}) {
    ASSERT_TRUE(bus.has(link)) << link_name(link);
    EXPECT_GT(bus.get(link).bytes_per_ns, 0) << link_name(link);
    EXPECT_GE(bus.get(link).latency_ns, 0) << link_name(link);
  }
}

TEST_F(GpuCostPolicyTest, AGpuTimingArrivesWithoutAWaitAndEmptiesTheQueue) {
  const int cpu = first(DeviceType::kCPU), gpu = first(DeviceType::kGPU);
  ASSERT_GE(cpu, 0);
  ASSERT_GE(gpu, 0);
  Tensor x;
  {
    DeviceScope scope("/GPU:0");
    x = constant(std::vector<float>(256, 1.f), {1, 256});
  }
  config::set_placement_policy(config::PlacementPolicy::kCost);
  internal::CostPolicy& policy = internal::cost_policy(*rt_);
  policy.reset_for_testing(nullptr);  // the steady clock, no history
  BusModel bus;
  bus.set(Link::kHostToDevice, LinkCost{5000, 10});
  bus.set(Link::kDeviceToHost, LinkCost{5000, 10});
  policy.model().set_bus(bus);
  // Estimates far above the kernel's real time, the CPU's further still: the Relu goes to
  // the GPU, whose queue then holds a second of estimated work.
  const CostKey key{OpId::kRelu, DType::kFloat32, footprint_bucket(1024)};
  for (int i = 0; i < CostModel::kRefreshSamples; ++i) {
    policy.model().record(key, gpu, 1024, 1e9);
    policy.model().record(key, cpu, 1024, 2e9);
  }
  Tensor y = relu(x);
  EXPECT_EQ(y.device(), kGpu0);
  EXPECT_GT(policy.model().queued_ns(gpu), 0.5e9);
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(256, 1.f));  // waits for the GPU
  // The next decision reads the Relu's events: its time joins the history, and the GPU has
  // run everything enqueued up to it.
  const Tensor* inputs[] = {&x};
  ASSERT_TRUE(policy.explain(OpId::kRelu, DType::kFloat32, inputs, 1024).ok());
  int64_t samples = 0;
  for (const CostRecord& r : policy.model().history()) {
    if (r.op == OpId::kRelu && r.device == gpu) samples = r.count;
  }
  EXPECT_EQ(samples, CostModel::kRefreshSamples + 1);
  EXPECT_EQ(policy.model().queued_ns(gpu), 0);
}

}  // namespace
}  // namespace mt
