#include <cstdlib>

#include "allocator/sub_allocator.h"
#include "core/fault_injection.h"

namespace mt {
namespace {

constexpr size_t kAlignment = 256;

class HostSubAllocator final : public SubAllocator {
 public:
  void* alloc(size_t bytes) override {
    // aligned_alloc wants a multiple of the alignment; pools only ask for such sizes.
    const size_t rounded = (bytes + kAlignment - 1) & ~(kAlignment - 1);
    if (rounded < bytes) return nullptr;
    if (internal::should_fail(internal::FaultSite::kHostAlloc)) return nullptr;  // tests only
    return std::aligned_alloc(kAlignment, rounded);
  }

  void free(void* ptr, size_t /*bytes*/) override { std::free(ptr); }
};

}  // namespace

std::unique_ptr<SubAllocator> make_host_sub_allocator() {
  return std::make_unique<HostSubAllocator>();
}

}  // namespace mt
