// Soak: 16 threads run random op chains (tests/runtime/op_chain.h) over two logical CPUs,
// then memory must be flat: nothing in use, every region free (release_unused_memory hands
// all of them back), and the process's resident memory not grown beyond a margin.
//
// CI runs 2 seconds, also under ThreadSanitizer (label concurrency); the long variant is
//   MT_SOAK_SECONDS=600 concurrency_test --gtest_filter='SoakTest.*'
// The test prints the duration, ops run and memory before and after.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/op_chain.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

constexpr int kThreads = 16;

// Returns the process's resident set in bytes (Linux), or 0 when unknown.
int64_t resident_bytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  const int n = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return n == 2 ? int64_t{resident} * sysconf(_SC_PAGESIZE) : 0;
}

// Runs chains on `kThreads` threads until `seconds` have passed; returns the ops run.
int64_t run_threads(const std::vector<std::string>& devices, double seconds, uint64_t first_seed) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  std::atomic<int64_t> ops{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      testing::Tally tally;
      for (uint64_t seed = first_seed + t * 1000003; std::chrono::steady_clock::now() < deadline;
           ++seed) {
        testing::OpChain chain(seed, devices);
        chain.generate(10, &tally);
      }
      ops += tally.ops;
    });
  }
  for (std::thread& t : threads) t.join();
  return ops.load();
}

class SoakTest : public testing::RuntimeTest {};

TEST_F(SoakTest, SixteenThreadsOfMixedOpsLeaveMemoryFlat) {
  const char* env = std::getenv("MT_SOAK_SECONDS");
  const double seconds = env != nullptr && *env != '\0' ? std::atof(env) : 2.0;
  split_cpu(2);
  const std::vector<std::string> devices = {cpu(0), cpu(1)};
  run_threads(devices, 0.3, 1);  // warm-up: thread caches, pools and the allocator's arenas
  const int64_t rss_before = resident_bytes();
  int64_t reserved_before = 0;
  for (const std::string& d : devices) reserved_before += config::get_memory_info(d).reserved;

  const int64_t ops = run_threads(devices, seconds, 7);

  int64_t reserved_after = 0;
  for (const std::string& d : devices) {
    const MemoryInfo info = config::get_memory_info(d);
    EXPECT_EQ(info.current, 0) << d;
    reserved_after += info.reserved;
    config::release_unused_memory(d);
    EXPECT_EQ(config::get_memory_info(d).reserved, 0) << d << ": a region still holds a block";
  }
  const int64_t rss_after = resident_bytes();
  std::cout << "[soak] " << kThreads << " threads, " << seconds << " s, " << ops
            << " ops on 2 logical CPUs; pools reserved " << reserved_before << " -> "
            << reserved_after << " bytes (0 after release_unused_memory), 0 in use; RSS "
            << rss_before / 1024 << " -> " << rss_after / 1024 << " KiB\n";
  EXPECT_GT(ops, 0);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // Beyond the pools (handed back above), a leak would show here; the sanitizers' own
  // quarantines make RSS meaningless under them.
  EXPECT_LT(rss_after - rss_before, int64_t{64} << 20);
#endif
}

}  // namespace
}  // namespace mt
