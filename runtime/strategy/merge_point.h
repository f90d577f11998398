#pragma once
// MergePoint (internal): where the replicas of one MirroredStrategy::run meet at each
// collective (an all_reduce, an optimizer step). Every replica deposits its part and
// waits; once all have arrived, replica 0's thread runs the merge over all parts, in
// replica order, and its status becomes every replica's. One thread issues every merge,
// as TensorFlow's merge_call runs on one thread: NCCL's multi-GPU group launches and each
// thread's current CUDA device then never change hands between steps. Replicas pass the
// same merge points in the same order, so one MergePoint serves them all, one generation
// after another.
//
// Nothing hangs: when a replica fails it aborts the point, which fails every waiter and
// every later arrival; when a replica returns from its function while others wait at a
// point it will never reach, the waiters fail with FailedPrecondition.
//
// Thread safety: arrive, finish and abort may be called from any replica's thread.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace mt::internal {

class MergePoint {
 public:
  using Merge = std::function<absl::Status(absl::Span<const void* const> parts)>;

  explicit MergePoint(int replicas) : replicas_(replicas), parts_(replicas) {}

  // Deposits replica `id`'s `part` and waits for the others; replica 0 then calls `merge`
  // (without the lock). Returns the merge's status, or the abort's.
  absl::Status arrive(int id, const void* part, const Merge& merge);
  // Marks replica `id` as returned from its function.
  void finish(int id);
  // Fails every waiter and later arrival with `status`; returns whether it was the first
  // abort since reset().
  bool abort(absl::Status status);
  // Prepares the point for the next run(): nobody waits, nobody failed.
  void reset();

 private:
  void fail_locked(absl::Status status);

  const int replicas_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<const void*> parts_;
  int arrived_ = 0;
  int finished_ = 0;
  int64_t generation_ = 0;
  absl::Status result_;  // of the last merge
  absl::Status failed_;
};

}  // namespace mt::internal
