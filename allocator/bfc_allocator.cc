#include "allocator/bfc_allocator.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "core/check.h"

namespace mt {
namespace {

using internal::CachedBlock;
using internal::class_bytes;
using internal::class_capacity;
using internal::MutexLock;
using internal::size_class;
using internal::ThreadCache;

// The central lists of one pool hold at most this much; beyond it blocks go to the arena.
constexpr int64_t kCentralBudgetBytes = int64_t{8} << 20;

// Returns the largest class size within both the option and the limit: requests up to it
// take the fast path, and their class blocks always fit under the limit.
size_t fast_path_bytes(int64_t option, int64_t max_request) {
  const int64_t cap = std::min({option, max_request, int64_t{internal::kMaxClassBytes}});
  if (cap < 256) return 0;
  int c = size_class(static_cast<size_t>(cap));
  if (class_bytes(c) > cap) --c;
  return static_cast<size_t>(class_bytes(c));
}

}  // namespace

BFCAllocator::BFCAllocator(Options options, std::unique_ptr<SubAllocator> sub)
    : options_(std::move(options)),
      max_request_(internal::BestFitArena::usable_limit(options_.limit_bytes)),
      max_cached_(
          fast_path_bytes(options_.max_cached_block_bytes, static_cast<int64_t>(max_request_))),
      sub_(std::move(sub)),
      arena_(sub_.get(), {.limit_bytes = options_.limit_bytes,
                          .allow_growth = options_.allow_growth,
                          .initial_region_bytes = options_.initial_region_bytes}),
      caches_([this](std::vector<CachedBlock>& blocks) {
        MutexLock lock(&mu_);
        for (const CachedBlock& b : blocks) free_to_arena(b.ptr);
        publish_arena_stats();
      }) {
  MT_CHECK(options_.limit_bytes >= 256);
  MT_CHECK(options_.allow_growth || options_.limit_bytes != kUnlimited);
}

BFCAllocator::~BFCAllocator() {
  std::vector<Pending> pending;
  {
    MutexLock lock(&pending_mu_);
    pending.swap(pending_);
  }
  for (const Pending& p : pending) {
    if (p.use.release != nullptr) p.use.release(p.use.handle);
  }
}

void* BFCAllocator::allocate(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  if (bytes > max_request_) return nullptr;
  if (num_pending_.load(std::memory_order_relaxed) != 0) poll_pending(/*wait=*/false);
  const bool small = bytes <= max_cached_;
  void* p = small ? allocate_small(size_class(bytes)) : allocate_large(bytes);
  if (p != nullptr) return p;
  reclaim();
  return small ? allocate_small(size_class(bytes)) : allocate_large(bytes);
}

void* BFCAllocator::allocate_small(int c) {
  ThreadCache* cache = caches_.get();
  if (cache != nullptr) {
    if (void* p = cache->pop(c)) {
      shards_.add(class_bytes(c));
      return p;
    }
  }
  return refill(c, cache);
}

// Serves a fast-path miss: up to half a cache of class `c` from the central list, else one
// block of the class's size from the arena.
void* BFCAllocator::refill(int c, ThreadCache* cache) {
  void* batch[ThreadCache::kMaxSpill];
  int n = 0;
  void* p = nullptr;
  {
    MutexLock lock(&mu_);
    std::vector<void*>& central = central_[c];
    if (!central.empty()) {
      n = cache == nullptr ? 1 : std::min<int>(central.size(), class_capacity(c) / 2);
      std::copy(central.end() - n, central.end(), batch);
      central.resize(central.size() - n);
      central_bytes_ -= class_bytes(c) * n;
      p = batch[--n];
    } else {
      p = arena_.allocate(class_bytes(c), /*exact=*/true).ptr;
      // A block the tags cannot hold (beyond 48 bits) is simply served as a large one.
      if (p != nullptr) tags_.set(p, static_cast<uint8_t>(c + 1));
      publish_arena_stats();
    }
  }
  if (n > 0) cache->fill(c, batch, n);
  if (p != nullptr) shards_.add(class_bytes(c), /*raise=*/true);
  return p;
}

void* BFCAllocator::allocate_large(size_t bytes) {
  const int64_t rounded = (static_cast<int64_t>(bytes) + 255) / 256 * 256;
  internal::BestFitArena::Block block;
  {
    MutexLock lock(&mu_);
    block = arena_.allocate(rounded, /*exact=*/false);
    publish_arena_stats();
  }
  if (block.ptr != nullptr) shards_.add(block.size, /*raise=*/true);
  return block.ptr;
}

void BFCAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  const uint8_t tag = tags_.get(ptr);
  if (tag == 0) return deallocate_large(ptr);
  const int c = tag - 1;
  shards_.sub(class_bytes(c));
  CachedBlock spill[ThreadCache::kMaxSpill];
  ThreadCache* cache = caches_.get();
  if (cache == nullptr) {  // this thread is exiting
    spill[0] = {ptr, c};
    return give_back(spill, 1);
  }
  bool over_budget = false;
  if (const int n = cache->push(c, ptr, spill, &over_budget); n > 0) give_back(spill, n);
  if (over_budget) {
    std::vector<CachedBlock> trimmed;
    cache->trim(&trimmed);
    give_back(trimmed.data(), static_cast<int>(trimmed.size()));
  }
}

