#include "distributed/remote_device.h"

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "distributed/tensor_codec.h"
#include "runtime/tensor_impl.h"

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

absl::Status RemoteDevice::add_input(const Tensor& t, OpId op, proto::RunOpRequest* request) {
  const TensorImpl& impl = *t.impl();
  auto* other = dynamic_cast<RemoteDevice*>(impl.device->remote());
  if (other != nullptr && other->client_ == client_) {
    request->add_inputs()->set_handle(handle_of(impl.data));
    return absl::OkStatus();
  }
  MT_RETURN_IF_ERROR(client_->check_size(impl.bytes(), op_name(op)));
  return encode_tensor(impl, request->add_inputs()->mutable_value());
}

absl::StatusOr<Tensor> RemoteDevice::send(proto::RunOpRequest& request, OpId op) {
  request.set_device(remote_index_);
  request.set_op(static_cast<int>(op));
  MT_ASSIGN_OR_RETURN(proto::RunOpResponse r, client_->run_op(request, op_name(op)));
  absl::StatusOr<DType> dtype = decode_dtype(r.dtype(), "[RunOp] the result");
  std::vector<int64_t> dims(r.dims().begin(), r.dims().end());
  absl::StatusOr<Shape> shape = Shape::make(dims);
  // The handle is owned from here on, even when the answer is malformed.
  Tensor result(new TensorImpl(dtype.value_or(DType::kFloat32),
                               shape.ok() ? *std::move(shape) : Shape(), this,
                               data_of(r.handle())));
  MT_RETURN_IF_ERROR(dtype.status());
  MT_RETURN_IF_ERROR(shape.status());
  return result;
}

absl::StatusOr<Tensor> RemoteDevice::run(OpId op, absl::Span<const Tensor* const> inputs,
                                         const OpAttrs& attrs, const OutputMeta&) {
  proto::RunOpRequest request;
  encode_attrs(attrs, request.mutable_attrs());
  for (const Tensor* t : inputs) MT_RETURN_IF_ERROR(add_input(*t, op, &request));
  return send(request, op);
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
    source->set_data(host_data, bytes);
  }
  return send(request, op);
}

absl::StatusOr<Tensor> RemoteDevice::copy_in(const Tensor& t) {
  proto::RunOpRequest request;
  const TensorImpl& impl = *t.impl();
  auto* other = dynamic_cast<RemoteDevice*>(impl.device->remote());
  if (other != nullptr && other->client_ == client_) {  // another device of this task
    request.add_inputs()->set_handle(handle_of(impl.data));
    return send(request, OpId::kIdentity);
  }
  MT_RETURN_IF_ERROR(client_->check_size(impl.bytes(), "Identity"));
  MT_RETURN_IF_ERROR(encode_tensor(impl, request.mutable_source()));
  return send(request, OpId::kEagerConst);
}

absl::Status RemoteDevice::copy_to_host(void* dst, const void* src, size_t bytes) {
  return client_->fetch(handle_of(src), dst, bytes);
}

absl::Status RemoteDevice::copy_from_host(void*, const void*, size_t) { return not_remote_copy(); }

absl::StatusOr<PendingUse> RemoteDevice::copy_from_device(void*, Device&, const void*, size_t) {
  return not_remote_copy();
}

}  // namespace mt::distributed::internal
