#pragma once
// Per-thread caches of free blocks, by size class: the fast path of BFCAllocator
// (mt::internal).
//
//   ThreadCacheRegistry registry(sink);     // one per pool
//   ThreadCache* cache = registry.get();    // this thread's cache; nullptr at thread exit
//   void* p = cache->pop(c);                // a cached block of class c, or nullptr
//
// Note [Fast path]
// A request of at most BFCAllocator::Options::max_cached_block_bytes is rounded up to a size
// class (size_classes.h). Its block is an ordinary chunk of the pool, but one whose first
// granule carries its class in BlockTags. deallocate() reads the tag without a lock and, for
// a tagged block, pushes it onto the calling thread's cache; allocate() pops from it. Such a
// pair takes only the cache's own spin lock, which no other thread takes except to drain the
// cache (out of memory, release_unused, thread exit), and never calls the sub-allocator.
// - A block freed on another thread joins that thread's cache: blocks are not owned by the
//   thread that allocated them.
// - When a class is full, push() spills its older half; when the cache holds more than
//   kBudgetBytes, trim() spills the older half of every class, so that blocks of classes no
//   longer used cannot keep new classes out. Spilled blocks go to the pool's central lists
//   (under its mutex), or back into the best-fit arena when those are full. A miss takes from the
//   central list of its class, else allocates one block of the class's exact size from the arena.
// - Accounting: a block counts as in use from allocate() to deallocate(); cached and
//   central blocks count as neither in use nor free.
// - A thread's caches live in thread-local storage. At thread exit they hand their blocks
//   back to their pools; a pool destroyed first orphans the caches of live threads, which
//   then drop them (the memory went with the pool's regions).
// - Locks, in order: the registry lock, then a cache's spin lock or a pool's mutex; a cache's
//   spin lock is never held while taking another lock.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "allocator/size_classes.h"
#include "core/mutex.h"

namespace mt::internal {

// A free block held by a cache, with its size class.
struct CachedBlock {
  void* ptr;
  int size_class;
};

// Guards every registry's list of caches and every cache's `orphaned_`.
extern Mutex cache_registry_mu;

class ThreadCacheRegistry;

// One thread's free blocks of one pool. The owning thread pops and pushes; any thread may
// drain it while holding cache_registry_mu.
class alignas(64) ThreadCache {
 public:
  // Free memory one thread may park per pool. A GPU pool gets it back only by draining (out
  // of memory, release_unused, thread exit); a larger budget serves a larger churning
  // working set from the cache (mixed benchmark: 66 ns a pair at 4 MiB, 40 at 8, 28 at 16).
  static constexpr int64_t kBudgetBytes = int64_t{8} << 20;
  static constexpr int kMaxSpill = 32;

  ThreadCache(uint64_t registry_id, ThreadCacheRegistry* registry);
  ThreadCache(const ThreadCache&) = delete;
  ThreadCache& operator=(const ThreadCache&) = delete;

  // Returns the most recently cached block of class `c`, or nullptr when none is cached.
  void* pop(int c) {
    lock();
    void* p = nullptr;
    if (const int n = count_[c]; n > 0) {
      p = slots_[class_tables::kOffset[c] + n - 1];
      count_[c] = static_cast<uint16_t>(n - 1);
      bytes_ -= class_bytes(c);
    }
    unlock();
    return p;
  }

  // Caches `p` of class `c`. When the class was full, first moves its older half into
  // `spill` (room for kMaxSpill) and returns how many; the caller hands them back to the
  // pool. Sets `*over_budget` when the cache now holds more than kBudgetBytes.
  int push(int c, void* p, CachedBlock* spill, bool* over_budget);

  // Moves the older half (rounded up) of every class into `out`: for a cache over budget.
  void trim(std::vector<CachedBlock>* out);

  // Caches `n` blocks of class `c`, which must fit: for refills of an empty class.
  void fill(int c, void* const* blocks, int n);

  // Appends every cached block to `out` and empties the cache. Any thread.
  void drain(std::vector<CachedBlock>* out);

 private:
  friend class ThreadCacheRegistry;
  friend struct ThreadCacheList;

  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) spin();
  }
  void unlock() { locked_.store(false, std::memory_order_release); }
  void spin();

  std::atomic<bool> locked_{false};
  const uint64_t registry_id_;
  ThreadCacheRegistry* const registry_;  // valid while !orphaned_
  bool orphaned_ ABSL_GUARDED_BY(cache_registry_mu) = false;
  int64_t bytes_ = 0;  // owner and drainers, under locked_
  uint16_t count_[kNumSizeClasses] = {};
  std::unique_ptr<void*[]> slots_;  // class c at [kOffset[c], kOffset[c] + count_[c])
};

// The most recently used (registry id, cache) pair of this thread: get()'s fast check.
struct MruCache {
  uint64_t registry_id;
  ThreadCache* cache;
};
inline thread_local constinit MruCache tls_mru_cache{0, nullptr};

// The caches of one pool, one per thread that used it. Thread-safe.
class ThreadCacheRegistry {
 public:
  // Called (under cache_registry_mu) with the blocks of a cache whose thread exits.
  using Sink = std::function<void(std::vector<CachedBlock>&)>;

  explicit ThreadCacheRegistry(Sink sink);
  // Orphans the caches of live threads; their blocks are dropped, not returned.
  ~ThreadCacheRegistry();
  ThreadCacheRegistry(const ThreadCacheRegistry&) = delete;
  ThreadCacheRegistry& operator=(const ThreadCacheRegistry&) = delete;

  // Returns this thread's cache, creating it on first use; nullptr once the thread's
  // thread-local storage is being destroyed.
  ThreadCache* get() {
    if (tls_mru_cache.registry_id == id_) return tls_mru_cache.cache;
    return get_slow();
  }

  // Appends the blocks of every thread's cache to `out`, emptying them.
  void drain_all(std::vector<CachedBlock>* out);

 private:
  friend struct ThreadCacheList;
  ThreadCache* get_slow();

  const uint64_t id_;  // unique for the process's lifetime, never 0
  const Sink sink_;
  std::vector<ThreadCache*> caches_ ABSL_GUARDED_BY(cache_registry_mu);
};

}  // namespace mt::internal
