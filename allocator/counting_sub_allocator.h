#pragma once
// CountingSubAllocator: a SubAllocator that forwards to another, records every call, and can
// refuse large requests, so that tests can check when a pool reaches its driver.
//
//   CountingSubAllocator::Log log;  // must outlive the pool
//   BFCAllocator pool(options, CountingSubAllocator::wrap(make_host_sub_allocator(), &log));
//   pool.deallocate(pool.allocate(256));
//   log.allocs();  // 1: the first region

#include <cstdint>
#include <memory>
#include <vector>

#include "allocator/sub_allocator.h"
#include "core/mutex.h"

namespace mt {

class CountingSubAllocator final : public SubAllocator {
 public:
  // What went through one or more CountingSubAllocators. Thread-safe.
  class Log {
   public:
    // Returns the sizes of the successful alloc calls, in order.
    std::vector<int64_t> alloc_sizes() const {
      internal::MutexLock lock(&mu_);
      return alloc_sizes_;
    }
    // Returns the number of successful alloc calls.
    int64_t allocs() const { return static_cast<int64_t>(alloc_sizes().size()); }
    // Returns the number of alloc calls that returned nullptr.
    int64_t refused() const {
      internal::MutexLock lock(&mu_);
      return refused_;
    }
    // Returns the number of free calls.
    int64_t frees() const {
      internal::MutexLock lock(&mu_);
      return frees_;
    }
    // Returns the bytes allocated and not yet freed.
    int64_t bytes_held() const {
      internal::MutexLock lock(&mu_);
      return bytes_held_;
    }
    // Makes every later alloc of more than `bytes` return nullptr, as a driver that is out
    // of memory would.
    void refuse_above(int64_t bytes) {
      internal::MutexLock lock(&mu_);
      refuse_above_ = bytes;
    }

   private:
    friend class CountingSubAllocator;
    mutable internal::Mutex mu_;
    std::vector<int64_t> alloc_sizes_ ABSL_GUARDED_BY(mu_);
    int64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
    int64_t frees_ ABSL_GUARDED_BY(mu_) = 0;
    int64_t bytes_held_ ABSL_GUARDED_BY(mu_) = 0;
    int64_t refuse_above_ ABSL_GUARDED_BY(mu_) = INT64_MAX;
  };

  // Returns a CountingSubAllocator over `base` that records into `log`.
  static std::unique_ptr<SubAllocator> wrap(std::unique_ptr<SubAllocator> base, Log* log) {
    return std::make_unique<CountingSubAllocator>(std::move(base), log);
  }

  CountingSubAllocator(std::unique_ptr<SubAllocator> base, Log* log)
      : base_(std::move(base)), log_(log) {}

  void* alloc(size_t bytes) override {
    internal::MutexLock lock(&log_->mu_);
    void* ptr = static_cast<int64_t>(bytes) > log_->refuse_above_ ? nullptr : base_->alloc(bytes);
    if (ptr == nullptr) {
      ++log_->refused_;
      return nullptr;
    }
    log_->alloc_sizes_.push_back(static_cast<int64_t>(bytes));
    log_->bytes_held_ += static_cast<int64_t>(bytes);
    return ptr;
  }

  void free(void* ptr, size_t bytes) override {
    internal::MutexLock lock(&log_->mu_);
    ++log_->frees_;
    log_->bytes_held_ -= static_cast<int64_t>(bytes);
    base_->free(ptr, bytes);
  }

 private:
  const std::unique_ptr<SubAllocator> base_;
  Log* const log_;
};

}  // namespace mt
