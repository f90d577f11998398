// The soak tests' memory series (soak_memory.h): which samples it judges, and that what it
// reads of the process does see memory a leak would hold.
#include "tests/runtime/soak_memory.h"

#include <vector>

#include "gtest/gtest.h"

namespace mt::testing {
namespace {

SoakSample at(double seconds, bool running, int64_t rss_kib, int64_t host_resident_kib) {
  SoakSample s;
  s.seconds = seconds;
  s.running = running;
  s.process.rss_kib = rss_kib;
  s.host_resident = host_resident_kib * 1024;
  return s;
}

TEST(MemorySeriesTest, JudgesGrowthFromTheWarmUpSampleToTheLastRunningOne) {
  MemorySeries series({}, {}, 100);
  series.record(at(0, false, 1000, 0));
  series.record(at(10, true, 5000, 0));
  series.record(at(20, true, 6000, 100));  // the first at 20% of the run
  series.record(at(60, true, 6500, 600));
  series.record(at(95, true, 9000, 1100));
  series.record(at(100, false, 7000, 1100));  // the threads' stacks are gone

  const RssGrowth g = series.growth();
  EXPECT_EQ(g.from_start_kib, 6000);
  EXPECT_EQ(g.after_warm_up_kib, 3000);
  EXPECT_EQ(g.host_pools_after_warm_up_kib, 1000);
  EXPECT_EQ(g.beyond_pools_after_warm_up_kib, 2000);
  EXPECT_EQ(g.warm_up_seconds, 20);
  EXPECT_EQ(g.end_seconds, 95);
}

TEST(MemorySeriesTest, JudgesNoGrowthAfterWarmUpWithoutARunningSampleAfterIt) {
  MemorySeries series({}, {}, 1);
  series.record(at(0, false, 1000, 0));
  series.record(at(0.5, true, 2000, 0));  // the warm-up sample, but the last running one
  series.record(at(1, false, 3000, 0));

  const RssGrowth g = series.growth();
  EXPECT_EQ(g.from_start_kib, 2000);
  EXPECT_EQ(g.after_warm_up_kib, 0);
  EXPECT_EQ(g.beyond_pools_after_warm_up_kib, 0);
}

TEST(MemorySeriesTest, SeesMemoryHeldAfterTheWarmUpBeyondTheMargin) {
  MemorySeries series({}, {}, 1);
  series.sample(0.5, 0, /*running=*/true);
  ASSERT_GT(series.samples().back().process.rss_kib, 0) << "no VmRSS in /proc/self/status";
  std::vector<char> held(size_t{48} << 20, 1);  // what a leak would hold, every page written
  EXPECT_GE(resident_bytes(reinterpret_cast<uint64_t>(held.data()), held.size()),
            int64_t{47} << 20);
  series.sample(0.9, 0, /*running=*/true);

  EXPECT_GT(series.growth().beyond_pools_after_warm_up_kib, kRssMarginKib);
}

}  // namespace
}  // namespace mt::testing
