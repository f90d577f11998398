#include "allocator/block_tags.h"

namespace mt::internal {

BlockTags::BlockTags() : root_(new std::atomic<Mid*>[size_t{1} << kRootBits]()) {}

BlockTags::~BlockTags() {
  for (size_t i = 0; i < (size_t{1} << kRootBits); ++i) {
    Mid* mid = root_[i].load(std::memory_order_relaxed);
    if (mid == nullptr) continue;
    for (auto& leaf : mid->leaves) delete leaf.load(std::memory_order_relaxed);
    delete mid;
  }
}

bool BlockTags::set(const void* p, uint8_t tag) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (a >> kAddressBits) return false;
  std::atomic<Mid*>& mid_slot = root_[a >> kRootShift];
  Mid* mid = mid_slot.load(std::memory_order_relaxed);
  if (mid == nullptr) {
    mid = new Mid();
    mid_slot.store(mid, std::memory_order_release);
  }
  std::atomic<Leaf*>& leaf_slot = mid->leaves[(a >> kMidShift) & kMidMask];
  Leaf* leaf = leaf_slot.load(std::memory_order_relaxed);
  if (leaf == nullptr) {
    leaf = new Leaf();
    leaf_slot.store(leaf, std::memory_order_release);
  }
  leaf->tags[(a >> kLeafShift) & kLeafMask].store(tag, std::memory_order_relaxed);
  return true;
}

void BlockTags::clear(const void* p) {
  if (get(p) != 0) set(p, 0);
}

}  // namespace mt::internal
