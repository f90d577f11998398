#pragma once
// RemoteDevice: a logical device of another task, as this process's runtime sees it
// (internal; the hooks are in runtime/remote.h).
//
// Note [Remote tensors]
// An op placed on a remote device runs on its task (WorkerService::RunOp); the task keeps
// the result and answers with a handle, which the client's TensorImpl holds as its `data`
// pointer. Inputs on the same task travel as handles, all others as values. Reading the
// tensor (to_vector, printing, a copy to a local device) fetches its bytes; the last
// handle's going frees the remote buffer (RemoteAllocator::deallocate sends Delete), so
// get_memory_info on the remote device, which asks the task, sees it go. A tensor on task
// A used on task B travels through the client. A task that restarted has lost its
// tensors: using one is NotFound, while new ones work.

#include <memory>
#include <string>

#include "distributed/task_client.h"
#include "runtime/device.h"
#include "runtime/remote.h"

namespace mt::distributed::internal {

class RemoteDevice final : public mt::internal::Device, public mt::internal::RemoteOps {
 public:
  // Device `remote_index` of `client`'s task, of `type` with logical id `id` there.
  RemoteDevice(std::shared_ptr<TaskClient> client, int remote_index, DeviceType type, int id);

  mt::internal::RemoteOps* remote() override { return this; }

  absl::StatusOr<Tensor> run(OpId op, absl::Span<const Tensor* const> inputs, const OpAttrs& attrs,
                             const OutputMeta& out) override;
  absl::StatusOr<Tensor> run_source(OpId op, DType dtype, const Shape& shape, const void* host_data,
                                    const OpAttrs& attrs) override;
  absl::StatusOr<Tensor> copy_in(const Tensor& t) override;

  // Fetches remote tensor `src` (a handle) into host memory.
  absl::Status copy_to_host(void* dst, const void* src, size_t bytes) override;
  // Remote buffers are written only by ops (runtime/remote.h): these are not called.
  absl::Status copy_from_host(void* dst, const void* src, size_t bytes) override;
  absl::StatusOr<PendingUse> copy_from_device(void* dst, Device& from, const void* src,
                                              size_t bytes) override;
  absl::Status synchronize() override { return absl::OkStatus(); }

 private:
  // Sends `request` and wraps the answer in a tensor on this device.
  absl::StatusOr<Tensor> send(proto::RunOpRequest& request, OpId op);
  // Adds `t` to `request` as a handle when it lives on this task, else as a value.
  absl::Status add_input(const Tensor& t, OpId op, proto::RunOpRequest* request);

  std::shared_ptr<TaskClient> client_;
  int remote_index_;
};

// Returns the handle a remote tensor's data pointer holds, and back.
inline uint64_t handle_of(const void* data) { return reinterpret_cast<uintptr_t>(data); }
inline void* data_of(uint64_t handle) { return reinterpret_cast<void*>(handle); }

}  // namespace mt::distributed::internal
