// The eager path on real GPUs. Every test skips itself when no GPU is visible.
#include <algorithm>
#include <sstream>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::expect_error;

constexpr const char* kGpu0 = "/job:localhost/replica:0/task:0/device:GPU:0";
constexpr const char* kGpu1 = "/job:localhost/replica:0/task:0/device:GPU:1";
constexpr int64_t kMiB = int64_t{1} << 20;

class GpuEagerTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    gpus_ = config::list_physical_devices("GPU");
    if (gpus_.empty()) GTEST_SKIP() << "needs a GPU: none is visible";
  }
  std::vector<PhysicalDevice> gpus_;
};

TEST_F(GpuEagerTest, GuideFirstExampleRunsOnGpu0) {
  debugging::set_log_device_placement(true);
  Tensor a = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Tensor b = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  Tensor c = matmul(a, b);
  std::ostringstream out;
  out << c;
  EXPECT_EQ(out.str(), "Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)");
  EXPECT_EQ(log(),
            (std::vector<std::string>{std::string("Executing op _EagerConst in device ") + kGpu0,
                                      std::string("Executing op _EagerConst in device ") + kGpu0,
                                      std::string("Executing op MatMul in device ") + kGpu0}));
}

TEST_F(GpuEagerTest, InputsOnCpuAreCopiedToTheGpu) {
  Tensor a, b;
  {
    DeviceScope cpu("/CPU:0");
    a = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    b = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  }
  EXPECT_EQ(a.device(), cpu(0));
  Tensor c = matmul(a, b);
  EXPECT_EQ(c.device(), kGpu0);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{22, 28, 49, 64}));
}

TEST_F(GpuEagerTest, CpuTensorFreedDuringItsCopyKeepsItsBytesUntilTheCopyEnds) {
  constexpr int64_t kElements = int64_t{1} << 22;  // 16 MiB: a DMA long enough to overlap
  Tensor on_gpu;
  {
    Tensor host;
    {
      DeviceScope cpu("/CPU:0");
      host = fill({kElements}, 3.0);
    }
    DeviceScope gpu("/GPU:0");
    on_gpu = identity(host);
  }  // the host tensor goes while its copy may still be running
  {
    DeviceScope cpu("/CPU:0");
    for (int i = 0; i < 4; ++i) Tensor reuse = fill({kElements}, -1.0);
  }
  std::vector<float> values = on_gpu.to_vector<float>();
  EXPECT_EQ(std::count(values.begin(), values.end(), 3.f), kElements);
}

TEST_F(GpuEagerTest, CastStaysOnTheGpuAndIntMatmulFallsBackToCpu) {
  debugging::set_log_device_placement(true);
  DeviceScope gpu("/GPU:0");
  Tensor x = constant({1.5f, -2.5f});
  EXPECT_EQ(x.device(), kGpu0);
  Tensor y = cast(x, DType::kInt32);
  EXPECT_EQ(y.device(), kGpu0);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{1, -2}));
  Tensor m = matmul(constant({{1, 2}}), constant({{3}, {4}}));
  EXPECT_EQ(m.device(), cpu(0));
  EXPECT_EQ(m.to_vector<int32_t>(), (std::vector<int32_t>{11}));
}

TEST_F(GpuEagerTest, HostPoolIsBackToZeroTheMomentTheLastTensorGoes) {
  {
    Tensor host;
    {
      DeviceScope cpu("/CPU:0");
      host = constant({1.f, 2.f, 3.f});  // pinned: its copy to the GPU frees it later
    }
    DeviceScope gpu("/GPU:0");
    Tensor on_gpu = identity(host);
    EXPECT_EQ(on_gpu.to_vector<float>(), (std::vector<float>{1, 2, 3}));  // the copy is done
  }
  EXPECT_EQ(config::get_memory_info("CPU:0").current, 0);  // no allocation polled it
  EXPECT_EQ(config::get_memory_info("GPU:0").current, 0);
}

