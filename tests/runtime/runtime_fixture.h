#pragma once
// A fixture that gives each test a fresh runtime, optionally split into logical CPUs, and
// captures placement log lines.

#include <mutex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/eager/context.h"
#include "runtime/minitensor.h"

namespace mt::testing {

// CPU tests hide the GPUs so that they place and print the same on every machine; GPU tests
// override uses_gpus().
class RuntimeTest : public ::testing::Test {
 protected:
  virtual bool uses_gpus() const { return false; }

  void SetUp() override {
    ASSERT_TRUE(internal::Context::get().reset_for_testing().ok());
    if (!uses_gpus()) config::set_visible_devices(std::vector<PhysicalDevice>{}, "GPU");
    debugging::set_log_sink([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.emplace_back(line);
    });
  }
  void TearDown() override {
    debugging::set_log_sink(nullptr);
    absl::Status s = internal::Context::get().reset_for_testing();
    EXPECT_TRUE(s.ok()) << s;  // every tensor of the test must be gone
  }

  // Splits the CPU into `n` logical CPUs, each with an optional limit.
  static void split_cpu(int n, std::optional<int64_t> limit_mb = std::nullopt) {
    std::vector<LogicalDeviceConfiguration> configs(n, LogicalDeviceConfiguration{limit_mb});
    config::set_logical_device_configuration(config::list_physical_devices("CPU")[0], configs);
  }

  std::vector<std::string> log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  static std::string cpu(int i) {
    return "/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i);
  }

 private:
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

// Runs `fn` and returns the mt::Error it throws (code and message); fails if none.
template <typename Fn>
Error expect_error(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected mt::Error";
  return Error(absl::StatusCode::kOk, "");
}

// Checks that `fn` throws mt::Error with `code` and exactly `message`.
template <typename Fn>
void expect(Fn&& fn, absl::StatusCode code, const std::string& message) {
  Error e = expect_error(std::forward<Fn>(fn));
  EXPECT_EQ(e.code(), code) << e.what();
  EXPECT_EQ(std::string(e.what()), message);
}

}  // namespace mt::testing
