#pragma once
// A CostClock whose time the test sets: queued work and measured durations are exact.

#include <atomic>
#include <cstdint>

#include "runtime/cost/cost_clock.h"

namespace mt::testing {

class FakeCostClock final : public CostClock {
 public:
  int64_t now_ns() const override { return now_.load(); }
  void set(int64_t ns) { now_.store(ns); }
  void advance(int64_t ns) { now_.fetch_add(ns); }

 private:
  std::atomic<int64_t> now_{1'000'000};
};

}  // namespace mt::testing
