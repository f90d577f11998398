// OOM storm on a virtual GPU of 256 MB: threads allocate past its limit at once. Every
// failure must be a ResourceExhausted with TensorFlow's OOM line, no tensor handed out may
// lose its values, nothing may deadlock, and afterwards the pool must be back to zero bytes
// in use and serve the largest request that failed. Skips without a GPU.
#include <algorithm>
#include <atomic>
#include <latch>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 40;
constexpr int64_t kLimitMb = 256;

class GpuOomStormTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
};

TEST_F(GpuOomStormTest, ThreadsAllocatingPastAVirtualGpuFailCleanly) {
  std::vector<PhysicalDevice> gpus = config::list_physical_devices("GPU");
  if (gpus.empty()) GTEST_SKIP() << "needs a GPU: none is visible";
  config::set_logical_device_configuration(gpus[0], {{kLimitMb}});
  std::atomic<int64_t> ok{0}, oom{0}, largest_failed{0};
  std::mutex mu;
  std::vector<std::string> wrong;
  std::latch start(kThreads);
  auto storm = [&](int seed) {
    std::mt19937 rng(seed);
    DeviceScope scope("/GPU:0");
    start.arrive_and_wait();
    for (int round = 0; round < kRounds; ++round) {
      std::vector<std::pair<Tensor, float>> held;
      for (int k = 0; k < 4; ++k) {
        const int64_t n = int64_t{1} << std::uniform_int_distribution<int>(18, 24)(rng);
        const float value = static_cast<float>(seed * 100 + k);
        try {
          held.emplace_back(fill({n}, value), value);
          ok++;
        } catch (const Error& e) {
          std::string what = e.what();
          std::string expected = absl::StrCat(
              "OOM when allocating tensor with shape[", n,
              "] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator "
              "GPU_0_bfc");
          if (e.code() != absl::StatusCode::kResourceExhausted ||
              what.substr(0, what.find('\n')) != expected) {
            std::lock_guard<std::mutex> lock(mu);
            wrong.push_back(what);
          }
          oom++;
          int64_t seen = largest_failed.load();
          while (n > seen && !largest_failed.compare_exchange_weak(seen, n)) {
          }
        }
      }
      // Every element still holds its value (read on the host: a check op would itself
      // allocate on the full device).
      for (const auto& [t, value] : held) {
        std::vector<float> got = t.to_vector<float>();
        if (std::any_of(got.begin(), got.end(), [v = value](float x) { return x != v; })) {
          std::lock_guard<std::mutex> lock(mu);
          wrong.push_back(absl::StrCat("a tensor of ", t.num_elements(), " lost its values"));
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(storm, t + 1);
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(wrong.empty()) << wrong.front();
  EXPECT_GT(ok.load(), 0);
  EXPECT_GT(oom.load(), 0) << "the storm never ran the pool out of memory";
  MemoryInfo after = config::get_memory_info("GPU:0");
  EXPECT_EQ(after.current, 0);
  EXPECT_LE(after.peak, kLimitMb << 20);
  EXPECT_LE(after.reserved, kLimitMb << 20);
  DeviceScope scope("/GPU:0");
  Tensor retry = fill({largest_failed.load()}, 3);  // a request that failed now succeeds
  EXPECT_EQ(reduce_max(retry).to_vector<float>()[0], 3.f);
}

}  // namespace
}  // namespace mt