TEST_F(GpuEagerTest, TwoVirtualGpusOnOneCardAreFullDevices) {
  config::set_logical_device_configuration(gpus_[0], {{1024}, {1024}});
  std::vector<LogicalDevice> logical = config::list_logical_devices("GPU");
  ASSERT_EQ(logical.size(), gpus_.size() + 1);
  std::vector<Tensor> c;
  for (int i = 0; i < 2; ++i) {
    DeviceScope scope(logical[i]);
    Tensor a = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    Tensor b = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    c.push_back(matmul(a, b));
    EXPECT_EQ(c.back().device(), i == 0 ? kGpu0 : kGpu1);  // the full name of /device:GPU:i
  }
  EXPECT_EQ(config::get_memory_info("GPU:0").limit, 1024 * kMiB);
  EXPECT_EQ(config::get_memory_info("GPU:1").limit, 1024 * kMiB);
  Tensor copied;
  {
    DeviceScope scope("/GPU:1");
    copied = identity(c[0]);  // GPU:0 -> GPU:1 on the same card
  }
  EXPECT_EQ(copied.device(), kGpu1);
  DeviceScope on_cpu("/CPU:0");
  Tensor sum = add_n({c[0], c[1]});
  std::ostringstream out;
  out << sum;
  EXPECT_EQ(out.str(), "Tensor(\n[[ 44.  56.]\n [ 98. 128.]], shape=(2, 2), dtype=float32)");
  EXPECT_EQ(copied.to_vector<float>(), (std::vector<float>{22, 28, 49, 64}));
}

TEST_F(GpuEagerTest, MemoryLimitHoldsAndOomRecovers) {
  config::set_logical_device_configuration(gpus_[0], {{256}});
  DeviceScope gpu("/GPU:0");
  Tensor held = zeros({192, kMiB / 4});  // 192 MiB of 256
  MemoryInfo before = config::get_memory_info("GPU:0");
  EXPECT_EQ(before.limit, 256 * kMiB);
  Error e = expect_error([] { zeros({128, kMiB / 4}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted);
  std::string what = e.what();
  EXPECT_EQ(what.substr(0, what.find('\n')),
            std::string("OOM when allocating tensor with shape[128,262144] and type float on ") +
                kGpu0 + " by allocator GPU_0_bfc");
  EXPECT_EQ(config::get_memory_info("GPU:0").current, before.current);
  held = Tensor();
  Tensor again = zeros({128, kMiB / 4});  // fits once the first block is freed
  EXPECT_EQ(again.to_vector<float>()[0], 0.f);
}

TEST_F(GpuEagerTest, GrowthStartsSmall) {
  config::set_memory_growth(gpus_[0], true);
  DeviceScope gpu("/GPU:0");
  Tensor t = ones({1024});
  MemoryInfo info = config::get_memory_info("GPU:0");
  EXPECT_LE(info.reserved, 2 * kMiB);
  EXPECT_EQ(t.to_vector<float>()[1023], 1.f);
  EXPECT_STREQ(expect_error([&] { config::set_memory_growth(gpus_[0], false); }).what(),
               "Physical devices cannot be modified after being initialized");
}

TEST_F(GpuEagerTest, DefaultModeReservesTheLimitAtFirstAllocation) {
  config::set_logical_device_configuration(gpus_[0], {{512}});
  DeviceScope gpu("/GPU:0");
  EXPECT_EQ(config::get_memory_info("GPU:0").reserved, 0);
  Tensor t = ones({16});
  EXPECT_EQ(config::get_memory_info("GPU:0").reserved, 512 * kMiB);
  t = Tensor();
  EXPECT_EQ(config::release_unused_memory("GPU:0"), 512 * kMiB);
  EXPECT_EQ(config::get_memory_info("GPU:0").reserved, 0);
}

TEST_F(GpuEagerTest, ElementwiseAndReductionsMatchTheCpu) {
  Tensor x = constant({{1.f, -2.f, 3.f}, {-4.f, 5.f, -6.f}});
  Tensor y = constant({10.f, 20.f, 30.f});
  Tensor r = reduce_sum(relu(x) * y + abs(x), {1});
  EXPECT_EQ(r.device(), kGpu0);
  std::vector<float> gpu = r.to_vector<float>();
  DeviceScope cpu_scope("/CPU:0");
  EXPECT_EQ(gpu, reduce_sum(relu(x) * y + abs(x), {1}).to_vector<float>());
}

TEST_F(GpuEagerTest, CopiesBetweenCards) {
  if (gpus_.size() < 2) GTEST_SKIP() << "needs two GPUs";
  Tensor a;
  {
    DeviceScope s("/GPU:0");
    a = constant({1.f, 2.f, 3.f});
  }
  DeviceScope s("/GPU:1");
  Tensor b = add_n({a, a});
  EXPECT_EQ(b.device(), kGpu1);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

}  // namespace
}  // namespace mt
