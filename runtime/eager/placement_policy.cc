#include "runtime/eager/placement_policy.h"

#include <atomic>

namespace mt::internal {
namespace {

std::atomic<PolicyFactory> g_policy_factory{nullptr};

}  // namespace

void set_policy_factory(PolicyFactory factory) {
  g_policy_factory.store(factory, std::memory_order_release);
}

PolicyFactory policy_factory() { return g_policy_factory.load(std::memory_order_acquire); }

}  // namespace mt::internal