void BFCAllocator::deallocate_large(void* ptr) {
  int64_t size;
  {
    MutexLock lock(&mu_);
    size = arena_.free(ptr);
    publish_arena_stats();
  }
  shards_.sub(size);
}

// Takes blocks spilled by a cache: into the central lists while they have room, else back
// into the arena.
void BFCAllocator::give_back(const CachedBlock* blocks, int n) {
  MutexLock lock(&mu_);
  bool freed = false;
  for (int i = 0; i < n; ++i) {
    const CachedBlock& b = blocks[i];
    std::vector<void*>& central = central_[b.size_class];
    const int64_t size = class_bytes(b.size_class);
    if (static_cast<int>(central.size()) < class_capacity(b.size_class) &&
        central_bytes_ + size <= kCentralBudgetBytes) {
      central.push_back(b.ptr);
      central_bytes_ += size;
    } else {
      free_to_arena(b.ptr);
      freed = true;
    }
  }
  if (freed) publish_arena_stats();
}

void BFCAllocator::free_to_arena(void* ptr) {
  tags_.clear(ptr);
  arena_.free(ptr);
}

// Returns every cached and central block to the arena and frees completed pending blocks.
void BFCAllocator::reclaim() {
  poll_pending(/*wait=*/true);
  std::vector<CachedBlock> blocks;
  caches_.drain_all(&blocks);
  MutexLock lock(&mu_);
  for (const CachedBlock& b : blocks) free_to_arena(b.ptr);
  for (std::vector<void*>& central : central_) {
    for (void* p : central) free_to_arena(p);
    central.clear();
  }
  central_bytes_ = 0;
  publish_arena_stats();
}

void BFCAllocator::deallocate_after(void* ptr, PendingUse use) {
  if (ptr == nullptr) {
    if (use.release != nullptr) use.release(use.handle);
    return;
  }
  MT_CHECK(use.query != nullptr);
  MutexLock lock(&pending_mu_);
  pending_.push_back({ptr, use});
  num_pending_.store(static_cast<int64_t>(pending_.size()), std::memory_order_relaxed);
}

// Frees the blocks whose pending use has completed. Without `wait`, gives up at once when
// another thread is polling.
void BFCAllocator::poll_pending(bool wait) {
  std::vector<Pending> done;
  if (wait) {
    MutexLock lock(&pending_mu_);
    take_completed(&done);
  } else {
    if (!pending_mu_.try_lock()) return;
    take_completed(&done);
    pending_mu_.unlock();
  }
  for (const Pending& p : done) {
    deallocate(p.ptr);
    if (p.use.release != nullptr) p.use.release(p.use.handle);
  }
}

void BFCAllocator::take_completed(std::vector<Pending>* done) {
  for (size_t i = 0; i < pending_.size();) {
    if (pending_[i].use.query(pending_[i].use.handle)) {
      done->push_back(pending_[i]);
      pending_[i] = pending_.back();
      pending_.pop_back();
    } else {
      ++i;
    }
  }
  num_pending_.store(static_cast<int64_t>(pending_.size()), std::memory_order_relaxed);
}

