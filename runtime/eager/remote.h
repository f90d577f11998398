#pragma once
// Its code: distributed/ (remote_device.cc and the cluster).
// Remote devices (internal): the runtime's two hooks for devices that live in another
// process, implemented by distributed/ (Note [Remote tensors] in distributed/remote_device.h).
//
// A remote device is a Device whose remote() is not null. A tensor on it holds no local
// memory: its `data` is the handle of the buffer in the remote task's pool, its allocator
// frees that buffer remotely and reports the remote pool's statistics, and copy_to_host
// fetches the bytes. execute() hands every op placed on a remote device to RemoteOps.

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/op_attrs.h"
#include "kernels/op_def.h"
#include "kernels/op_id.h"
#include "placement/placer.h"
#include "runtime/eager/device.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

// What a remote device does instead of running kernels in this process.
class RemoteOps {
 public:
  virtual ~RemoteOps() = default;

  // Runs `op` on the remote device. Inputs on the same task travel by handle, others by
  // value; the result stays remote. `out` is the locally inferred output.
  virtual absl::StatusOr<Tensor> run(OpId op, absl::Span<const Tensor* const> inputs,
                                     const OpAttrs& attrs, const OutputMeta& out) = 0;

  // Runs a source op (_EagerConst with `host_data`, Fill) on the remote device.
  virtual absl::StatusOr<Tensor> run_source(OpId op, DType dtype, const Shape& shape,
                                            const void* host_data, const OpAttrs& attrs) = 0;

  // Returns a copy of `t`, a tensor of another device, on the remote device.
  virtual absl::StatusOr<Tensor> copy_in(const Tensor& t) = 0;
};

// One remote device as the runtime adds it: the device and how the placer sees it.
struct RemoteDeviceEntry {
  std::unique_ptr<Device> device;
  DeviceInfo info;  // with its job, task and the remote task's kernels
};

// A connected cluster (mt::config::experimental_connect_to_cluster): it creates the remote
// devices of every task when the runtime initialises. Thread-safe.
class RemoteCluster {
 public:
  virtual ~RemoteCluster() = default;
  virtual std::vector<RemoteDeviceEntry> make_devices() = 0;
};

// Makes the next initialisation add `cluster`'s devices. FailedPrecondition once the
// runtime is initialised (as for every other configuration).
absl::Status set_remote_cluster(std::shared_ptr<RemoteCluster> cluster);

}  // namespace mt::internal
