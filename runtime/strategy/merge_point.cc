#include "runtime/strategy/merge_point.h"

namespace mt::internal {
namespace {

absl::Status unmatched() {
  return absl::FailedPreconditionError(
      "[MirroredStrategy.run] a replica returned while others wait at a collective "
      "(all_reduce, apply_gradients): every replica must make the same collective calls in "
      "the same order");
}

}  // namespace

absl::Status MergePoint::arrive(int id, const void* part, const Merge& merge) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!failed_.ok()) return failed_;
  parts_[id] = part;
  ++arrived_;
  if (finished_ > 0 && arrived_ + finished_ == replicas_) {
    fail_locked(unmatched());
    return failed_;
  }
  const int64_t generation = generation_;
  if (id != 0) {
    if (arrived_ == replicas_) changed_.notify_all();  // replica 0 waits for the last part
    changed_.wait(lock, [&] { return generation_ != generation || !failed_.ok(); });
    return generation_ != generation ? result_ : failed_;
  }
  changed_.wait(lock, [&] { return arrived_ == replicas_ || !failed_.ok(); });
  if (!failed_.ok()) return failed_;
  lock.unlock();
  absl::Status status = merge(parts_);
  lock.lock();
  result_ = status;
  arrived_ = 0;
  ++generation_;
  changed_.notify_all();
  return status;
}

void MergePoint::finish(int) {
  std::lock_guard<std::mutex> lock(mu_);
  ++finished_;
  if (arrived_ > 0 && arrived_ + finished_ == replicas_ && failed_.ok()) {
    fail_locked(unmatched());
  }
}

bool MergePoint::abort(absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_.ok()) return false;
  fail_locked(std::move(status));
  return true;
}

void MergePoint::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  arrived_ = 0;
  finished_ = 0;
  failed_ = absl::OkStatus();
}

void MergePoint::fail_locked(absl::Status status) {
  failed_ = std::move(status);
  changed_.notify_all();
}

}  // namespace mt::internal
