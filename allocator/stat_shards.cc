#include "allocator/stat_shards.h"

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"

namespace mt::internal {
namespace {

constinit Mutex shard_mu;
bool shard_taken[StatShards::kOwnedShards] ABSL_GUARDED_BY(shard_mu) = {};

// Gives this thread's owned index back at thread exit (Note [Shard ownership]).
struct ShardClaim {
  int index = -1;
  ~ShardClaim() {
    // Anything this thread still frees from later destructors goes to the shared shard.
    tls_shard_index = StatShards::kSharedShard;
    if (index < 0) return;
    MutexLock lock(&shard_mu);
    shard_taken[index] = false;
  }
};

}  // namespace

int StatShards::claim_shard_index() {
  thread_local ShardClaim claim;  // registers the release before the index is taken
  MutexLock lock(&shard_mu);
  int index = kSharedShard;
  for (int i = 0; i < kOwnedShards; ++i) {
    if (!shard_taken[i]) {
      shard_taken[i] = true;
      index = i;
      break;
    }
  }
  claim.index = index == kSharedShard ? -1 : index;
  tls_shard_index = index;
  return index;
}

}  // namespace mt::internal
