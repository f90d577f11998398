// Log sinks: a sink may run ops and read statistics (Note [Re-entrant sinks] in
// runtime/debugging.cc), and a sink that throws does not fail the op.
#include <chrono>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using std::chrono::seconds;

class DebuggingTest : public testing::RuntimeTest {
 protected:
  // Runs `fn` on another thread and returns whether it finished within 20 s. A deadlock
  // fails the test instead of hanging it (the stuck thread is left behind).
  static bool finishes(std::function<void()> fn) {
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> future = done->get_future();
    std::thread([fn = std::move(fn), done] {
      fn();
      done->set_value();
    }).detach();
    return future.wait_for(seconds(20)) == std::future_status::ready;
  }
};

TEST_F(DebuggingTest, SinkThatRunsOpsDoesNotHangAndItsOpsAreNotLogged) {
  std::vector<std::string> lines;
  std::vector<float> sums;
  debugging::set_log_sink([&](std::string_view line) {
    lines.emplace_back(line);
    sums.push_back(reduce_sum(constant({1.f, 2.f}), {0}).to_vector<float>()[0]);
  });
  debugging::set_log_device_placement(true);
  ASSERT_TRUE(finishes([] { EXPECT_EQ(neg(constant(3.f)).to_vector<float>()[0], -3.f); }));
  EXPECT_EQ(lines, (std::vector<std::string>{"Executing op _EagerConst in device " + cpu(0),
                                             "Executing op Neg in device " + cpu(0)}));
  EXPECT_EQ(sums, (std::vector<float>{3, 3}));
  debugging::set_log_sink(nullptr);
}

TEST_F(DebuggingTest, SinkMayReadMemoryInfoAndReplaceItself) {
  int64_t in_use = -1;
  debugging::set_log_sink([&](std::string_view) {
    in_use = config::get_memory_info("CPU:0").current;
    debugging::set_log_sink(nullptr);  // the running sink stays alive until it returns
  });
  debugging::set_log_device_placement(true);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(finishes([] {
    Tensor x = constant(1.f);
    neg(x);
  }));
  EXPECT_EQ(in_use, 0);  // the first line, before _EagerConst allocated
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "Executing op Neg in device " + cpu(0) + "\n");
}

TEST_F(DebuggingTest, SinkThatThrowsLeavesTheOpToFinishAndItsLineGoesToStderr) {
  debugging::set_log_sink([](std::string_view) { throw std::runtime_error("disk full"); });
  debugging::set_log_device_placement(true);
  ::testing::internal::CaptureStderr();
  Tensor y = neg(constant(2.f));
  EXPECT_EQ(y.to_vector<float>()[0], -2.f);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "Executing op _EagerConst in device " + cpu(0) +
                " [the log sink threw: disk full]\n"
                "Executing op Neg in device " +
                cpu(0) + " [the log sink threw: disk full]\n");
  debugging::set_log_sink([](std::string_view) { throw 42; });
  ::testing::internal::CaptureStderr();
  constant(1.f);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "Executing op _EagerConst in device " + cpu(0) + " [the log sink threw]\n");
}

}  // namespace
}  // namespace mt
