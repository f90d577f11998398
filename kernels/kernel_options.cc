#include "kernels/kernel_options.h"

#include <atomic>

namespace mt::internal {
namespace {
std::atomic<bool> tf32{false};
}  // namespace

bool tf32_enabled() { return tf32.load(std::memory_order_relaxed); }
void set_tf32_enabled(bool enable) { tf32.store(enable, std::memory_order_relaxed); }

}  // namespace mt::internal
