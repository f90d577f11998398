#include "core/fault_injection.h"

#include <atomic>

#include "core/mutex.h"

namespace mt::internal {
namespace {

struct Site {
  int64_t skip = 0;      // calls to let through before failing
  int64_t fail = 0;      // calls to fail after those
  int64_t injected = 0;  // calls failed
};

struct Faults {
  std::atomic<bool> armed{false};  // set once anything is armed: the fast path reads it
  Mutex mu;
  Site sites[kNumFaultSites] ABSL_GUARDED_BY(mu);
};

Faults& faults() {
  static Faults* f = new Faults();
  return *f;
}

}  // namespace

void inject_fault(FaultSite site, int64_t nth, int64_t count) {
  Faults& f = faults();
  MutexLock lock(&f.mu);
  Site& s = f.sites[static_cast<int>(site)];
  s.skip = nth > 0 ? nth - 1 : 0;
  s.fail = count > 0 ? count : 0;
  f.armed.store(true, std::memory_order_relaxed);
}

void clear_faults() {
  Faults& f = faults();
  MutexLock lock(&f.mu);
  for (Site& s : f.sites) s = Site();
}

bool should_fail(FaultSite site) {
  Faults& f = faults();
  if (!f.armed.load(std::memory_order_relaxed)) return false;
  MutexLock lock(&f.mu);
  Site& s = f.sites[static_cast<int>(site)];
  if (s.fail == 0) return false;
  if (s.skip > 0) {
    --s.skip;
    return false;
  }
  --s.fail;
  ++s.injected;
  return true;
}

int64_t faults_injected(FaultSite site) {
  Faults& f = faults();
  MutexLock lock(&f.mu);
  return f.sites[static_cast<int>(site)].injected;
}

}  // namespace mt::internal
