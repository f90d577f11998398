// The features that listen to the eager core from its start (runtime/eager/op_observer.h)
// and the placement policy it asks (runtime/eager/placement_policy.h): the core calls
// install_features() when a runtime starts, and this file, outside the core, registers them.
#include "runtime/cost/cost_policy.h"
#include "runtime/eager/op_observer.h"
#include "runtime/eager/placement_policy.h"
#include "runtime/trace/trace_recorder.h"

namespace mt::internal {

void install_features() {
  set_oom_listener(&trace_oom);  // keeps the pool's snapshot, and records the OOM in a trace
  // mt::config::PlacementPolicy::kCost, unless another policy was registered (a test's).
  if (policy_factory() == nullptr) set_policy_factory(&make_cost_policy);
}

}  // namespace mt::internal