// Note [Peak bound]: the shards are summed while other threads update them, so a sum can
// count a block that is being freed together with a later block that reuses its bytes, and
// overshoot what was ever in use. Every block a caller holds is a chunk the arena has out,
// so the arena's high-water mark of bytes out (kept exactly under mu_, never above the
// limit) bounds both figures.
// Note [Completed pending frees]: a block passed to deallocate_after whose use has completed
// is freed here, before counting, so that the figures hit zero the moment the last tensor is
// gone rather than at the next allocation. Freeing it changes what stats() reports, nothing
// a caller could otherwise observe, hence the const_cast.
MemoryStats BFCAllocator::stats() const {
  if (num_pending_.load(std::memory_order_relaxed) != 0) {
    const_cast<BFCAllocator*>(this)->poll_pending(/*wait=*/true);
  }
  const int64_t in_use = shards_.raise_peak();  // one sum of the shards
  const int64_t bound = arena_high_.load(std::memory_order_relaxed);
  MemoryStats s;
  s.bytes_in_use = std::min(in_use, bound);
  s.peak_bytes_in_use = std::max(s.bytes_in_use, std::min(shards_.peak(), bound));
  s.bytes_reserved = reserved_.load(std::memory_order_relaxed);
  s.bytes_limit = options_.limit_bytes;
  s.num_allocs = shards_.allocs();
  s.largest_free_block = largest_free_.load(std::memory_order_relaxed);
  const int64_t free_bytes = free_.load(std::memory_order_relaxed);
  if (free_bytes > 0) {
    s.fragmentation = 1.0 - static_cast<double>(s.largest_free_block) / free_bytes;
  }
  return s;
}

MemoryUsage BFCAllocator::usage() const {
  if (num_pending_.load(std::memory_order_relaxed) != 0) {
    const_cast<BFCAllocator*>(this)->poll_pending(/*wait=*/true);
  }
  const int64_t bound = arena_high_.load(std::memory_order_relaxed);
  return {std::min(shards_.in_use(), bound), reserved_.load(std::memory_order_relaxed)};
}

void BFCAllocator::reset_peak() {
  if (num_pending_.load(std::memory_order_relaxed) != 0) poll_pending(/*wait=*/true);
  MutexLock lock(&mu_);
  shards_.reset_peak();
  arena_high_.store(arena_.reserved_bytes() - arena_.free_bytes(), std::memory_order_relaxed);
}

int64_t BFCAllocator::release_unused() {
  reclaim();
  MutexLock lock(&mu_);
  const int64_t freed = arena_.release_free_regions();
  publish_arena_stats();
  return freed;
}

std::vector<RegionInfo> BFCAllocator::regions() const {
  if (num_pending_.load(std::memory_order_relaxed) != 0) {  // Note [Completed pending frees]
    const_cast<BFCAllocator*>(this)->poll_pending(/*wait=*/true);
  }
  MutexLock lock(&mu_);
  std::vector<RegionInfo> out = arena_.regions();
  absl::flat_hash_set<uintptr_t> central;
  for (const std::vector<void*>& list : central_) {
    for (void* p : list) central.insert(reinterpret_cast<uintptr_t>(p));
  }
  for (RegionInfo& region : out) {
    for (ChunkInfo& chunk : region.chunks) {
      if (central.contains(chunk.address)) chunk.state = ChunkInfo::State::kCached;
    }
  }
  return out;
}

int64_t BFCAllocator::allocated_size(const void* ptr) const {
  if (ptr == nullptr) return 0;
  if (const uint8_t tag = tags_.get(ptr); tag != 0) return class_bytes(tag - 1);
  MutexLock lock(&mu_);
  return arena_.block_size(ptr);
}

void BFCAllocator::publish_arena_stats() {
  reserved_.store(arena_.reserved_bytes(), std::memory_order_relaxed);
  free_.store(arena_.free_bytes(), std::memory_order_relaxed);
  largest_free_.store(arena_.largest_free_chunk(), std::memory_order_relaxed);
  const int64_t out = arena_.reserved_bytes() - arena_.free_bytes();
  if (out > arena_high_.load(std::memory_order_relaxed)) {
    arena_high_.store(out, std::memory_order_relaxed);
  }
}

}  // namespace mt
