#pragma once
// Its code: cross_worker_ops.cc.
// WorkerCollective (internal): sums between the worker processes of a
// MultiWorkerMirroredStrategy. The runtime knows it only through this interface; the
// distributed layer implements it over the cluster's gRPC servers
// (distributed/collective_group.h), as remote devices come through runtime/eager/remote.h.
//
// A MirroredStrategy made with one combines values in two stages (cross-worker ops): its
// own cross-device ops sum over this worker's replicas, then the workers sum those sums,
// then a MEAN divides by the replicas of every worker, and the result goes back to each
// local replica's device. Every worker thus ends with the same bits.
//
// Thread safety: one call at a time (the strategy's merge point makes them).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/eager/tensor.h"
#include "runtime/strategy/cross_device_ops.h"

namespace mt::internal {

class WorkerCollective {
 public:
  virtual ~WorkerCollective() = default;
  virtual int num_workers() const = 0;
  virtual int worker_index() const = 0;
  // Returns the sum over every worker of each of `values`, host tensors of float32,
  // float64, int32 or int64, each of one shape and dtype on every worker, in the same order.
  virtual absl::StatusOr<std::vector<Tensor>> all_reduce_sum(const std::vector<Tensor>& values) = 0;
};

// Returns `op` of each of `values` (tensors on any device, one per value of the batch)
// over the workers, divided for MEAN by `count`, each on the device of its input. bfloat16
// and float16 values are summed in float32 and rounded once.
absl::StatusOr<std::vector<Tensor>> all_reduce_between_workers(WorkerCollective& workers,
                                                               const std::vector<Tensor>& values,
                                                               distribute::ReduceOp op,
                                                               double count);

// Returns cross-device ops that sum over this worker's replicas with `local`, then over
// the workers, and divide a MEAN by `num_replicas_in_sync` (every worker's replicas).
std::unique_ptr<CrossDeviceOps> make_cross_worker_ops(std::unique_ptr<CrossDeviceOps> local,
                                                      std::shared_ptr<WorkerCollective> workers,
                                                      int num_replicas_in_sync);

}  // namespace mt::internal
