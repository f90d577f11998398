// mt::config placement policies: the switch lives in the Context, the state in the Runtime.
#include "runtime/placement_policy.h"

#include "runtime/cost/bus_calibration.h"
#include "runtime/cost/cost_policy.h"
#include "runtime/eager/context.h"
#include "runtime/eager/error.h"

namespace mt::config {

void set_placement_policy(PlacementPolicy policy) {
  internal::Context::get().set_cost_placement(policy == PlacementPolicy::kCost);
}

PlacementPolicy get_placement_policy() {
  return internal::Context::get().cost_placement() ? PlacementPolicy::kCost
                                                   : PlacementPolicy::kPriority;
}

void save_placement_history(const std::string& path) {
  internal::Runtime* rt = internal::value_or_throw(internal::Context::get().runtime());
  internal::throw_if_error(internal::cost_policy(*rt).save_history(path));
}

bool load_placement_history(const std::string& path) {
  internal::Runtime* rt = internal::value_or_throw(internal::Context::get().runtime());
  return internal::cost_policy(*rt).load_history(path);
}

std::string get_bus_calibration_path() { return internal::bus_cache_path(); }

}  // namespace mt::config
