#pragma once
// Declarations only.
// StrategyState (internal): what a MirroredStrategy holds, shared by mirrored_strategy.cc
// (the public class) and replica_hooks.cc (what variables and optimizers ask of it).

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/strategy/cross_device_ops.h"
#include "runtime/strategy/merge_point.h"
#include "runtime/strategy/mirrored_strategy.h"
#include "runtime/strategy/replica_threads.h"
#include "runtime/strategy/worker_collective.h"

namespace mt::distribute::internal {

struct StrategyState {
  // `workers`: the other processes whose replicas this strategy's combine with (null: none).
  StrategyState(std::vector<std::string> names, std::vector<mt::internal::Device*> devices,
                std::unique_ptr<mt::internal::CrossDeviceOps> ops,
                std::shared_ptr<mt::internal::WorkerCollective> workers = nullptr);

  // Returns `op` of value k over the replicas, on each replica's device, after checking that
  // the replicas agree on the count, shapes and dtypes (InvalidArgument naming `caller`
  // otherwise). A value on another device than its replica's is copied there first.
  absl::StatusOr<mt::internal::PerReplicaValues> all_reduce(
      const char* caller, ReduceOp op, const mt::internal::PerReplicaValues& in);

  // Returns replica `replica`'s context.
  ReplicaContext& context(int replica) { return contexts[replica]; }

  const uint64_t id;                     // unique in the process, never reused
  const std::vector<std::string> names;  // full device names, in replica order
  const std::vector<mt::internal::Device*> devices;
  const std::unique_ptr<mt::internal::CrossDeviceOps> ops;
  const std::shared_ptr<mt::internal::WorkerCollective> workers;
  const int num_replicas_in_sync;  // every worker's replicas
  const int first_replica;         // the replica_id_in_sync_group of this process's first
  mt::internal::MergePoint merge;
  mt::internal::ReplicaThreads threads;
  std::mutex run_mu;  // one run() at a time
  std::vector<ReplicaContext> contexts;
  // The last ReplicaContext::all_reduce's results: written by its merge, then each replica
  // takes its own row before any replica can reach the next merge.
  mt::internal::PerReplicaValues reduced;
};

// The calling thread's replica inside run(): its strategy and id; {nullptr, -1} elsewhere.
struct ReplicaBinding {
  StrategyState* state = nullptr;
  int replica = -1;
};
ReplicaBinding& replica_binding();

// The strategies whose scope() the calling thread is in, innermost last.
std::vector<StrategyState*>& scope_stack();

}  // namespace mt::distribute::internal
