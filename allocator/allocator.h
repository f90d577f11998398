#pragma once
// Allocator: the interface every memory pool implements. The runtime holds one per logical
// device and draws every tensor buffer from it.
//
//   void* p = allocator.allocate(4096);   // nullptr when the pool cannot supply it
//   allocator.deallocate(p);
//   MemoryStats s = allocator.stats();    // O(1)
//
// Thread safety: every method may be called from any thread at any time.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace mt {

// A snapshot of a pool's accounting, in bytes. O(1) to read. Free blocks a pool keeps in
// per-thread caches count as neither in use nor free (bfc_allocator.h).
struct MemoryStats {
  int64_t bytes_in_use = 0;        // handed to callers and not yet returned (rounded sizes)
  int64_t peak_bytes_in_use = 0;   // highest bytes_in_use since creation or reset_peak()
  int64_t bytes_reserved = 0;      // taken from the sub-allocator (driver) and still held
  int64_t bytes_limit = 0;         // the pool never reserves more than this
  int64_t num_allocs = 0;          // allocations made since creation
  int64_t largest_free_block = 0;  // largest block allocate() could return without growing
  double fragmentation = 0;        // 1 - largest_free_block / free bytes (0 when none free)
};

// The two figures of MemoryStats that change with every allocation, for readers that want
// them often (a trace records them after every op).
struct MemoryUsage {
  int64_t bytes_in_use = 0;
  int64_t bytes_reserved = 0;
};

// Something a freed block must wait for before it can be reused: an event recorded on
// another stream, say. `query` returns true once it has completed; `release` frees it.
// Kept CUDA-free so that allocator/ headers name no CUDA type.
struct PendingUse {
  void* handle = nullptr;
  bool (*query)(void* handle) = nullptr;
  void (*release)(void* handle) = nullptr;
};

// A chunk of a pool's region, as a memory snapshot shows it. kCached: free for the pool's
// callers but held by its central lists (blocks in per-thread caches read as kInUse).
struct ChunkInfo {
  enum class State : uint8_t { kFree, kInUse, kCached };
  uintptr_t address = 0;
  int64_t size = 0;
  State state = State::kFree;
};

// A region the pool took from its sub-allocator, with its chunks in address order.
struct RegionInfo {
  uintptr_t address = 0;
  int64_t size = 0;
  std::vector<ChunkInfo> chunks;
};

class Allocator {
 public:
  virtual ~Allocator() = default;

  // Returns the allocator's name as it appears in OOM messages, e.g. "GPU_0_bfc".
  virtual std::string_view name() const = 0;

  // Returns a block of at least `bytes` (> 0) bytes aligned to 256 bytes, or nullptr when
  // the limit or the sub-allocator cannot supply it. A failure changes no accounting.
  virtual void* allocate(size_t bytes) = 0;

  // Returns a block obtained from allocate(). `ptr` may be nullptr (a no-op).
  virtual void deallocate(void* ptr) = 0;

  // Returns `ptr` to the pool once `use` has completed (the pool polls it; it takes
  // ownership of `use` and calls use.release when done). Until then the block stays in use.
  virtual void deallocate_after(void* ptr, PendingUse use) = 0;

  // Returns the current accounting.
  virtual MemoryStats stats() const = 0;

  // Returns stats()'s bytes in use and reserved; a pool may read them more cheaply.
  virtual MemoryUsage usage() const {
    const MemoryStats s = stats();
    return {s.bytes_in_use, s.bytes_reserved};
  }

  // Sets the peak to the current bytes in use.
  virtual void reset_peak() = 0;

  // Returns every region with its chunks, in address order; O(chunks) under the pool's lock.
  // A pool without regions returns none.
  virtual std::vector<RegionInfo> regions() const { return {}; }

  // Hands regions with no block in use back to the sub-allocator; returns the bytes freed.
  virtual int64_t release_unused() = 0;
};

}  // namespace mt
