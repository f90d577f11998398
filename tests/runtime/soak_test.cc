// Soak: 16 threads run random op chains (tests/runtime/op_chain.h) over two logical CPUs,
// then memory must be flat: nothing in use, every region free (release_unused_memory hands
// all of them back), and the process's resident memory not grown beyond a margin.
//
// CI runs 2 seconds, also under ThreadSanitizer (label concurrency); the long variant is
//   MT_SOAK_SECONDS=600 concurrency_test --gtest_filter='SoakTest.*'
// The GPU variant is cuda/gpu_soak_test.cc. The test prints the duration, ops run and
// memory before and after.
#include "tests/runtime/soak.h"

#include <iostream>
#include <string>
#include <vector>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::resident_bytes;
using testing::run_soak_threads;

class SoakTest : public testing::RuntimeTest {};

TEST_F(SoakTest, SixteenThreadsOfMixedOpsLeaveMemoryFlat) {
  const double seconds = testing::soak_seconds();
  split_cpu(2);
  const std::vector<std::string> devices = {cpu(0), cpu(1)};
  run_soak_threads(devices, {}, 0.3, 1);  // warm-up: thread caches, pools, malloc's arenas
  const int64_t rss_before = resident_bytes();
  int64_t reserved_before = 0;
  for (const std::string& d : devices) reserved_before += config::get_memory_info(d).reserved;

  const int64_t ops = run_soak_threads(devices, {}, seconds, 7).ops;

  int64_t reserved_after = 0;
  for (const std::string& d : devices) {
    const MemoryInfo info = config::get_memory_info(d);
    EXPECT_EQ(info.current, 0) << d;
    reserved_after += info.reserved;
    config::release_unused_memory(d);
    EXPECT_EQ(config::get_memory_info(d).reserved, 0) << d << ": a region still holds a block";
  }
  const int64_t rss_after = resident_bytes();
  std::cout << "[soak] " << testing::kSoakThreads << " threads, " << seconds << " s, " << ops
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
