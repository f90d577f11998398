#pragma once
// BFCAllocator: a best-fit-with-coalescing memory pool over regions from a SubAllocator,
// with per-thread size-class caches in front (Note [Fast path] in thread_cache.h).
//
//   BFCAllocator pool({.name = "CPU_0_bfc"}, make_host_sub_allocator());
//   void* p = pool.allocate(1000);  // a 1024-byte block, 256-byte aligned
//   pool.deallocate(p);
//
// Note [Chunks, bins and regions]
// - A region is one allocation from the sub-allocator. Regions never merge, and together
//   they hold bytes_reserved <= limit_bytes.
// - Every byte of a region belongs to exactly one chunk. A region's chunks, in address order,
//   form a list from the region's base (prev/next). Chunk addresses and sizes are multiples
//   of 256 bytes, so every block is 256-byte aligned.
// - A chunk is in use (handed to a caller or held by a cache) or free. Two free chunks are
//   never neighbours: a freed chunk merges with a free chunk on either side at once.
// - Every free chunk sits in exactly one bin, and no in-use chunk in any: bin b holds the
//   free chunks of [256 << b, 256 << (b + 1)) bytes (the last bin: everything larger),
//   ordered by size, then address.
// - Best fit: a request rounded up to 256 bytes gets the smallest free chunk that holds it,
//   the lowest address among equals, found from its own bin upward.
//
// Note [Split rule]
// A chunk of C bytes serving a request of R bytes is split, leaving a free chunk of C - R,
// only when C - R >= max(256 B, min(R / 8, 1 MiB)). Otherwise the caller gets all C bytes
// and bytes_in_use counts C. A block thus wastes less than 1/8 of its request and less than
// 1 MiB, and no split leaves a sliver that is tiny next to the blocks around it. Size-class
// blocks (the fast path) are always split to their class size exactly.
//
// Note [Growth]
// With allow_growth, a new region gets initial_region_bytes doubled once for each region the
// pool holds (2, 4, 8 MiB... by default); a request larger than that gets a region of its
// own size rounded up to 2 MiB. Regions handed back by release_unused no longer count, so
// a pool emptied by it starts again at initial_region_bytes: a service that releases
// memory between bursts never asks the driver for ever larger regions. Without growth,
// the first allocation reserves the whole limit in one region. Either way a region never
// takes the pool past limit_bytes, checked before the sub-allocator is called. When the
// sub-allocator refuses a region, the pool asks again for 10% less, down to the request
// itself, before failing.
//
// stats(), usage(), regions(), reset_peak() and release_unused() first free the blocks whose
// deallocate_after use has completed (Note [Completed pending frees] in bfc_allocator.cc).
//
// Out of memory, allocate() empties every thread's cache and the central lists back into
// the arena, polls blocks awaiting deallocate_after, and retries once before returning
// nullptr. Thread-safe; see allocator.h for the contract.

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "allocator/allocator.h"
#include "allocator/best_fit_arena.h"
#include "allocator/block_tags.h"
#include "allocator/stat_shards.h"
#include "allocator/sub_allocator.h"
#include "allocator/thread_cache.h"
#include "core/mutex.h"

namespace mt {

class BFCAllocator final : public Allocator {
 public:
  static constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

  struct Options {
    std::string name;                          // "GPU_0_bfc", "CPU_0_bfc"
    int64_t limit_bytes = kUnlimited;          // > 0; rounded down to 256
    bool allow_growth = true;                  // Note [Growth]; false needs a real limit
    int64_t initial_region_bytes = 2 << 20;    // the first region in growth mode
    int64_t max_cached_block_bytes = 1 << 20;  // fast path up to this (<= 1 MiB); 0: off
  };

  // Creates a pool that takes its regions from `sub`. Reserves nothing until the first
  // allocation.
  BFCAllocator(Options options, std::unique_ptr<SubAllocator> sub);
  // Returns every region to the sub-allocator and releases pending uses; blocks still in
  // use become invalid. No other thread may be using the pool.
  ~BFCAllocator() override;

  std::string_view name() const override { return options_.name; }
  void* allocate(size_t bytes) override;  // 0 bytes: a 256-byte block
  void deallocate(void* ptr) override;
  void deallocate_after(void* ptr, PendingUse use) override;
  MemoryStats stats() const override;
  MemoryUsage usage() const override;  // stats() without the sums it does not need
  void reset_peak() override;
  int64_t release_unused() override;
  std::vector<RegionInfo> regions() const override;  // central-list blocks read as kCached

  // Returns the bytes that `ptr`, a block in use from this pool, counts for in bytes_in_use:
  // its request rounded up to its size class or to 256 bytes, plus any slack the split rule
  // left. Returns 0 for a pointer that the arena does not know as a block.
  int64_t allocated_size(const void* ptr) const;

 private:
  struct Pending {
    void* ptr;
    PendingUse use;
  };

  void* allocate_small(int size_class);
  void* refill(int size_class, internal::ThreadCache* cache);
  void* allocate_large(size_t bytes);
  void deallocate_large(void* ptr);
  void give_back(const internal::CachedBlock* blocks, int n);
  void free_to_arena(void* ptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);  // a size-class block
  void reclaim();
  void poll_pending(bool wait);
  void take_completed(std::vector<Pending>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pending_mu_);
  void publish_arena_stats() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const size_t max_request_;  // larger requests fail at once
  const size_t max_cached_;   // a class size: the option, rounded down, within the limit
  const std::unique_ptr<SubAllocator> sub_;

  mutable internal::Mutex mu_;
  internal::BestFitArena arena_ ABSL_GUARDED_BY(mu_);
  std::vector<void*> central_[internal::kNumSizeClasses] ABSL_GUARDED_BY(mu_);
  int64_t central_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  internal::BlockTags tags_;  // written under mu_, read without it (Note [Fast path])

  mutable internal::StatShards shards_;  // stats() raises the peak (Note [Peak])
  std::atomic<int64_t> reserved_{0}, free_{0}, largest_free_{0};  // copies, under mu_
  // The most bytes the arena has had out of its free chunks (in use or cached) since
  // creation or reset_peak(): a true bound on bytes_in_use and its peak (Note [Peak bound]).
  std::atomic<int64_t> arena_high_{0};  // written under mu_

  internal::Mutex pending_mu_;
  std::vector<Pending> pending_ ABSL_GUARDED_BY(pending_mu_);
  std::atomic<int64_t> num_pending_{0};

  internal::ThreadCacheRegistry caches_;  // last: its destructor runs first
};

}  // namespace mt
