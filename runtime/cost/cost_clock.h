#pragma once
// CostClock: where the cost policy reads the time (runtime/cost/cost_model.h). The runtime
// hands the model a SteadyCostClock; tests hand it a fake whose time they set, so that
// queued work and measured durations are deterministic.
//
//   SteadyCostClock clock;
//   int64_t begin = clock.now_ns();
//   run_kernel();
//   model.record(key, device, clock.now_ns() - begin, footprint);

#include <chrono>
#include <cstdint>

namespace mt {

class CostClock {
 public:
  virtual ~CostClock() = default;
  // Returns a monotonic time in nanoseconds. Thread-safe.
  virtual int64_t now_ns() const = 0;
};

// The host's monotonic clock.
class SteadyCostClock final : public CostClock {
 public:
  int64_t now_ns() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace mt
