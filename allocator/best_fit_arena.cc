#include "allocator/best_fit_arena.h"

#include <algorithm>
#include <bit>

#include "core/check.h"

namespace mt::internal {
namespace {

int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Note [Split rule] in bfc_allocator.h.
bool should_split(int64_t chunk, int64_t request, bool exact) {
  const int64_t rest = chunk - request;
  if (exact) return rest >= BestFitArena::kGranule;
  return rest >= std::max(BestFitArena::kGranule, std::min(request / 8, int64_t{1} << 20));
}

}  // namespace

BestFitArena::BestFitArena(SubAllocator* sub, Options options)
    : sub_(sub),
      limit_(usable_limit(options.limit_bytes)),
      allow_growth_(options.allow_growth),
      initial_region_bytes_(round_up(std::max(options.initial_region_bytes, kGranule), kGranule)) {
  MT_CHECK(sub_ != nullptr);
  MT_CHECK(limit_ > 0);
}

BestFitArena::~BestFitArena() {
  for (const Region& r : regions_) sub_->free(reinterpret_cast<void*>(r.ptr), r.size);
}

int BestFitArena::bin_of(int64_t size) {
  const int b = 63 - std::countl_zero(static_cast<uint64_t>(size / kGranule));
  return std::min(b, kNumBins - 1);
}

BestFitArena::FreeKey BestFitArena::key(ChunkId id) const {
  return {chunks_[id].size, chunks_[id].ptr, id};
}

BestFitArena::Block BestFitArena::allocate(int64_t bytes, bool exact) {
  MT_CHECK(bytes > 0 && bytes % kGranule == 0);
  if (bytes > limit_) return {};
  ChunkId id = best_fit(bytes);
  if (id == kNone) {
    if (!grow(bytes)) return {};
    id = best_fit(bytes);
    MT_CHECK(id != kNone);
  }
  return take(id, bytes, exact);
}

// Returns the smallest free chunk of at least `bytes`, the lowest address among equals.
BestFitArena::ChunkId BestFitArena::best_fit(int64_t bytes) const {
  uint64_t mask = nonempty_bins_ & (~uint64_t{0} << bin_of(bytes));
  for (; mask != 0; mask &= mask - 1) {
    const absl::btree_set<FreeKey>& bin = bins_[std::countr_zero(mask)];
    const auto it = bin.lower_bound(FreeKey{bytes, 0, 0});
    if (it != bin.end()) return std::get<2>(*it);
  }
  return kNone;
}

// Adds a region big enough for `bytes` (Note [Growth] in bfc_allocator.h).
bool BestFitArena::grow(int64_t bytes) {
  int64_t headroom = limit_ - reserved_;
  // At the limit, regions with nothing in use go back first: their bytes may make one
  // region large enough (a request larger than any region, after frees).
  if (bytes > headroom && release_free_regions() > 0) headroom = limit_ - reserved_;
  if (bytes > headroom) return false;
  int64_t size = headroom;
  if (allow_growth_) size = std::max(planned_region_bytes(), round_up(bytes, kRegionGranule));
  size = std::min(size, headroom);
  void* ptr = alloc_region(bytes, &size);
  if (ptr == nullptr) return false;
  const uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
  MT_CHECK(base % kGranule == 0);
  const ChunkId id = new_chunk(base, size);
  regions_.push_back({base, size, id});
  reserved_ += size;
  insert_free(id);
  return true;
}

// The initial size doubled once per region held, at most kMaxBytes (Note [Growth]).
int64_t BestFitArena::planned_region_bytes() const {
  int64_t size = initial_region_bytes_;
  for (size_t i = 0; i < regions_.size() && size < kMaxBytes; ++i) {
    size = std::min(size, kMaxBytes / 2) * 2;
  }
  return size;
}

// Asks the sub-allocator for `*size` bytes; when it refuses, asks again for 10% less, down
// to `bytes` (as TensorFlow does). Sets `*size` to the size obtained.
void* BestFitArena::alloc_region(int64_t bytes, int64_t* size) {
  for (int64_t s = *size;;) {
    if (void* ptr = sub_->alloc(static_cast<size_t>(s))) {
      *size = s;
      return ptr;
    }
    if (s <= bytes) return nullptr;
    s = std::max(bytes, s / 10 * 9 / kGranule * kGranule);
  }
}

BestFitArena::Block BestFitArena::take(ChunkId id, int64_t bytes, bool exact) {
  erase_free(id);
  if (should_split(chunks_[id].size, bytes, exact)) split(id, bytes);
  Chunk& c = chunks_[id];
  c.in_use = true;
  in_use_.emplace(c.ptr, id);
  return {reinterpret_cast<void*>(c.ptr), c.size};
}

// Cuts the free chunk `id` (in no bin) after `bytes`; the rest becomes a free chunk.
void BestFitArena::split(ChunkId id, int64_t bytes) {
  const ChunkId rest = new_chunk(chunks_[id].ptr + bytes, chunks_[id].size - bytes);
  Chunk& c = chunks_[id];
  Chunk& r = chunks_[rest];
  r.prev = id;
  r.next = c.next;
  if (c.next != kNone) chunks_[c.next].prev = rest;
  c.next = rest;
  c.size = bytes;
  insert_free(rest);
}

int64_t BestFitArena::free(void* ptr) {
  const auto it = in_use_.find(reinterpret_cast<uintptr_t>(ptr));
  MT_CHECK(it != in_use_.end());  // not a block of this pool, or freed twice
  ChunkId id = it->second;
  in_use_.erase(it);
  chunks_[id].in_use = false;
  const int64_t size = chunks_[id].size;
  const ChunkId next = chunks_[id].next;
  if (next != kNone && !chunks_[next].in_use) {
    erase_free(next);
    merge_next(id);
  }
  const ChunkId prev = chunks_[id].prev;
  if (prev != kNone && !chunks_[prev].in_use) {
    erase_free(prev);
    merge_next(prev);
    id = prev;
  }
  insert_free(id);
  return size;
}

// Absorbs the chunk after `id` into `id`; neither is in a bin.
void BestFitArena::merge_next(ChunkId id) {
  const ChunkId next = chunks_[id].next;
  Chunk& c = chunks_[id];
  const Chunk& n = chunks_[next];
  c.size += n.size;
  c.next = n.next;
  if (n.next != kNone) chunks_[n.next].prev = id;
  delete_chunk(next);
}

int64_t BestFitArena::block_size(const void* ptr) const {
  const auto it = in_use_.find(reinterpret_cast<uintptr_t>(ptr));
  return it == in_use_.end() ? 0 : chunks_[it->second].size;
}

int64_t BestFitArena::release_free_regions() {
  int64_t freed = 0;
  for (auto it = regions_.begin(); it != regions_.end();) {
    const Chunk& c = chunks_[it->first];
    if (c.in_use || c.size != it->size) {
      ++it;
      continue;
    }
    erase_free(it->first);
    delete_chunk(it->first);
    sub_->free(reinterpret_cast<void*>(it->ptr), it->size);
    reserved_ -= it->size;
    freed += it->size;
    it = regions_.erase(it);
  }
  return freed;
}

int64_t BestFitArena::largest_free_chunk() const {
  if (nonempty_bins_ == 0) return 0;
  return std::get<0>(*bins_[63 - std::countl_zero(nonempty_bins_)].rbegin());
}

BestFitArena::ChunkId BestFitArena::new_chunk(uintptr_t ptr, int64_t size) {
  ChunkId id;
  if (spare_ids_.empty()) {
    id = static_cast<ChunkId>(chunks_.size());
    chunks_.emplace_back();
  } else {
    id = spare_ids_.back();
    spare_ids_.pop_back();
  }
  chunks_[id] = Chunk{ptr, size, kNone, kNone, false};
  return id;
}

void BestFitArena::delete_chunk(ChunkId id) {
  chunks_[id] = Chunk{};
  spare_ids_.push_back(id);
}

void BestFitArena::insert_free(ChunkId id) {
  const int b = bin_of(chunks_[id].size);
  bins_[b].insert(key(id));
  nonempty_bins_ |= uint64_t{1} << b;
  free_bytes_ += chunks_[id].size;
}

void BestFitArena::erase_free(ChunkId id) {
  const int b = bin_of(chunks_[id].size);
  const size_t erased = bins_[b].erase(key(id));
  MT_CHECK(erased == 1);
  if (bins_[b].empty()) nonempty_bins_ &= ~(uint64_t{1} << b);
  free_bytes_ -= chunks_[id].size;
}

void BestFitArena::check_invariants() const {
  int64_t reserved = 0, free_bytes = 0;
  size_t free_chunks = 0, used_chunks = 0;
  for (const Region& r : regions_) {
    reserved += r.size;
    uintptr_t at = r.ptr;
    ChunkId prev = kNone;
    for (ChunkId id = r.first; id != kNone; prev = id, id = chunks_[id].next) {
      const Chunk& c = chunks_[id];
      MT_CHECK(c.ptr == at && c.prev == prev && c.size > 0 && c.size % kGranule == 0);
      if (c.in_use) {
        const auto it = in_use_.find(c.ptr);
        MT_CHECK(it != in_use_.end() && it->second == id);
        ++used_chunks;
      } else {
        MT_CHECK(prev == kNone || chunks_[prev].in_use);  // free neighbours coalesce
        MT_CHECK(bins_[bin_of(c.size)].contains(key(id)));
        free_bytes += c.size;
        ++free_chunks;
      }
      at += c.size;
    }
    MT_CHECK(at == r.ptr + r.size);
  }
  size_t binned = 0;
  for (int b = 0; b < kNumBins; ++b) {
    binned += bins_[b].size();
    MT_CHECK(bins_[b].empty() == ((nonempty_bins_ >> b & 1) == 0));
  }
  MT_CHECK(binned == free_chunks && used_chunks == in_use_.size());
  MT_CHECK(reserved == reserved_ && reserved_ <= limit_ && free_bytes == free_bytes_);
}

std::vector<RegionInfo> BestFitArena::regions() const {
  std::vector<RegionInfo> out;
  for (const Region& r : regions_) {
    RegionInfo& info = out.emplace_back(RegionInfo{r.ptr, r.size, {}});
    for (ChunkId id = r.first; id != kNone; id = chunks_[id].next) {
      const Chunk& c = chunks_[id];
      info.chunks.push_back(
          {c.ptr, c.size, c.in_use ? ChunkInfo::State::kInUse : ChunkInfo::State::kFree});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const RegionInfo& a, const RegionInfo& b) { return a.address < b.address; });
  return out;
}

}  // namespace mt::internal
