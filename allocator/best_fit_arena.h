#pragma once
// BestFitArena: the best-fit-with-coalescing core of BFCAllocator: chunks, bins and regions
// as Note [Chunks, bins and regions] in bfc_allocator.h describes (mt::internal).
//
//   BestFitArena arena(sub, {.limit_bytes = 1 << 30, .allow_growth = true});
//   BestFitArena::Block b = arena.allocate(4096, /*exact=*/false);
//   arena.free(b.ptr);  // returns 4096
//
// Not thread-safe: BFCAllocator holds its mutex around every call.

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "allocator/allocator.h"
#include "allocator/sub_allocator.h"

namespace mt::internal {

class BestFitArena {
 public:
  static constexpr int64_t kGranule = 256;
  static constexpr int64_t kRegionGranule = int64_t{2} << 20;
  static constexpr int64_t kMaxBytes = int64_t{1} << 62;  // no arena holds more

  struct Options {
    int64_t limit_bytes = 0;  // rounded down to kGranule
    bool allow_growth = true;
    int64_t initial_region_bytes = kRegionGranule;
  };

  // A block handed out: its address and its size (the request, or more, Note [Split rule]).
  struct Block {
    void* ptr = nullptr;
    int64_t size = 0;
  };

  // Returns the bytes an arena of `limit_bytes` can hold: the limit, at most 2^62, rounded
  // down to kGranule.
  static constexpr int64_t usable_limit(int64_t limit_bytes) {
    return std::min(limit_bytes, kMaxBytes) / kGranule * kGranule;
  }

  // Draws regions from `sub`, which must outlive the arena.
  BestFitArena(SubAllocator* sub, Options options);
  // Returns every region to the sub-allocator, blocks in use or not.
  ~BestFitArena();
  BestFitArena(const BestFitArena&) = delete;
  BestFitArena& operator=(const BestFitArena&) = delete;

  // Returns the best-fitting free chunk for `bytes` (a positive multiple of kGranule),
  // growing when none fits; {} when the limit or the sub-allocator refuses. With `exact`,
  // any remainder of at least kGranule is split off (for size-class blocks).
  Block allocate(int64_t bytes, bool exact);

  // Frees the in-use block at `ptr`, coalescing it with free neighbours; returns its size.
  int64_t free(void* ptr);

  // Returns the size of the in-use block at `ptr`, or 0 when `ptr` is not one.
  int64_t block_size(const void* ptr) const;

  // Returns regions that are one free chunk to the sub-allocator; returns the bytes freed.
  int64_t release_free_regions();

  int64_t reserved_bytes() const { return reserved_; }
  int64_t free_bytes() const { return free_bytes_; }
  int64_t largest_free_chunk() const;

  // Returns every region and its chunks (in use or free), in address order.
  std::vector<RegionInfo> regions() const;

  // Aborts unless every invariant of the Note holds. O(chunks); for tests.
  void check_invariants() const;

 private:
  using ChunkId = int32_t;
  static constexpr ChunkId kNone = -1;
  static constexpr int kNumBins = 48;

  struct Chunk {
    uintptr_t ptr = 0;
    int64_t size = 0;
    ChunkId prev = kNone;  // the chunk just below in the same region
    ChunkId next = kNone;  // the chunk just above in the same region
    bool in_use = false;
  };
  struct Region {
    uintptr_t ptr;
    int64_t size;
    ChunkId first;  // the chunk at `ptr`; it keeps its id through splits and merges
  };
  // A free chunk in its bin: ordered by size, then address (best fit, lowest address first).
  using FreeKey = std::tuple<int64_t, uintptr_t, ChunkId>;

  static int bin_of(int64_t size);
  ChunkId best_fit(int64_t bytes) const;
  bool grow(int64_t bytes);
  int64_t planned_region_bytes() const;
  void* alloc_region(int64_t bytes, int64_t* size);
  Block take(ChunkId id, int64_t bytes, bool exact);
  void split(ChunkId id, int64_t bytes);
  void merge_next(ChunkId id);
  ChunkId new_chunk(uintptr_t ptr, int64_t size);
  void delete_chunk(ChunkId id);
  void insert_free(ChunkId id);
  void erase_free(ChunkId id);
  FreeKey key(ChunkId id) const;

  SubAllocator* const sub_;
  const int64_t limit_;
  const bool allow_growth_;
  const int64_t initial_region_bytes_;
  int64_t reserved_ = 0;
  int64_t free_bytes_ = 0;
  std::vector<Chunk> chunks_;
  std::vector<ChunkId> spare_ids_;
  std::vector<Region> regions_;
  absl::flat_hash_map<uintptr_t, ChunkId> in_use_;
  std::array<absl::btree_set<FreeKey>, kNumBins> bins_;
  uint64_t nonempty_bins_ = 0;  // bit b set when bins_[b] holds a chunk
};

}  // namespace mt::internal
