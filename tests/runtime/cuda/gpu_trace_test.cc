// mt::trace and placement reasons on real GPUs. Every test skips itself when no GPU is
// visible.
#include "runtime/trace/trace.h"
#include "tests/runtime/json_test_util.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::Json;

constexpr const char* kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr const char* kGpu0 = "/job:localhost/replica:0/task:0/device:GPU:0";

class GpuTraceTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty()) GTEST_SKIP() << "needs a GPU";
  }
  void TearDown() override {
    if (trace::is_recording()) trace::stop();
    debugging::set_log_placement_reasons(false);
    RuntimeTest::TearDown();
  }
};

TEST_F(GpuTraceTest, GpuOpsAndCopiesTakeDeviceTime) {
  Tensor host;
  {
    DeviceScope cpu("/CPU:0");
    host = constant(std::vector<float>(1 << 20, 1.f), {1024, 1024});
  }
  {
    trace::Recording recording;
    Tensor m = matmul(host, host);  // on GPU:0; its inputs copied from CPU:0
    EXPECT_EQ(m.device(), kGpu0);
  }
  std::optional<Json> trace = testing::parse_json(trace::to_json());
  ASSERT_TRUE(trace.has_value());
  int device_timed_ops = 0, copies = 0;
  for (const Json& e : (*trace)["traceEvents"].array) {
    if (e["cat"].string == "op" && e["name"].string == "MatMul") {
      EXPECT_EQ(e["args"]["device"].string, kGpu0);
      EXPECT_EQ(e["args"]["timing"].string, "device");
      EXPECT_GT(e["dur"].number, 0);
      ++device_timed_ops;
    }
    if (e["cat"].string == "copy") {
      EXPECT_EQ(e["args"]["source"].string, kCpu0);
      EXPECT_EQ(e["args"]["destination"].string, kGpu0);
      EXPECT_EQ(e["args"]["timing"].string, "device");
      EXPECT_GT(e["args"]["GB/s"].number, 0);
      ++copies;
    }
  }
  EXPECT_EQ(device_timed_ops, 1);
  EXPECT_EQ(copies, 2);
}

TEST_F(GpuTraceTest, IntegerMatMulWithoutGpuKernelSaysWhy) {
  debugging::set_log_device_placement(true);
  debugging::set_log_placement_reasons(true);
  DeviceScope gpu("/GPU:0");
  Tensor a = constant({{1, 2}}), b = constant({{3}, {4}});  // int32, 8 B each
  Tensor c = matmul(a, b);
  ASSERT_EQ(log().size(), 3u);
  EXPECT_EQ(log()[2], std::string("Executing op MatMul in device ") + kCpu0 +
                          " (no GPU kernel for MatMul on int32; asked for /device:GPU:0; input 0 "
                          "copied from GPU:0, 8 B; input 1 copied from GPU:0, 8 B)");
  debugging::PlacementExplanation e = debugging::explain_placement("MatMul", {a, b});
  EXPECT_EQ(e.reason, "no_kernel_fallback");
  EXPECT_EQ(e.device, kCpu0);
}

TEST_F(GpuTraceTest, GpuPoolSnapshotListsItsChunks) {
  Tensor a = constant(std::vector<float>(1 << 18, 1.f), {1 << 18});
  MemorySnapshot s = config::memory_snapshot("GPU:0");
  EXPECT_EQ(s.allocator, "GPU_0_bfc");
  ASSERT_FALSE(s.regions.empty());
  int64_t in_use = 0;
  for (const MemoryRegion& r : s.regions) {
    for (const MemoryChunk& c : r.chunks) in_use += c.state == "in_use" ? c.size : 0;
  }
  EXPECT_GE(in_use, 1 << 20);
}

}  // namespace
}  // namespace mt
