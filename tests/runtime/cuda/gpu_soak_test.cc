// Soak on two logical GPUs of GPU 0: 16 threads run random op chains whose leaves sit on
// CPU:0, GPU:0 and GPU:1, each chain replayed with its ops on both GPUs and compared with
// CPU:0. Afterwards memory must be flat: nothing in use, each GPU pool holding the bytes it
// held before, every region handed back by release_unused_memory, and the process's
// resident memory not grown after the warm-up beyond a margin (Note [Soak RSS after
// warm-up] in soak_memory.h). Skips without a GPU.
//
// 2 seconds by default; scripts/gpu-run.sh's `soak` step (or `soak-start`, then
// `soak-collect`) runs it for MT_SOAK_SECONDS. It takes 8 GiB of GPU 0 (two fixed 4 GiB
// pools) and CPU:0's pinned pool grows as the chains need.
#include <iostream>
#include <string>
#include <vector>

#include "tests/runtime/runtime_fixture.h"
#include "tests/runtime/soak.h"

namespace mt {
namespace {

using testing::MemorySeries;
using testing::run_soak_threads;

constexpr const char* kGpu0 = "/job:localhost/replica:0/task:0/device:GPU:0";
constexpr const char* kGpu1 = "/job:localhost/replica:0/task:0/device:GPU:1";

class GpuSoakTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
};

TEST_F(GpuSoakTest, SixteenThreadsOfMixedOpsOnTwoLogicalGpusLeaveMemoryFlat) {
  std::vector<PhysicalDevice> gpus = config::list_physical_devices("GPU");
  if (gpus.empty()) GTEST_SKIP() << "needs a GPU: none is visible";
  config::set_visible_devices(gpus[0], "GPU");
  config::set_logical_device_configuration(gpus[0], {{4096}, {4096}});
  const double seconds = testing::soak_seconds();
  const std::vector<std::string> devices = {cpu(0), kGpu0, kGpu1};
  const std::vector<std::string> gpu_devices = {kGpu0, kGpu1};
  run_soak_threads(devices, gpu_devices, 0.5, 1);  // warm-up: pools, caches, CUDA modules
  std::vector<int64_t> reserved_before;
  for (const std::string& d : devices) {
    reserved_before.push_back(config::get_memory_info(d).reserved);
  }

  MemorySeries series(devices, {cpu(0)}, seconds);
  const testing::SoakCounts counts = run_soak_threads(devices, gpu_devices, seconds, 7, &series);

  std::vector<int64_t> reserved_after;
  for (size_t i = 0; i < devices.size(); ++i) {
    const MemoryInfo info = config::get_memory_info(devices[i]);
    EXPECT_EQ(info.current, 0) << devices[i];
    reserved_after.push_back(info.reserved);
    if (i > 0) {  // the GPUs' pools have a fixed size
      EXPECT_EQ(info.reserved, reserved_before[i]) << devices[i];
    }
  }
  for (const std::string& d : devices) {
    config::release_unused_memory(d);
    EXPECT_EQ(config::get_memory_info(d).reserved, 0) << d << ": a region still holds a block";
  }
  const testing::RssGrowth growth = series.growth();
  const int64_t rss_released = testing::process_memory().rss_kib;
  std::cout << "[soak] GPU: " << testing::kSoakThreads << " threads, " << seconds << " s, "
            << counts.chains << " chains, " << counts.ops << " ops (" << counts.mismatches
            << " mismatches) on CPU:0 + 2 logical GPUs of GPU 0; reserved before -> after"
            << " (bytes): GPU:0 " << reserved_before[1] << " -> " << reserved_after[1] << ", GPU:1 "
            << reserved_before[2] << " -> " << reserved_after[2] << ", CPU:0 " << reserved_before[0]
            << " -> " << reserved_after[0]
            << "; 0 in use; 0 reserved after release_unused_memory; RSS "
            << series.samples().front().process.rss_kib << " -> "
            << series.samples().back().process.rss_kib << " KiB (" << rss_released
            << " after release_unused_memory)\n"
            << testing::growth_line(growth) << "\n"
            << testing::malloc_line("end, after release_unused_memory") << "\n";
  for (const std::string& r : counts.reports) std::cout << r << "\n";
  EXPECT_GT(counts.ops, 0);
  EXPECT_EQ(counts.mismatches, 0);
  // A leak shows as growth after the warm-up beyond the pools (Note [Soak RSS margin]).
  EXPECT_LT(growth.beyond_pools_after_warm_up_kib, testing::kRssMarginKib);
}

}  // namespace
}  // namespace mt
