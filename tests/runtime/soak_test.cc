// Soak: 16 threads run random op chains (tests/runtime/op_chain.h) over two logical CPUs,
// then memory must be flat: nothing in use, every region free (release_unused_memory hands
// all of them back), and the process's resident memory not grown after the warm-up beyond
// a margin (Note [Soak RSS after warm-up] in soak_memory.h).
//
// CI runs 2 seconds, also under ThreadSanitizer (label concurrency); the long variant is
//   MT_SOAK_SECONDS=600 concurrency_test --gtest_filter='SoakTest.*'
// The GPU variant is cuda/gpu_soak_test.cc. The test prints the duration, ops run, memory
// every 1/20 of the run ("[soak] t=... rss_kib=..."), malloc's statistics and the growth.
#include "tests/runtime/soak.h"

#include <iostream>
#include <string>
#include <vector>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::MemorySeries;
using testing::run_soak_threads;

class SoakTest : public testing::RuntimeTest {};

TEST_F(SoakTest, SixteenThreadsOfMixedOpsLeaveMemoryFlat) {
  const double seconds = testing::soak_seconds();
  split_cpu(2);
  const std::vector<std::string> devices = {cpu(0), cpu(1)};
  run_soak_threads(devices, {}, 0.3, 1);  // warm-up: thread caches, pools, malloc's arenas
  MemorySeries series(devices, devices, seconds);
  const int64_t ops = run_soak_threads(devices, {}, seconds, 7, &series).ops;

  const int64_t reserved_after = series.samples().back().reserved;
  for (const std::string& d : devices) {
    EXPECT_EQ(config::get_memory_info(d).current, 0) << d;
    config::release_unused_memory(d);
    EXPECT_EQ(config::get_memory_info(d).reserved, 0) << d << ": a region still holds a block";
  }
  const testing::RssGrowth growth = series.growth();
  const int64_t rss_released = testing::process_memory().rss_kib;
  std::cout << "[soak] " << testing::kSoakThreads << " threads, " << seconds << " s, " << ops
            << " ops on 2 logical CPUs; pools reserved " << series.samples().front().reserved
            << " -> " << reserved_after << " bytes (0 after release_unused_memory), 0 in use; RSS "
            << series.samples().front().process.rss_kib << " -> "
            << series.samples().back().process.rss_kib << " KiB (" << rss_released
            << " after release_unused_memory)\n"
            << testing::growth_line(growth) << "\n"
            << testing::malloc_line("end, after release_unused_memory") << "\n";
  EXPECT_GT(ops, 0);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // A leak shows as growth after the warm-up beyond the pools; the sanitizers' own
  // quarantines make RSS meaningless under them. The margin is Note [Soak RSS margin].
  EXPECT_LT(growth.beyond_pools_after_warm_up_kib, testing::kRssMarginKib);
#endif
}

}  // namespace
}  // namespace mt
