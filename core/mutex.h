#pragma once
// Mutex and MutexLock: std::mutex annotated for Clang's thread-safety analysis, so that
// ABSL_GUARDED_BY checks the allocator's lock discipline (mt::internal).
//
//   internal::Mutex mu;
//   int n ABSL_GUARDED_BY(mu);
//   { internal::MutexLock lock(&mu); ++n; }
//
// Note [Why not absl::Mutex]: the prebuilt absl (Debian, 20220623) is not compiled with
// ThreadSanitizer, so TSan cannot see absl::Mutex's lock operations and reports false races
// on everything it guards. TSan intercepts std::mutex, which keeps sanitizer runs meaningful.

#include <mutex>

#include "absl/base/thread_annotations.h"

namespace mt::internal {

class ABSL_LOCKABLE Mutex {
 public:
  constexpr Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // Returns true when it took the lock without waiting.
  bool try_lock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) { return mu_.try_lock(); }

 private:
  std::mutex mu_;
};

// Holds `mu` for its scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace mt::internal
