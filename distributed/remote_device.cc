#include "distributed/remote_device.h"

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "distributed/tensor_codec.h"
#include "runtime/eager/tensor_impl.h"

namespace mt::distributed::internal {
namespace {

using mt::internal::TensorImpl;

// The pool of a remote device: it allocates nothing here; freeing a tensor frees its
// buffer on the task, and statistics are the task's (zero while it cannot be reached).
class RemoteAllocator final : public Allocator {
 public:
  RemoteAllocator(std::shared_ptr<TaskClient> client, int device, std::string name)
      : client_(std::move(client)), device_(device), name_(std::move(name)) {}

  std::string_view name() const override { return name_; }
  void* allocate(size_t) override { return nullptr; }
  void deallocate(void* ptr) override {
    if (ptr != nullptr) client_->release(handle_of(ptr));
  }
  void deallocate_after(void* ptr, PendingUse use) override {
    if (use.release != nullptr) use.release(use.handle);  // remote reads are synchronous
    deallocate(ptr);
  }
  MemoryStats stats() const override {
    absl::StatusOr<MemoryStats> s = client_->memory_info(device_);
    return s.ok() ? *s : MemoryStats{};
  }
  void reset_peak() override {}
  int64_t release_unused() override { return 0; }

 private:
  std::shared_ptr<TaskClient> client_;
  int device_;
  std::string name_;
};

absl::Status not_remote_copy() {
  return absl::InternalError("remote buffers are written only by ops on their task");
}

}  // namespace

RemoteDevice::RemoteDevice(std::shared_ptr<TaskClient> client, int remote_index, DeviceType type,
                           int id)
    : Device(type, id, absl::StrCat(client->name(), "/device:", device_type_name(type), ":", id),
             std::make_unique<RemoteAllocator>(client, remote_index,
                                               absl::StrCat(client->job(), "_", client->task(), "_",
                                                            device_type_name(type), "_", id))),
      client_(std::move(client)),
      remote_index_(remote_index) {}

absl::StatusOr<uint64_t> RemoteDevice::upload(const TensorImpl& t, const char* op) {
  const void* host = t.data;
  std::vector<char> staging;  // for bytes not in this process's host memory
  if (t.device->type() != DeviceType::kCPU || t.device->remote() != nullptr) {
    staging.resize(t.bytes());
    MT_RETURN_IF_ERROR(t.device->copy_to_host(staging.data(), t.data, t.bytes()));
    host = staging.data();
  }
  uint64_t handle = client_->new_handle();
  MT_RETURN_IF_ERROR(client_->upload(handle, remote_index_, t.dtype, t.shape, host, t.bytes(), op));
  return handle;
}

absl::Status RemoteDevice::add_input(const Tensor& t, OpId op, proto::RunOpRequest* request,
                                     std::vector<uint64_t>* deletes) {
  const TensorImpl& impl = *t.impl();
  auto* other = dynamic_cast<RemoteDevice*>(impl.device->remote());
  if (other != nullptr && other->client_ == client_) {
    request->add_inputs()->set_handle(handle_of(impl.data));
    return absl::OkStatus();
  }
  MT_RETURN_IF_ERROR(client_->check_size(impl.bytes(), op_name(op)));
  if (impl.bytes() <= kInlineBytes) {
    return encode_tensor(impl, request->add_inputs()->mutable_value());
  }
  MT_ASSIGN_OR_RETURN(uint64_t handle, upload(impl, op_name(op)));
  request->add_inputs()->set_handle(handle);
  deletes->push_back(handle);  // a temporary, freed after the op
  return absl::OkStatus();
}

Tensor RemoteDevice::wrap(uint64_t handle, DType dtype, Shape shape) {
  return Tensor(new TensorImpl(dtype, std::move(shape), this, data_of(handle)));
}

absl::StatusOr<Tensor> RemoteDevice::send(proto::RunOpRequest& request, OpId op, DType dtype,
                                          Shape shape, std::vector<uint64_t> deletes) {
  request.set_device(remote_index_);
  request.set_op(static_cast<int>(op));
  uint64_t handle = client_->new_handle();
  request.set_handle(handle);
  MT_RETURN_IF_ERROR(client_->enqueue(&request, op_name(op), std::move(deletes)));
  return wrap(handle, dtype, std::move(shape));
}

absl::StatusOr<Tensor> RemoteDevice::run(OpId op, absl::Span<const Tensor* const> inputs,
                                         const OpAttrs& attrs, const OutputMeta& out) {
  proto::RunOpRequest request;
  encode_attrs(attrs, request.mutable_attrs());
  std::vector<uint64_t> deletes;
  for (const Tensor* t : inputs) {
    absl::Status status = add_input(*t, op, &request, &deletes);
    if (!status.ok()) {
      for (uint64_t handle : deletes) client_->release(handle);
      return status;
    }
  }
  return send(request, op, out.dtype, out.shape, std::move(deletes));
}

absl::StatusOr<Tensor> RemoteDevice::run_source(OpId op, DType dtype, const Shape& shape,
                                                const void* host_data, const OpAttrs& attrs) {
  proto::RunOpRequest request;
  encode_attrs(attrs, request.mutable_attrs());
  proto::TensorValue* source = request.mutable_source();
  source->set_dtype(static_cast<int>(dtype));
  for (int64_t d : shape.dims()) source->add_dims(d);
  if (op == OpId::kEagerConst) {
    size_t bytes = static_cast<size_t>(shape.num_elements()) * dtype_size(dtype);
    MT_RETURN_IF_ERROR(client_->check_size(bytes, op_name(op)));
    if (bytes > kInlineBytes) {  // the upload is the constant
      uint64_t handle = client_->new_handle();
      MT_RETURN_IF_ERROR(
          client_->upload(handle, remote_index_, dtype, shape, host_data, bytes, op_name(op)));
      return wrap(handle, dtype, shape);
    }
    source->set_data(host_data, bytes);
  }
  return send(request, op, dtype, shape, {});
}

absl::StatusOr<Tensor> RemoteDevice::copy_in(const Tensor& t) {
  proto::RunOpRequest request;
  const TensorImpl& impl = *t.impl();
  auto* other = dynamic_cast<RemoteDevice*>(impl.device->remote());
  if (other != nullptr && other->client_ == client_) {  // another device of this task
    request.add_inputs()->set_handle(handle_of(impl.data));
    return send(request, OpId::kIdentity, impl.dtype, impl.shape, {});
  }
  MT_RETURN_IF_ERROR(client_->check_size(impl.bytes(), "Identity"));
  if (impl.bytes() > kInlineBytes) {
    MT_ASSIGN_OR_RETURN(uint64_t handle, upload(impl, "Identity"));
    return wrap(handle, impl.dtype, impl.shape);
  }
  MT_RETURN_IF_ERROR(encode_tensor(impl, request.mutable_source()));
  return send(request, OpId::kEagerConst, impl.dtype, impl.shape, {});
}

absl::Status RemoteDevice::copy_to_host(void* dst, const void* src, size_t bytes) {
  return client_->fetch(handle_of(src), dst, bytes);
}

absl::Status RemoteDevice::copy_from_host(void*, const void*, size_t) { return not_remote_copy(); }

absl::StatusOr<PendingUse> RemoteDevice::copy_from_device(void*, Device&, const void*, size_t) {
  return not_remote_copy();
}

}  // namespace mt::distributed::internal
