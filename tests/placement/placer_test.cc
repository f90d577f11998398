// The placer on fake device sets that include GPUs: it is pure logic, so no GPU is needed.
#include "placement/placer.h"

#include "gtest/gtest.h"

namespace mt {
namespace {

absl::Status fake_kernel(const KernelContext&) { return absl::OkStatus(); }

// A registry where MatMul and AddN run on CPU and GPU for float32, Cast only on the CPU,
// and RealDiv has no int32 kernel anywhere.
KernelRegistry make_registry() {
  KernelRegistry r;
  for (DeviceType t : {DeviceType::kCPU, DeviceType::kGPU}) {
    EXPECT_TRUE(r.add(OpId::kMatMul, t, DType::kFloat32, fake_kernel).ok());
    EXPECT_TRUE(r.add(OpId::kAddN, t, DType::kFloat32, fake_kernel).ok());
    EXPECT_TRUE(r.add(OpId::kRealDiv, t, DType::kFloat32, fake_kernel).ok());
  }
  EXPECT_TRUE(r.add(OpId::kCast, DeviceType::kCPU, DType::kFloat32, fake_kernel).ok());
  return r;
}

DeviceSpec spec(const char* name) { return parse_device_name(name).value(); }

class PlacerTest : public ::testing::Test {
 protected:
  // Deliberately listed out of priority order: CPU:0, GPU:1, CPU:1, GPU:0.
  std::vector<DeviceInfo> devices_{
      {DeviceType::kCPU, 0}, {DeviceType::kGPU, 1}, {DeviceType::kCPU, 1}, {DeviceType::kGPU, 0}};
  KernelRegistry registry_ = make_registry();
  Placer placer_{devices_, &registry_};

