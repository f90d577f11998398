// mt::config: device lists, configuration before and after initialisation, memory info.
#include <thread>

#include "kernels/cpu/thread_pool.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::expect_error;

class ConfigTest : public testing::RuntimeTest {};

TEST_F(ConfigTest, ListsPhysicalDevicesWithoutInitialising) {
  std::vector<PhysicalDevice> cpus = config::list_physical_devices("CPU");
  ASSERT_EQ(cpus.size(), 1u);
  EXPECT_EQ(cpus[0].name, "/physical_device:CPU:0");
  EXPECT_EQ(cpus[0].device_type, "CPU");
  EXPECT_TRUE(config::list_physical_devices("TPU").empty());
  EXPECT_EQ(internal::Context::get().runtime_if_initialized(), nullptr);
  split_cpu(2);  // still allowed: nothing initialised the runtime
  EXPECT_EQ(config::list_logical_devices().size(), 2u);
}

TEST_F(ConfigTest, ListsLogicalDevicesAfterSplit) {
  split_cpu(4);
  std::vector<LogicalDevice> devices = config::list_logical_devices("CPU");
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(devices[3].name, "/device:CPU:3");  // TensorFlow 2's LogicalDevice.name
  EXPECT_EQ(devices[3].device_type, "CPU");
  EXPECT_TRUE(config::list_logical_devices("GPU").empty());
}

TEST_F(ConfigTest, VirtualDevicesCannotChangeAfterInitialisation) {
  split_cpu(2);
  constant(1.f);  // initialises
  split_cpu(2);   // the same value again is fine
  Error e = expect_error([] { split_cpu(3); });
  EXPECT_EQ(e.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_STREQ(e.what(), "Virtual devices cannot be modified after being initialized");
}

TEST_F(ConfigTest, VisibleDevicesCannotChangeAfterInitialisation) {
  std::vector<PhysicalDevice> cpus = config::list_physical_devices("CPU");
  config::list_logical_devices();
  config::set_visible_devices(cpus, "CPU");                           // unchanged: fine
  config::set_visible_devices(std::vector<PhysicalDevice>{}, "GPU");  // no GPU to hide: fine
  Error e = expect_error([] { config::set_visible_devices(std::vector<PhysicalDevice>{}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "[set_visible_devices] the CPU must stay visible");
}

TEST_F(ConfigTest, RejectsUnknownPhysicalDeviceAndType) {
  PhysicalDevice gpu{"/physical_device:GPU:7", "GPU"};
  Error e = expect_error([&] { config::set_memory_growth(gpu, true); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(
      e.what(),
      "[set_memory_growth] unknown physical device '/physical_device:GPU:7' of type 'GPU'");
  e = expect_error([] { config::set_visible_devices(config::list_physical_devices(), "TPU"); });
  EXPECT_STREQ(e.what(), "[set_visible_devices] unknown device type 'TPU': expected CPU or GPU");
}

TEST_F(ConfigTest, MemoryGrowthIsForGpusOnly) {
  Error e =
      expect_error([] { config::set_memory_growth(config::list_physical_devices()[0], true); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(),
               "[set_memory_growth] cannot set memory growth on non-GPU device "
               "'/physical_device:CPU:0'");
}

TEST_F(ConfigTest, RejectsNonPositiveMemoryLimit) {
  Error e = expect_error([] { split_cpu(1, 0); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(),
               "[set_logical_device_configuration] memory_limit_mb must be positive, got 0");
}

TEST_F(ConfigTest, GpuOptionsValidateFraction) {
  Error e = expect_error([] { config::set_gpu_options(GPUOptions{1.5}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(),
               "[set_gpu_options] per_process_gpu_memory_fraction must be in (0, 1], got 1.5");
  config::set_gpu_options(GPUOptions{0.4});
  constant(1.f);
  config::set_gpu_options(GPUOptions{0.4});
  e = expect_error([] { config::set_gpu_options(GPUOptions{0.5}); });
  EXPECT_STREQ(e.what(), "GPU options cannot be modified after being initialized");
}

TEST_F(ConfigTest, SoftPlacementIsOnByDefaultAndToggles) {  // TensorFlow 2's default
  EXPECT_TRUE(config::get_soft_device_placement());
  config::set_soft_device_placement(false);
  EXPECT_FALSE(config::get_soft_device_placement());
  config::set_soft_device_placement(true);
  EXPECT_TRUE(config::get_soft_device_placement());
}

TEST_F(ConfigTest, AnUnknownDeviceRunsOnTheBestDeviceByDefault) {
  Tensor t;
  {
    DeviceScope scope("/GPU:0");  // the tests hide the GPUs
    t = constant({1.f}) + constant({2.f});
  }
  EXPECT_EQ(t.device(), cpu(0));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{3}));
}

TEST_F(ConfigTest, MemoryInfoTracksTensors) {
  split_cpu(2);
  MemoryInfo before = config::get_memory_info("CPU:1");
  EXPECT_EQ(before.current, 0);
  {
    DeviceScope s("/CPU:1");
    Tensor t = zeros({1024});  // 4 KiB
    MemoryInfo during = config::get_memory_info("/job:localhost/replica:0/task:0/device:CPU:1");
    EXPECT_EQ(during.current, 4096);
    EXPECT_EQ(during.peak, 4096);
    EXPECT_EQ(during.num_allocs, 1);
  }
  MemoryInfo after = config::get_memory_info("CPU:1");
  EXPECT_EQ(after.current, 0);
  EXPECT_EQ(after.peak, 4096);
  config::reset_memory_stats("CPU:1");
  EXPECT_EQ(config::get_memory_info("CPU:1").peak, 0);
  EXPECT_GE(config::release_unused_memory("CPU:1"), 0);
}

TEST_F(ConfigTest, MemoryInfoOfUnknownDeviceIsNotFound) {
  Error e = expect_error([] { config::get_memory_info("GPU:0"); });
  EXPECT_EQ(e.code(), absl::StatusCode::kNotFound);
  EXPECT_STREQ(e.what(), "/job:localhost/replica:0/task:0/device:GPU:0 unknown device.");
}

TEST_F(ConfigTest, MemoryInfoNeedsExactlyOneDevice) {
  split_cpu(2);
  Error e = expect_error([] { config::get_memory_info("CPU"); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(e.what(), "Device name 'CPU' must name exactly one device, like 'GPU:0'");
}

TEST_F(ConfigTest, IntraOpThreadsApplyAtInitialisation) {
  EXPECT_EQ(config::threading::get_intra_op_parallelism_threads(), 0);
  config::threading::set_intra_op_parallelism_threads(3);
  EXPECT_EQ(config::threading::get_intra_op_parallelism_threads(), 3);
  constant(1.f);  // initialises the runtime, which sizes the pool
  EXPECT_EQ(cpu::intra_op_threads(), 3);
  ASSERT_TRUE(internal::Context::get().reset_for_testing().ok());
  constant(1.f);  // the default again: one thread per hardware thread
  EXPECT_EQ(cpu::intra_op_threads(),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

TEST_F(ConfigTest, NamesTheCpuIsaInUse) {
  const std::string isa = config::threading::get_cpu_isa();
  EXPECT_TRUE(isa == "baseline" || isa == "avx2" || isa == "avx512") << isa;
}

}  // namespace
}  // namespace mt
