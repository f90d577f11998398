// The per-test watchdog (watchdog.h) turns a hang into an abort that names the test, its
// last note and the report of the moment.
#include "tests/runtime/watchdog.h"

#include <chrono>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace mt {
namespace {

TEST(WatchdogDeathTest, AHangAbortsNamingTheTestItsLastNoteAndTheReport) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        testing::Watchdog watchdog("Hung.Test", 0.2, [] { return std::string("faults: 3"); });
        watchdog.note("seed 7, step matmul on GPU:0");
        std::this_thread::sleep_for(std::chrono::seconds(60));
      },
      "Hung.Test still running after 0.2 s: hung\\?\n  last: seed 7, step matmul on GPU:0\n  "
      "faults: 3");
}

TEST(WatchdogTest, ATestThatEndsDisarmsIt) {
  {
    testing::Watchdog watchdog("Quick.Test", 0.2);
    watchdog.note("done");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // past the limit: no abort
  SUCCEED();
}

}  // namespace
}  // namespace mt
