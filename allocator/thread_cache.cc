#include "allocator/thread_cache.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "core/check.h"

namespace mt::internal {

constinit Mutex cache_registry_mu;

namespace {

std::atomic<uint64_t> next_registry_id{1};

// Set once this thread's ThreadCacheList has been destroyed.
thread_local constinit bool tls_caches_gone = false;

}  // namespace

// The caches this thread owns, one per pool it used; returned to their pools at exit.
struct ThreadCacheList {
  std::vector<std::unique_ptr<ThreadCache>> caches;

  ~ThreadCacheList() {
    tls_caches_gone = true;
    tls_mru_cache = {0, nullptr};
    std::vector<CachedBlock> blocks;
    MutexLock lock(&cache_registry_mu);
    for (const std::unique_ptr<ThreadCache>& cache : caches) {
      if (cache->orphaned_) continue;
      ThreadCacheRegistry* registry = cache->registry_;
      std::erase(registry->caches_, cache.get());
      blocks.clear();
      cache->drain(&blocks);
      if (!blocks.empty()) registry->sink_(blocks);
    }
  }
};

namespace {

ThreadCacheList& this_thread_caches() {
  thread_local ThreadCacheList list;
  return list;
}

}  // namespace

ThreadCache::ThreadCache(uint64_t registry_id, ThreadCacheRegistry* registry)
    : registry_id_(registry_id),
      registry_(registry),
      slots_(new void*[class_tables::kOffset[kNumSizeClasses]]) {}

void ThreadCache::spin() {
  while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
}

int ThreadCache::push(int c, void* p, CachedBlock* spill, bool* over_budget) {
  const int64_t size = class_bytes(c);
  int spilled = 0;
  lock();
  void** slots = &slots_[class_tables::kOffset[c]];
  int n = count_[c];
  if (n == class_capacity(c)) {
    spilled = n / 2;
    for (int i = 0; i < spilled; ++i) spill[i] = {slots[i], c};
    std::memmove(slots, slots + spilled, sizeof(void*) * (n - spilled));
    n -= spilled;
    bytes_ -= size * spilled;
  }
  slots[n] = p;
  count_[c] = static_cast<uint16_t>(n + 1);
  bytes_ += size;
  *over_budget = bytes_ > kBudgetBytes;
  unlock();
  return spilled;
}

void ThreadCache::trim(std::vector<CachedBlock>* out) {
  lock();
  for (int c = 0; c < kNumSizeClasses; ++c) {
    void** slots = &slots_[class_tables::kOffset[c]];
    const int n = count_[c];
    const int spilled = (n + 1) / 2;
    for (int i = 0; i < spilled; ++i) out->push_back({slots[i], c});
    std::memmove(slots, slots + spilled, sizeof(void*) * (n - spilled));
    count_[c] = static_cast<uint16_t>(n - spilled);
    bytes_ -= class_bytes(c) * spilled;
  }
  unlock();
}

void ThreadCache::fill(int c, void* const* blocks, int n) {
  lock();
  const int have = count_[c];
  MT_CHECK(have + n <= class_capacity(c));
  std::copy(blocks, blocks + n, &slots_[class_tables::kOffset[c] + have]);
  count_[c] = static_cast<uint16_t>(have + n);
  bytes_ += class_bytes(c) * n;
  unlock();
}

void ThreadCache::drain(std::vector<CachedBlock>* out) {
  lock();
  for (int c = 0; c < kNumSizeClasses; ++c) {
    void** slots = &slots_[class_tables::kOffset[c]];
    for (int i = 0; i < count_[c]; ++i) out->push_back({slots[i], c});
    count_[c] = 0;
  }
  bytes_ = 0;
  unlock();
}

ThreadCacheRegistry::ThreadCacheRegistry(Sink sink)
    : id_(next_registry_id.fetch_add(1, std::memory_order_relaxed)), sink_(std::move(sink)) {}

ThreadCacheRegistry::~ThreadCacheRegistry() {
  MutexLock lock(&cache_registry_mu);
  for (ThreadCache* cache : caches_) cache->orphaned_ = true;
  caches_.clear();
}

ThreadCache* ThreadCacheRegistry::get_slow() {
  if (tls_caches_gone) return nullptr;
  ThreadCacheList& list = this_thread_caches();
  for (const std::unique_ptr<ThreadCache>& cache : list.caches) {
    if (cache->registry_id_ == id_) {
      tls_mru_cache = {id_, cache.get()};
      return cache.get();
    }
  }
  MutexLock lock(&cache_registry_mu);
  // Caches of destroyed pools are only dropped here, so the list stays short.
  for (auto it = list.caches.begin(); it != list.caches.end();) {
    it = (*it)->orphaned_ ? list.caches.erase(it) : it + 1;
  }
  list.caches.push_back(std::make_unique<ThreadCache>(id_, this));
  ThreadCache* cache = list.caches.back().get();
  caches_.push_back(cache);
  tls_mru_cache = {id_, cache};
  return cache;
}

void ThreadCacheRegistry::drain_all(std::vector<CachedBlock>* out) {
  MutexLock lock(&cache_registry_mu);
  for (ThreadCache* cache : caches_) cache->drain(out);
}

}  // namespace mt::internal
