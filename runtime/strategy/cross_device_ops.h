#pragma once
// Its code: all_reduce.cc, reduction_to_one_device.cc, cuda/nccl_all_reduce.cc.
// CrossDeviceOps (internal): how a MirroredStrategy combines one value per replica into the
// reduced value on every replica's device. Two implementations, chosen as TensorFlow's
// MirroredStrategy chooses them (Note [Choosing the cross-device ops] in
// mirrored_strategy.cc):
// - NCCL all-reduce (nccl_all_reduce.h): every replica a distinct physical GPU, NCCL
//   loaded; the values packed into buckets, each bucket one ncclAllReduce on each GPU's
//   stream, with no host synchronisation.
// - ReductionToOneDevice: AddN of every replica's value on one device, then a copy to each
//   replica's device: virtual GPUs of one card, CPUs, or no NCCL.
//
// Thread safety: one batch at a time (the strategy's merge point runs them).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/eager/tensor.h"
#include "runtime/strategy/reduce_op.h"

namespace mt::internal {

class Device;

// per_replica[r][k]: value k of replica r, on replica r's device. The caller checks that
// every replica has the same count, and value k the same shape and dtype everywhere.
using PerReplicaValues = std::vector<std::vector<Tensor>>;

class CrossDeviceOps {
 public:
  virtual ~CrossDeviceOps() = default;
  // Returns "NcclAllReduce" or "ReductionToOneDevice".
  virtual const char* name() const = 0;
  // Returns out[r][k]: the reduction of value k over the replicas, on replica r's device.
  virtual absl::StatusOr<PerReplicaValues> batch_all_reduce(distribute::ReduceOp op,
                                                            const PerReplicaValues& in) = 0;
};

// Returns AddN on `reduce_to` (a device name) followed by a copy to each of `devices`.
std::unique_ptr<CrossDeviceOps> make_reduction_to_one_device(std::vector<std::string> devices,
                                                             std::string reduce_to);

// Returns NCCL all-reduce over `devices` (local GPUs, each on its own physical card), with
// values packed into buckets of at most `bucket_bytes`. FailedPrecondition saying why when
// NCCL cannot be loaded or its communicators cannot be created; Unimplemented in a build
// without CUDA.
absl::StatusOr<std::unique_ptr<CrossDeviceOps>> make_nccl_all_reduce(
    const std::vector<Device*>& devices, int64_t bucket_bytes);

}  // namespace mt::internal
