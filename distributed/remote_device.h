#pragma once
// RemoteDevice: a logical device of another task, as this process's runtime sees it
// (internal; the hooks are in runtime/eager/remote.h).
//
// Note [Remote tensors]
// An op placed on a remote device runs on its task, enqueued (Note [Asynchronous remote
// ops] in distributed/task_client.h); the task keeps the result under the handle the
// client chose, which the client's TensorImpl holds as its `data` pointer, with the shape
// and dtype inferred here. Inputs on the same task travel as handles, all others as
// values (uploaded in pieces when large). Reading the
// tensor (to_vector, printing, a copy to a local device) fetches its bytes; the last
// handle's going frees the remote buffer (RemoteAllocator::deallocate sends Delete), so
// get_memory_info on the remote device, which asks the task, sees it go. A tensor on task
// A used on task B travels through the client. A task that restarted has lost its
// tensors: using one is NotFound, while new ones work.

#include <memory>
#include <string>
#include <vector>

#include "distributed/task_client.h"
#include "runtime/eager/device.h"
#include "runtime/eager/remote.h"
#include "runtime/eager/tensor_impl.h"

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
  // Remote buffers are written only by ops (runtime/eager/remote.h): these are not called.
  absl::Status copy_from_host(void* dst, const void* src, size_t bytes) override;
  absl::StatusOr<PendingUse> copy_from_device(void* dst, Device& from, const void* src,
                                              size_t bytes) override;
  absl::Status synchronize() override { return absl::OkStatus(); }

 private:
  // Enqueues `request` and returns the tensor of `dtype` and `shape` it will make here;
  // `deletes` are freed on the task after it.
  absl::StatusOr<Tensor> send(proto::RunOpRequest& request, OpId op, DType dtype, Shape shape,
                              std::vector<uint64_t> deletes);
  // Adds `t` to `request` as a handle when it lives on this task, else as a value; a large
  // one is uploaded first, its handle added to `deletes`.
  absl::Status add_input(const Tensor& t, OpId op, proto::RunOpRequest* request,
                         std::vector<uint64_t>* deletes);
  // Uploads `t` (of another device) as a new tensor of this device; returns its handle.
  absl::StatusOr<uint64_t> upload(const mt::internal::TensorImpl& t, const char* op);
  // Returns the tensor of this device that `handle` names.
  Tensor wrap(uint64_t handle, DType dtype, Shape shape);

  std::shared_ptr<TaskClient> client_;
  int remote_index_;
};

// Returns the handle a remote tensor's data pointer holds, and back.
inline uint64_t handle_of(const void* data) { return reinterpret_cast<uintptr_t>(data); }
inline void* data_of(uint64_t handle) { return reinterpret_cast<void*>(handle); }

}  // namespace mt::distributed::internal
