// OOM storm: threads allocate past a limited logical CPU at once. Each failure must be a
// ResourceExhausted with TensorFlow's OOM message, no tensor that was handed out may lose
// its values, nothing may deadlock, and afterwards the pool must be back to exactly zero
// bytes in use and serve the requests that failed. A second storm runs while the host
// sub-allocator refuses regions at random (core/fault_injection.h).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <latch>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/fault_injection.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::expect_error;

constexpr int kThreads = 8;
constexpr int64_t kLimitMb = 4;
constexpr int64_t kLimit = kLimitMb << 20;
constexpr int kHeld = 8;  // tensors a thread holds at once

int rounds() {
  const char* env = std::getenv("MT_STORM_ROUNDS");
  return env != nullptr ? std::atoi(env) : 300;
}

// Returns the first line of an OOM message for a float tensor of `n` elements on CPU:1.
std::string oom_line(int64_t n) {
  return absl::StrCat("OOM when allocating tensor with shape[", n,
                      "] and type float on /job:localhost/replica:0/task:0/device:CPU:1 by "
                      "allocator CPU_1_bfc");
}

// What the storm saw, summed over threads.
struct Tally {
  std::atomic<int64_t> ok{0}, oom{0}, largest_failed{0};
  std::mutex mu;
  std::vector<std::string> wrong;  // unexpected outcomes, first few

  void bad(std::string what) {
    std::lock_guard<std::mutex> lock(mu);
    if (wrong.size() < 20) wrong.push_back(std::move(what));
  }
};

// One thread of the storm: allocates on CPU:1 (fills, op outputs, copies from CPU:0),
// holding up to kHeld tensors, then checks and drops them, round after round.
void storm(int seed, const Tensor& source, std::latch& start, Tally& tally) {
  static const int64_t kSizes[] = {64, 1024, 4096, 16384, 65536, 131072, 262144};
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  DeviceScope scope("/CPU:1");
  start.arrive_and_wait();
  for (int round = 0, n = rounds(); round < n; ++round) {
    std::vector<std::pair<Tensor, float>> held;
    for (int k = 0; k < kHeld; ++k) {
      int64_t size = kSizes[uniform(0, 6)];
      int action = uniform(0, 3);
      if (action == 1 && !held.empty()) size = held.back().first.num_elements();
      if (action == 2) size = source.num_elements();
      try {
        float value = static_cast<float>(seed * 1000 + k);
        if (action == 1 && !held.empty()) {
          value = 2 * held.back().second;
          held.emplace_back(held.back().first + held.back().first, value);  // output alloc
        } else if (action == 2) {
          held.emplace_back(identity(source), 7.f);  // copy from CPU:0
        } else {
          held.emplace_back(fill({size}, value), value);
        }
        tally.ok++;
      } catch (const Error& e) {
        std::string what = e.what();
        if (e.code() != absl::StatusCode::kResourceExhausted ||
            what.substr(0, what.find('\n')) != oom_line(size)) {
          tally.bad(absl::StrCat("size ", size, ": ", what));
        }
        tally.oom++;
        int64_t seen = tally.largest_failed.load();
        while (size > seen && !tally.largest_failed.compare_exchange_weak(seen, size)) {
        }
      }
    }
    for (const auto& [t, value] : held) {
      std::vector<float> got = t.to_vector<float>();
      if (t.device() != "/job:localhost/replica:0/task:0/device:CPU:1" ||
          std::any_of(got.begin(), got.end(), [v = value](float x) { return x != v; })) {
        tally.bad(absl::StrCat("a tensor of ", got.size(), " elements lost its values"));
      }
    }
  }
}

class OomStormTest : public testing::RuntimeTest {};

TEST_F(OomStormTest, ThreadsAllocatingPastALimitedPoolFailCleanlyAndLoseNothing) {
  split_cpu(2, kLimitMb);
  Tensor source;
  {
    DeviceScope on_cpu0("/CPU:0");
    source = fill({65536}, 7);
  }
  const int64_t cpu0_in_use = config::get_memory_info("CPU:0").current;
  Tally tally;
  std::latch start(kThreads);
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { storm(t + 1, source, start, tally); });
    }
    for (std::thread& t : threads) t.join();
  }
  RecordProperty("allocations", static_cast<int>(tally.ok.load()));
  RecordProperty("ooms", static_cast<int>(tally.oom.load()));
  EXPECT_TRUE(tally.wrong.empty()) << tally.wrong.front();
  EXPECT_GT(tally.ok.load(), 0);
  EXPECT_GT(tally.oom.load(), 0) << "the storm never ran the pool out of memory";
  MemoryInfo after = config::get_memory_info("CPU:1");
  EXPECT_EQ(after.current, 0);
  EXPECT_LE(after.peak, kLimit);
  EXPECT_LE(after.reserved, kLimit);
  EXPECT_EQ(config::get_memory_info("CPU:0").current, cpu0_in_use);

  DeviceScope on_cpu1("/CPU:1");
  {
    Tensor retry = fill({tally.largest_failed.load()}, 3);  // a request that failed
    EXPECT_EQ(retry.to_vector<float>().back(), 3);
    EXPECT_GT(config::get_memory_info("CPU:1").current, 0);
  }
  EXPECT_EQ(config::get_memory_info("CPU:1").current, 0);
}

