#pragma once
// A per-test watchdog: a test that could hang (an event never completed, a lock never
// released, a loop that waits for an op to succeed) arms one and notes what it is doing as
// it goes; past the limit the watchdog prints the test's name, its last note and a report
// of the moment, then aborts, so that a hang names its place instead of running into the
// harness's timeout. Not a timing check: the limit is generous and only catches hangs.
//
//   testing::Watchdog watchdog("FaultInjectionTest.Random");  // MT_TEST_WATCHDOG_SECONDS
//   watchdog.note(absl::StrCat("seed ", seed));
//   ...                                                     // the destructor disarms it

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace mt::testing {

class Watchdog {
 public:
  // Arms the watchdog for `seconds` (default: MT_TEST_WATCHDOG_SECONDS, else 300). `report`,
  // when set, is called on the watchdog's thread at abort time and must not take locks the
  // test could hold.
  explicit Watchdog(std::string name, double seconds = limit_from_env(),
                    std::function<std::string()> report = nullptr)
      : name_(std::move(name)), report_(std::move(report)) {
    thread_ = std::thread([this, seconds] { watch(seconds); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Records what the test is doing now; the last note is printed on a hang. Thread-safe.
  void note(std::string what) {
    std::lock_guard<std::mutex> lock(mu_);
    note_ = std::move(what);
  }

  static double limit_from_env() {
    const char* text = std::getenv("MT_TEST_WATCHDOG_SECONDS");
    return text != nullptr && *text != '\0' ? std::atof(text) : 300.0;
  }

 private:
  void watch(double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto limit = std::chrono::duration<double>(seconds);
    if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
    const std::string extra = report_ ? report_() : "";
    std::fprintf(stderr, "[watchdog] %s still running after %g s: hung?\n  last: %s\n  %s\n",
                 name_.c_str(), seconds, note_.c_str(), extra.c_str());
    std::fflush(stderr);
    std::abort();
  }

  const std::string name_;
  const std::function<std::string()> report_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string note_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace mt::testing