  // Returns the canonical device name the op lands on, or the error text.
  std::string place(OpId op, const char* requested, bool soft = false,
                    DType dtype = DType::kFloat32) {
    absl::StatusOr<Placement> p = placer_.place(op, dtype, spec(requested), soft);
    if (!p.ok()) return std::string(p.status().message());
    return placer_.device_name(p->device);
  }
  PlacementReason reason(OpId op, const char* requested, bool soft = false) {
    return placer_.place(op, DType::kFloat32, spec(requested), soft).value().reason;
  }
};

constexpr const char* kGpu0 = "/job:localhost/replica:0/task:0/device:GPU:0";
constexpr const char* kGpu1 = "/job:localhost/replica:0/task:0/device:GPU:1";
constexpr const char* kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr const char* kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";

TEST_F(PlacerTest, PrefersGpuWithLowestIdWhenNothingIsRequested) {
  EXPECT_EQ(place(OpId::kMatMul, ""), kGpu0);
  EXPECT_EQ(reason(OpId::kMatMul, ""), PlacementReason::kDefault);
}

TEST_F(PlacerTest, FallsBackToCpuForOpWithoutGpuKernel) {
  EXPECT_EQ(place(OpId::kCast, ""), kCpu0);
  EXPECT_EQ(reason(OpId::kCast, ""), PlacementReason::kDefault);
}

TEST_F(PlacerTest, HonoursFullySpecifiedRequest) {
  EXPECT_EQ(place(OpId::kMatMul, "/GPU:1"), kGpu1);
  EXPECT_EQ(place(OpId::kMatMul, "/job:localhost/replica:0/task:0/device:CPU:1"), kCpu1);
  EXPECT_EQ(reason(OpId::kMatMul, "/GPU:1"), PlacementReason::kScope);
}

TEST_F(PlacerTest, PartialRequestTakesBestMatchingDevice) {
  EXPECT_EQ(place(OpId::kMatMul, "GPU"), kGpu0);
  EXPECT_EQ(place(OpId::kMatMul, "/device:CPU:*"), kCpu0);
  EXPECT_EQ(place(OpId::kMatMul, "/job:localhost"), kGpu0);
  EXPECT_EQ(place(OpId::kMatMul, "/replica:0/task:0"), kGpu0);
}

TEST_F(PlacerTest, RequestedDeviceWithoutKernelFallsBackToBestWithKernel) {
  EXPECT_EQ(place(OpId::kCast, "/GPU:0"), kCpu0);
  EXPECT_EQ(place(OpId::kCast, "/GPU:1"), kCpu0);
  EXPECT_EQ(reason(OpId::kCast, "/GPU:0"), PlacementReason::kNoKernelFallback);
}

TEST_F(PlacerTest, FallbackWithinMatchingDevicesBeforeLeavingThem) {
  // "/CPU" matches CPU:0 and CPU:1; both have Cast, the lowest id wins.
  EXPECT_EQ(place(OpId::kCast, "/CPU"), kCpu0);
  EXPECT_EQ(place(OpId::kCast, "/CPU:1"), kCpu1);
}

TEST_F(PlacerTest, UnknownDeviceIsNotFoundWithAvailableDevices) {
  absl::StatusOr<Placement> p =
      placer_.place(OpId::kMatMul, DType::kFloat32, spec("/device:GPU:2"), false);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(p.status().message(),
            "/job:localhost/replica:0/task:0/device:GPU:2 unknown device. Available devices: "
            "/job:localhost/replica:0/task:0/device:CPU:0, "
            "/job:localhost/replica:0/task:0/device:GPU:1, "
            "/job:localhost/replica:0/task:0/device:CPU:1, "
            "/job:localhost/replica:0/task:0/device:GPU:0.");
}

TEST_F(PlacerTest, UnknownJobOrTypeIsUnknownDevice) {
  EXPECT_EQ(place(OpId::kMatMul, "/job:worker/device:GPU:0"),
            "/job:worker/replica:0/task:0/device:GPU:0 unknown device. Available devices: " +
                std::string(kCpu0) + ", " + kGpu1 + ", " + kCpu1 + ", " + kGpu0 + ".");
  EXPECT_EQ(place(OpId::kMatMul, "/device:TPU:0").substr(0, 57),
            "/job:localhost/replica:0/task:0/device:TPU:0 unknown devi");
}

TEST_F(PlacerTest, SoftPlacementRunsUnknownDeviceOnBestExisting) {
  EXPECT_EQ(place(OpId::kMatMul, "/device:GPU:2", /*soft=*/true), kGpu0);
  EXPECT_EQ(reason(OpId::kMatMul, "/device:GPU:2", true), PlacementReason::kSoftFallback);
  EXPECT_EQ(place(OpId::kCast, "/device:GPU:7", /*soft=*/true), kCpu0);
}

TEST_F(PlacerTest, NoKernelForDtypeAnywhereIsInvalidArgument) {
  absl::StatusOr<Placement> p = placer_.place(OpId::kRealDiv, DType::kInt32, DeviceSpec{}, false);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "[RealDiv] no kernel for dtype int32 on any device; supported: float32");
}

TEST_F(PlacerTest, NestedScopesMergeBeforePlacement) {
  DeviceSpec outer = spec("/job:localhost/device:GPU:1");
  DeviceSpec inner = spec("/CPU");
  absl::StatusOr<Placement> p =
      placer_.place(OpId::kMatMul, DType::kFloat32, merge(outer, inner), false);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(placer_.device_name(p->device), kCpu0);  // the GPU id does not carry over
  p = placer_.place(OpId::kMatMul, DType::kFloat32, merge(spec("/CPU:1"), spec("/replica:0")),
                    false);
  EXPECT_EQ(placer_.device_name(p->device), kCpu1);
}

TEST_F(PlacerTest, CpuOnlyDeviceSetPlacesEverythingOnCpu) {
  std::vector<DeviceInfo> cpus{{DeviceType::kCPU, 0}, {DeviceType::kCPU, 1}};
  Placer placer(cpus, &registry_);
  absl::StatusOr<Placement> p = placer.place(OpId::kMatMul, DType::kFloat32, DeviceSpec{}, false);
  EXPECT_EQ(placer.device_name(p->device), kCpu0);
  p = placer.place(OpId::kMatMul, DType::kFloat32, spec("/GPU:0"), false);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  p = placer.place(OpId::kMatMul, DType::kFloat32, spec("/GPU:0"), true);
  EXPECT_EQ(placer.device_name(p->device), kCpu0);
}

TEST_F(PlacerTest, ReturnsTheRegisteredKernel) {
  absl::StatusOr<Placement> p = placer_.place(OpId::kAddN, DType::kFloat32, DeviceSpec{}, false);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kernel, &fake_kernel);
}

TEST(PlacementReasonTest, EveryReasonHasText) {
  EXPECT_STREQ(placement_reason_text(PlacementReason::kScope), "requested by device scope");
  EXPECT_STRNE(placement_reason_text(PlacementReason::kSoftFallback), "unknown");
}

}  // namespace
}  // namespace mt
