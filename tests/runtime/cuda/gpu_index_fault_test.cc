// Indices out of range on a GPU (Note [GPU index faults] in kernels/cuda/index_fault.h):
// GatherV2 and UnsortedSegmentSum write what TensorFlow's GPU kernels write and return at
// once, and the next wait for the device (a host read, a synchronize) reports the CPU's
// InvalidArgument, once; per logical device, from eager ops and graph replays alike.
// Every test skips itself when no GPU is visible.
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/eager/context.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

constexpr char kReported[] = "; reported at the next synchronisation)";

std::string on_gpu(int i) {
  return "(on /job:localhost/replica:0/task:0/device:GPU:" + std::to_string(i) + kReported;
}

class GpuIndexFaultTest : public RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  // Small integer inputs would stay on the CPU under TensorFlow's small-op rule; these
  // tests need the kernels on the GPU (read when the runtime initialises).
  void SetUp() override {
    setenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING", "0", 1);
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty()) {
      GTEST_SKIP() << "needs a GPU: none is visible";
    }
  }
  void TearDown() override {
    RuntimeTest::TearDown();
    unsetenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING");
  }
};

std::vector<float> host(const Tensor& t) { return t.to_vector<float>(); }

TEST_F(GpuIndexFaultTest, GatherNamesTheBadIndexByItsPositionInTheIndices) {
  DeviceScope gpu("/GPU:0");
  const Tensor out = gather(constant({1.f, 2.f, 3.f}), constant({{0, 1}, {5, 2}}));
  expect([&] { host(out); }, absl::StatusCode::kInvalidArgument,
         "[GatherV2] indices[1,0] = 5 is not in [0, 3) " + on_gpu(0));
  EXPECT_EQ(host(out), (std::vector<float>{1, 2, 0, 3}));
}

TEST_F(GpuIndexFaultTest, SegmentSumReportsAnIdPastTheLastSegmentAndDropsNegativeOnes) {
  DeviceScope gpu("/GPU:0");
  const Tensor data = constant({{1.f, 1.f}, {2.f, 2.f}, {3.f, 3.f}, {4.f, 4.f}});
  const Tensor dropped = unsorted_segment_sum(data, constant({0, -1, 1, -1}), 3);
  EXPECT_EQ(host(dropped), (std::vector<float>{1, 1, 3, 3, 0, 0}));  // negative: no error
  const Tensor out = unsorted_segment_sum(data, constant({0, 5, -1, 1}), 3);
  expect([&] { host(out); }, absl::StatusCode::kInvalidArgument,
         "[UnsortedSegmentSum] segment_ids[1] = 5 is out of range [0, 3) " + on_gpu(0));
  EXPECT_EQ(host(out), (std::vector<float>{1, 1, 4, 4, 0, 0}));
}

// With nothing to write the kernels still check the indices, as the CPU does; the empty
// output has no bytes to read, so the next wait for the device reports it.
TEST_F(GpuIndexFaultTest, OpsWithEmptyOutputsStillCheckTheirIndices) {
  DeviceScope gpu("/GPU:0");
  unsorted_segment_sum(constant({1.f, 2.f}), constant({0, 1}), 0);
  const Tensor ok = constant({1.f});
  expect([&] { host(ok); }, absl::StatusCode::kInvalidArgument,
         "[UnsortedSegmentSum] segment_ids[0] = 0 is out of range [0, 0) " + on_gpu(0));
  gather(zeros({3, 0}), constant({1, 4}));
  expect([&] { host(ok); }, absl::StatusCode::kInvalidArgument,
         "[GatherV2] indices[1] = 4 is not in [0, 3) " + on_gpu(0));
  EXPECT_EQ(host(ok), (std::vector<float>{1}));
}

// The first bad index in stream order is reported, once; a bad index after the report is
// reported at the wait after it.
TEST_F(GpuIndexFaultTest, EachWaitReportsTheFirstBadIndexSinceTheLast) {
  DeviceScope gpu("/GPU:0");
  const Tensor params = constant({1.f, 2.f, 3.f});
  gather(params, constant({7}));
  const Tensor second = gather(params, constant({0, 9}));
  expect([&] { host(second); }, absl::StatusCode::kInvalidArgument,
         "[GatherV2] indices[0] = 7 is not in [0, 3) " + on_gpu(0));
  EXPECT_EQ(host(second), (std::vector<float>{1, 0}));
  const Tensor third = gather(params, constant({8, 1}));
  expect([&] { host(third); }, absl::StatusCode::kInvalidArgument,
         "[GatherV2] indices[0] = 8 is not in [0, 3) " + on_gpu(0));
}

TEST_F(GpuIndexFaultTest, SynchronizeReportsTheBadIndex) {
  internal::Runtime* rt = internal::value_or_throw(internal::Context::get().runtime());
  internal::Device& gpu = rt->device(1);
  ASSERT_EQ(gpu.type(), DeviceType::kGPU);
  DeviceScope scope("/GPU:0");
  gather(constant({1.f, 2.f, 3.f}), constant({3}));
  const absl::Status reported = gpu.synchronize();
  EXPECT_EQ(reported.code(), absl::StatusCode::kInvalidArgument) << reported;
  EXPECT_EQ(reported.message(), "[GatherV2] indices[0] = 3 is not in [0, 3) " + on_gpu(0));
  EXPECT_TRUE(gpu.synchronize().ok());
}

TEST_F(GpuIndexFaultTest, AReplayedGraphReportsItsBadIndex) {
  DeviceScope gpu("/GPU:0");
  Function f([](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    return {add(gather(a[0], a[1]), a[0])};
  });
  const Tensor params = constant({1.f, 2.f, 3.f});
  EXPECT_EQ(host(f({params, constant({2, 0, 1})})[0]), (std::vector<float>{4, 3, 5}));
  EXPECT_EQ(host(f({params, constant({1, 1, 1})})[0]), (std::vector<float>{3, 4, 5}));
  const Tensor out = f({params, constant({0, 6, 1})})[0];
  EXPECT_EQ(f.replay_kind(), "graph");
  expect([&] { host(out); }, absl::StatusCode::kInvalidArgument,
         "[GatherV2] indices[1] = 6 is not in [0, 3) " + on_gpu(0));
  EXPECT_EQ(host(out), (std::vector<float>{2, 2, 5}));
}

// Two logical GPUs on one card: each has its own record.
TEST_F(GpuIndexFaultTest, EachLogicalGpuReportsItsOwnBadIndex) {
  config::set_logical_device_configuration(config::list_physical_devices("GPU")[0],
                                           {{.memory_limit_mb = 1024}, {.memory_limit_mb = 1024}});
  Tensor bad, good;
  {
    DeviceScope gpu1("/GPU:1");
    bad = gather(constant({1.f, 2.f}), constant({2}));
  }
  {
    DeviceScope gpu0("/GPU:0");
    good = gather(constant({1.f, 2.f}), constant({1}));
  }
  EXPECT_EQ(host(good), (std::vector<float>{2}));
  expect([&] { host(bad); }, absl::StatusCode::kInvalidArgument,
         "[GatherV2] indices[0] = 2 is not in [0, 2) " + on_gpu(1));
}

}  // namespace
}  // namespace mt::testing
