#pragma once
// BlockTags: a map from a block's address to a one-byte tag (a size class + 1; 0 for none)
// that readers consult without a lock (mt::internal). It lets deallocate() find the size
// class of a cached block without the pool's mutex (Note [Fast path] in thread_cache.h).
//
//   tags.set(p, 3);     // under the pool's mutex
//   tags.get(p);        // 3, from any thread that owns p
//
// Layout: a three-level radix tree over 48-bit addresses at 256-byte granularity, like
// tcmalloc's page map. Nodes are created on first use and freed with the map; a leaf costs
// 8 KiB per 2 MiB of address space that ever held a tagged block (0.4% at worst).

#include <atomic>
#include <cstdint>
#include <memory>

namespace mt::internal {

class BlockTags {
 public:
  BlockTags();
  ~BlockTags();
  BlockTags(const BlockTags&) = delete;
  BlockTags& operator=(const BlockTags&) = delete;

  // Returns the tag of the block at `p`, 0 when none. Thread-safe; the caller must own the
  // block (so that no writer changes its tag meanwhile).
  uint8_t get(const void* p) const {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    if (a >> kAddressBits) return 0;
    const Mid* mid = root_[a >> kRootShift].load(std::memory_order_acquire);
    if (mid == nullptr) return 0;
    const Leaf* leaf = mid->leaves[(a >> kMidShift) & kMidMask].load(std::memory_order_acquire);
    if (leaf == nullptr) return 0;
    return leaf->tags[(a >> kLeafShift) & kLeafMask].load(std::memory_order_relaxed);
  }

  // Sets the tag of the block at `p`; returns false (and sets nothing) when `p` lies beyond
  // 48 bits. Writers must be serialised by the caller.
  bool set(const void* p, uint8_t tag);

  // Sets the tag of the block at `p` to 0. Writers must be serialised by the caller.
  void clear(const void* p);

 private:
  static constexpr int kAddressBits = 48;
  static constexpr int kLeafShift = 8, kLeafBits = 13;  // 8192 tags: 2 MiB
  static constexpr int kMidShift = 21, kMidBits = 13;   // 8192 leaves: 16 GiB
  static constexpr int kRootShift = 34, kRootBits = 14;
  static constexpr uintptr_t kLeafMask = (uintptr_t{1} << kLeafBits) - 1;
  static constexpr uintptr_t kMidMask = (uintptr_t{1} << kMidBits) - 1;

  struct Leaf {
    std::atomic<uint8_t> tags[size_t{1} << kLeafBits];
  };
  struct Mid {
    std::atomic<Leaf*> leaves[size_t{1} << kMidBits];
  };

  std::unique_ptr<std::atomic<Mid*>[]> root_;
};

}  // namespace mt::internal
