#include "kernels/cpu/thread_pool.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/loops.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt::cpu {
namespace {

// Restores the suite's thread count when a test ends.
struct ThreadCount {
  explicit ThreadCount(int n) { set_intra_op_threads(n); }
  ~ThreadCount() { set_intra_op_threads(testutil::test_intra_op_threads()); }
};

// Runs parallel_for and returns the ranges it called, sorted, with the threads that ran them.
std::vector<std::pair<int64_t, int64_t>> ranges(int64_t n, int64_t grain,
                                                std::set<std::thread::id>* threads = nullptr) {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> out;
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mu);
    out.emplace_back(begin, end);
    if (threads) threads->insert(std::this_thread::get_id());
  });
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ThreadPoolTest, SplitsIntoDisjointRangesThatCoverEverything) {
  for (int threads : {1, 2, 7}) {
    ThreadCount count(threads);
    EXPECT_EQ(intra_op_threads(), threads);
    for (int64_t n : {int64_t{1}, int64_t{99}, int64_t{1000}, int64_t{100003}}) {
      auto got = ranges(n, 10);
      ASSERT_FALSE(got.empty());
      EXPECT_LE(static_cast<int>(got.size()), threads);
      EXPECT_EQ(got.front().first, 0);
      EXPECT_EQ(got.back().second, n);
      for (size_t i = 1; i < got.size(); ++i) EXPECT_EQ(got[i].first, got[i - 1].second);
    }
  }
}

TEST(ThreadPoolTest, RunsLargeWorkOnSeveralThreads) {
  ThreadCount count(7);
  std::set<std::thread::id> threads;
  std::atomic<int> running{0}, most{0};
  parallel_for(7000, 1000, [&](int64_t, int64_t) {
    int now = ++running;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running;
  });
  EXPECT_GT(most.load(), 1);  // blocks overlapped in time
  ranges(7000, 1000, &threads);
  EXPECT_GT(threads.size(), 1u);
}

TEST(ThreadPoolTest, RunsSmallWorkOnTheCallingThread) {
  ThreadCount count(7);
  std::set<std::thread::id> threads;
  EXPECT_EQ(ranges(100, 100, &threads).size(), 1u);
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(ThreadPoolTest, RunsNestedLoopsSeriallyInsideAWorker) {
  ThreadCount count(4);
  std::atomic<int64_t> total{0};
  parallel_for(4, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      parallel_for(1000, 1, [&](int64_t b, int64_t e) { total += e - b; });
    }
  });
  EXPECT_EQ(total.load(), 4000);
}

TEST(ThreadPoolTest, CallsRunningAtOnceShareTheThreads) {
  ThreadCount count(8);
  std::atomic<bool> first_running{false}, second_started{false};
  std::thread first([&] {
    // Every block of this call waits until the second call has begun, so the two overlap.
    parallel_for(8000, 1, [&](int64_t, int64_t) {
      first_running.store(true);
      while (!second_started.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
    });
  });
  while (!first_running.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> second;
  parallel_for(8000, 1, [&](int64_t begin, int64_t end) {  // its share: 8 threads / 2 calls
    second_started.store(true);
    std::lock_guard<std::mutex> lock(mu);
    second.emplace_back(begin, end);
  });
  first.join();
  std::sort(second.begin(), second.end());
  ASSERT_FALSE(second.empty());
  EXPECT_LE(second.size(), 4u);
  EXPECT_EQ(second.front().first, 0);
  EXPECT_EQ(second.back().second, 8000);
  for (size_t i = 1; i < second.size(); ++i) EXPECT_EQ(second[i].first, second[i - 1].second);
}

TEST(ThreadPoolTest, AForkedChildRunsKernelsOnItsOwnThread) {
  ThreadCount count(4);
  ranges(100000, 10);  // the parent's threads exist now
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    // Waiting for the parent's workers here would hang; the child's calls run inline.
    std::set<std::thread::id> threads;
    const bool inline_only =
        ranges(100000, 10, &threads).size() == 1 && threads.size() == 1 && intra_op_threads() == 1;
    _exit(inline_only ? 0 : 1);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      FAIL() << "the forked child hung in parallel_for";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(intra_op_threads(), 4);  // the parent keeps its threads
}

TEST(ThreadPoolTest, ZeroThreadsMeansOnePerHardwareThread) {
  ThreadCount count(0);
  EXPECT_EQ(intra_op_threads(),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

TEST(CpuIsaTest, NamesTheLevelInUseAndHasATableForEverySupportedLevel) {
  const char* name = cpu_isa_name(cpu_isa());
  EXPECT_STREQ(cpu_loops().isa, name);
  EXPECT_LE(cpu_isa(), best_supported_cpu_isa());
  for (int level = 0; level <= static_cast<int>(best_supported_cpu_isa()); ++level) {
    const CpuLoops* loops = cpu_loops_for(level);
    ASSERT_NE(loops, nullptr) << level;
    EXPECT_STREQ(loops->isa, cpu_isa_name(static_cast<CpuIsa>(level)));
  }
  EXPECT_EQ(cpu_loops_for(-1), nullptr);
  EXPECT_EQ(cpu_loops_for(3), nullptr);
}

}  // namespace
}  // namespace mt::cpu
