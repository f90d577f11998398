#pragma once
// StatShards: a pool's bytes in use, allocation count and peak, spread over a fixed number of
// cache-line shards so that threads on the fast path neither contend on one counter nor pay
// for atomic read-modify-writes. Reading sums the shards: O(kNumShards), a constant
// (mt::internal).
//
//   shards.add(4096);     // an allocation of 4096 bytes by this thread
//   shards.sub(4096);     // its free, perhaps by another thread
//   shards.in_use();      // 0
//
// Note [Shard ownership]: a thread claims one of kOwnedShards process-wide shard indices on
// first use and gives it back at exit; while it holds index i, it is the only writer of
// shard i of every pool, so it updates with plain loads and stores. Threads beyond
// kOwnedShards (or past their thread-local destructors) share kSharedShard and use atomic
// read-modify-writes. A shard's totals outlive its threads: a freed block is subtracted
// from the freeing thread's shard, so single shards may go negative; only sums mean anything.
//
// Note [Peak]: each shard remembers the highest value it reached (`high`). An allocation that
// lifts its shard above `high` sums all shards and raises the peak. With one thread (one
// shard moving) this is exact; with several, a peak reached only through shards that stay
// below their own highs can be missed, so callers also raise the peak after every slow-path
// allocation and every stats() read. A sum taken while other threads update can also count
// a block being freed together with a later block that reuses its bytes, so it may
// overshoot; callers bound it by a figure they keep exactly (BFCAllocator: Note [Peak
// bound]). A steady alloc/free pair never sums the shards.

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace mt::internal {

// This thread's shard index; -1 until its first use (Note [Shard ownership]).
inline thread_local constinit int tls_shard_index = -1;

class StatShards {
 public:
  static constexpr int kOwnedShards = 32;
  static constexpr int kSharedShard = kOwnedShards;
  static constexpr int kNumShards = kOwnedShards + 1;

  // Records an allocation of `bytes` by this thread and raises the peak when this shard
  // passes its high, or always with `raise` (Note [Peak]).
  void add(int64_t bytes, bool raise = false) {
    const int i = shard_index();
    Shard& s = shards_[i];
    const int64_t v = bump(s.in_use, bytes, i);
    bump(s.allocs, 1, i);
    if (v > s.high.load(std::memory_order_relaxed)) {
      s.high.store(v, std::memory_order_relaxed);
      raise = true;
    }
    if (raise) raise_peak();
  }

  // Records the return of `bytes` by this thread.
  void sub(int64_t bytes) {
    const int i = shard_index();
    bump(shards_[i].in_use, -bytes, i);
  }

  // Returns the bytes in use (never negative; a read racing with updates is approximate).
  int64_t in_use() const {
    int64_t sum = 0;
    for (const Shard& s : shards_) sum += s.in_use.load(std::memory_order_relaxed);
    return std::max<int64_t>(sum, 0);
  }

  // Returns the number of allocations recorded.
  int64_t allocs() const {
    int64_t sum = 0;
    for (const Shard& s : shards_) sum += s.allocs.load(std::memory_order_relaxed);
    return sum;
  }

  // Returns the peak as last raised.
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }

  // Raises the peak to the current bytes in use if that is higher; returns those bytes.
  int64_t raise_peak() {
    const int64_t now = in_use();
    int64_t p = peak_.load(std::memory_order_relaxed);
    while (now > p && !peak_.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
    return now;
  }

  // Sets the peak, and every shard's high, to the current values.
  void reset_peak() {
    for (Shard& s : shards_) {
      s.high.store(s.in_use.load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    peak_.store(in_use(), std::memory_order_relaxed);
  }

 private:
  struct alignas(64) Shard {
    std::atomic<int64_t> in_use{0};
    std::atomic<int64_t> allocs{0};
    std::atomic<int64_t> high{0};
  };

  static int shard_index() {
    const int i = tls_shard_index;
    return i >= 0 ? i : claim_shard_index();
  }
  // Claims a free owned index for this thread, or kSharedShard when none is free.
  static int claim_shard_index();

  // Adds `delta` to `counter` of shard `i`; returns the new value.
  static int64_t bump(std::atomic<int64_t>& counter, int64_t delta, int i) {
    if (i == kSharedShard) return counter.fetch_add(delta, std::memory_order_relaxed) + delta;
    const int64_t v = counter.load(std::memory_order_relaxed) + delta;  // the only writer
    counter.store(v, std::memory_order_relaxed);
    return v;
  }

  Shard shards_[kNumShards];
  std::atomic<int64_t> peak_{0};
};

}  // namespace mt::internal