TEST_F(OomStormTest, AStormWhileTheDriverRefusesAtRandomFailsCleanlyAndLosesNothing) {
  split_cpu(2, kLimitMb);
  Tensor source;
  {
    DeviceScope on_cpu0("/CPU:0");
    source = fill({65536}, 7);
  }
  Tally tally;
  std::latch start(kThreads);
  std::atomic<bool> done{false};
  int64_t injected = 0;
  using internal::FaultSite;
  int64_t armed = 4;
  internal::inject_fault(FaultSite::kHostAlloc, 1, armed);  // the pool's first regions
  std::thread faults([&] {  // re-arms faults once the last ones fired; frees regions
    std::mt19937 rng(99);
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      config::release_unused_memory("CPU:1");
      if (internal::faults_injected(FaultSite::kHostAlloc) < armed) continue;
      injected += armed;
      internal::clear_faults();
      armed = std::uniform_int_distribution<int>(1, 8)(rng);
      internal::inject_fault(FaultSite::kHostAlloc, std::uniform_int_distribution<int>(1, 3)(rng),
                             armed);
    }
    injected += internal::faults_injected(FaultSite::kHostAlloc);
    internal::clear_faults();
  });
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { storm(t + 1, source, start, tally); });
    }
    for (std::thread& t : threads) t.join();
  }
  done = true;
  faults.join();
  RecordProperty("faults_injected", static_cast<int>(injected));
  EXPECT_TRUE(tally.wrong.empty()) << tally.wrong.front();
  EXPECT_GT(injected, 0);
  EXPECT_EQ(config::get_memory_info("CPU:1").current, 0);
  EXPECT_LE(config::get_memory_info("CPU:1").reserved, kLimit);
  DeviceScope on_cpu1("/CPU:1");
  EXPECT_EQ(fill({262144}, 3).to_vector<float>().back(), 3);  // a quarter of the pool: fits
}

TEST_F(OomStormTest, ThePoolFillsToItsLimitAgainAfterTheStorm) {
  split_cpu(2, kLimitMb);
  Tensor source;
  {
    DeviceScope on_cpu0("/CPU:0");
    source = fill({65536}, 7);
  }
  Tally tally;
  std::latch start(kThreads);
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { storm(100 + t, source, start, tally); });
    }
    for (std::thread& t : threads) t.join();
  }
  EXPECT_TRUE(tally.wrong.empty()) << tally.wrong.front();
  // Blocks parked in the per-thread and shared caches during the storm may have shaped
  // where later blocks went; release_unused_memory returns them and the empty regions, so
  // that the pool can be filled to exactly its limit.
  EXPECT_GT(config::release_unused_memory("CPU:1"), 0);
  DeviceScope on_cpu1("/CPU:1");
  std::vector<Tensor> blocks;
  for (int i = 0; i < kLimitMb; ++i) blocks.push_back(fill({262144}, i));  // 1 MiB each
  EXPECT_EQ(config::get_memory_info("CPU:1").current, kLimit);
  Error e = expect_error([] { fill({1}, 0); });
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted);
  for (int i = 0; i < kLimitMb; ++i) EXPECT_EQ(blocks[i].to_vector<float>().front(), i);
  blocks.clear();
  EXPECT_EQ(config::get_memory_info("CPU:1").current, 0);
}

TEST_F(OomStormTest, FreedMemoryServesARequestLargerThanAnyRegion) {
  split_cpu(2, kLimitMb);
  DeviceScope on_cpu1("/CPU:1");
  fill({1024}, 1);  // the first region: 2 MiB, now free
  // 3 MiB fit in the 4 MiB limit with nothing in use.
  Tensor big = fill({3 << 18}, 2);
  EXPECT_EQ(big.to_vector<float>().back(), 2);
}

}  // namespace
}  // namespace mt
