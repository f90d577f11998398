#include "distributed/worker_service.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "distributed/bulk_service.h"
#include "distributed/tensor_codec.h"
#include "kernels/op_def.h"
#include "runtime/eager/context.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/execute.h"
#include "runtime/eager/remote.h"
#include "runtime/eager/tensor_impl.h"

namespace mt::distributed::internal {
namespace {

using mt::internal::Context;
using mt::internal::Device;
using mt::internal::Runtime;

// Returns device `index` of this process, or InvalidArgument.
absl::StatusOr<Device*> local_device(const Runtime& rt, int index, const char* op) {
  if (index < 0 || index >= rt.num_devices() || rt.device(index).remote() != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("[", op, "] this task has no device with index ", index));
  }
  return &rt.device(index);
}

// _EagerConst, Fill and the random ops: the request carries the output's dtype and shape.
bool is_source(OpId op) { return op_has_flag(op, kSource); }

// Note [One output on the wire]
// A task runs only ops of one output, the only ones a client sends (run_remote in
// runtime/eager/execute.cc). The ops of none (the assignments, ResourceApplyAdam) write input 0
// in place, and a task's tensors are immutable and may be shared by several handles
// (Identity, ReadVariableOp); VarHandleOp's buffer is uninitialised, and Fetch would send
// its bytes (another client's freed tensor, perhaps). Variables are not on tasks yet.
absl::Status check_one_output(OpId op, const std::vector<Tensor>& inputs, const OpAttrs& attrs) {
  absl::InlinedVector<TensorMeta, 4> metas;
  for (const Tensor& t : inputs) metas.push_back(TensorMeta{&t.shape(), t.dtype()});
  OutputMetas out;
  MT_RETURN_IF_ERROR(infer_outputs(op, metas, attrs, &out));
  if (out.size() == 1) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "[", op_name(op), "] a task runs ops of one output; this call has ", out.size()));
}

}  // namespace

grpc::Status to_grpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

WorkerService::WorkerService(int64_t max_message_bytes, int64_t max_client_bytes,
                             std::string auth_token)
    : max_message_bytes_(max_message_bytes),
      auth_token_empty_(auth_token.empty()),
      auth_(std::move(auth_token)),
      store_(max_client_bytes) {
  MT_CHECK(register_cpu_kernels(registry_).ok());
  MT_CHECK(register_cuda_kernels(registry_).ok());
}

grpc::Status WorkerService::GetDevices(grpc::ServerContext* context,
                                       const proto::GetDevicesRequest*,
                                       proto::GetDevicesResponse* response) {
  if (grpc::Status s = auth_.check(*context, "GetDevices"); !s.ok()) return s;
  absl::StatusOr<Runtime*> rt = Context::get().runtime();
  if (!rt.ok()) return to_grpc(rt.status());
  response->set_num_ops(kNumOps);
  response->set_num_dtypes(kNumDTypes);
  for (int i = 0; i < (*rt)->num_devices(); ++i) {
    Device& d = (*rt)->device(i);
    if (d.remote() != nullptr) continue;  // a task exports only its own devices
    proto::DeviceAttrs* attrs = response->add_devices();
    attrs->set_type(static_cast<int>(d.type()));
    attrs->set_id(d.id());
    std::string kernels(kNumOps * kNumDeviceTypes * kNumDTypes, '\0');
    size_t k = 0;
    for (int op = 0; op < kNumOps; ++op) {
      for (int type = 0; type < kNumDeviceTypes; ++type) {
        for (int dtype = 0; dtype < kNumDTypes; ++dtype) {
          kernels[k++] = registry_.find(static_cast<OpId>(op), static_cast<DeviceType>(type),
                                        static_cast<DType>(dtype)) != nullptr;
        }
      }
    }
    attrs->set_kernels(std::move(kernels));
  }
  return grpc::Status::OK;
}

absl::StatusOr<Tensor> WorkerService::find_to_send(uint64_t handle, const std::string& client) {
  MT_ASSIGN_OR_RETURN(Tensor t, store_.find(handle, client, "Fetch"));
  if (static_cast<int64_t>(t.impl()->bytes()) > max_message_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("[Fetch] the tensor has ", t.impl()->bytes(),
                     " bytes, more than the task's message limit of ", max_message_bytes_));
  }
  return t;
}

absl::StatusOr<Tensor> WorkerService::run_op(const proto::RunOpRequest& request,
                                             const std::string& client) {
  MT_ASSIGN_OR_RETURN(Runtime * rt, Context::get().runtime());
  if (request.op() < 0 || request.op() >= kNumOps) {
    return absl::InvalidArgumentError(absl::StrCat("[RunOp] unknown op ", request.op()));
  }
  OpId op = static_cast<OpId>(request.op());
  MT_RETURN_IF_ERROR(local_device(*rt, request.device(), op_name(op)).status());
  MT_ASSIGN_OR_RETURN(OpAttrs attrs, decode_attrs(request.attrs()));
  DeviceScope scope(rt->placer().device_spec(request.device()));
  if (op == OpId::kVarHandleOp) {  // Note [One output on the wire]
    return absl::UnimplementedError("[VarHandleOp] variables do not live on remote tasks yet");
  }
  if (is_source(op)) {
    std::string what = absl::StrCat("[", op_name(op), "] the source value");
    bool with_bytes = op == OpId::kEagerConst;  // Fill's value is an attribute
    if (static_cast<int64_t>(request.source().data().size()) > max_message_bytes_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          what, " is more than the task's message limit of ", max_message_bytes_, " bytes"));
    }
    MT_ASSIGN_OR_RETURN(DecodedValue v, decode_value(request.source(), what.c_str(), with_bytes));
    MT_RETURN_IF_ERROR(store_.check_room(
        client, v.shape.num_elements() * static_cast<int64_t>(dtype_size(v.dtype)), op_name(op)));
    const void* data = with_bytes ? request.source().data().data() : nullptr;
    return mt::internal::execute_source(op, v.dtype, v.shape, data, attrs);
  }
  std::vector<Tensor> inputs;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const proto::Input& in = request.inputs(i);
    if (in.has_value()) {
      std::string what = absl::StrCat("[", op_name(op), "] input ", i);
      if (static_cast<int64_t>(in.value().data().size()) > max_message_bytes_) {
        return absl::ResourceExhaustedError(absl::StrCat(
            what, " is more than the task's message limit of ", max_message_bytes_, " bytes"));
      }
      MT_ASSIGN_OR_RETURN(DecodedValue v, decode_value(in.value(), what.c_str()));
      MT_ASSIGN_OR_RETURN(Tensor t,
                          mt::internal::execute_source(OpId::kEagerConst, v.dtype, v.shape,
                                                       in.value().data().data(), OpAttrs()));
      inputs.push_back(std::move(t));
    } else {
      MT_ASSIGN_OR_RETURN(Tensor t, store_.find(in.handle(), client, op_name(op)));
      inputs.push_back(std::move(t));
    }
  }
  MT_RETURN_IF_ERROR(check_one_output(op, inputs, attrs));
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : inputs) pointers.push_back(&t);
  return mt::internal::execute(op, pointers, attrs);
}

grpc::Status WorkerService::RunOp(grpc::ServerContext* context, const proto::RunOpRequest* request,
                                  proto::RunOpResponse* response) {
  if (grpc::Status s = auth_.check(*context, "RunOp"); !s.ok()) return s;
  std::string client = client_of(*context);
  absl::StatusOr<Tensor> result = run_op(*request, client);
  if (!result.ok()) return to_grpc(result.status());
  response->set_dtype(static_cast<int>(result->dtype()));
  for (int64_t d : result->shape().dims()) response->add_dims(d);
  const char* name = op_name(static_cast<OpId>(request->op()));
  absl::StatusOr<uint64_t> handle = store_.keep(*std::move(result), 0, client, name);
  if (!handle.ok()) return to_grpc(handle.status());
  response->set_handle(*handle);
  return grpc::Status::OK;
}

grpc::Status WorkerService::Fetch(grpc::ServerContext* context, const proto::FetchRequest* request,
                                  proto::FetchResponse* response) {
  if (grpc::Status s = auth_.check(*context, "Fetch"); !s.ok()) return s;
  if (request->offset() != 0 || request->length() != 0) {
    return to_grpc(
        absl::InvalidArgumentError("[Fetch] a part of a tensor is read on Bulk's Fetch"));
  }
  absl::StatusOr<Tensor> t = find_to_send(request->handle(), client_of(*context));
  if (!t.ok()) return to_grpc(t.status());
  return to_grpc(encode_tensor(*t->impl(), response->mutable_value()));
}

grpc::Status WorkerService::Delete(grpc::ServerContext* context,
                                   const proto::DeleteRequest* request, proto::DeleteResponse*) {
  if (grpc::Status s = auth_.check(*context, "Delete"); !s.ok()) return s;
  store_.drop(request->handles(), client_of(*context));
  return grpc::Status::OK;
}

// Note [Asynchronous remote ops] in distributed/task_client.h.
grpc::Status WorkerService::serve_enqueue(
    grpc::ServerContext* context,
    grpc::ServerReaderWriterInterface<proto::EnqueueResponse, proto::EnqueueRequest>* stream) {
  if (grpc::Status s = auth_.check(*context, "Enqueue"); !s.ok()) return s;
  std::string client = client_of(*context);
  proto::EnqueueRequest request;
  proto::EnqueueResponse response;
  while (stream->Read(&request)) {
    // Checked again for every message: a stream opened before the token changed ends.
    if (grpc::Status s = auth_.check(*context, "Enqueue"); !s.ok()) return s;
    absl::Status status;
    if (request.has_op()) {
      absl::StatusOr<Tensor> result =
          request.op().handle() != 0 ? run_op(request.op(), client)
                                     : absl::InvalidArgumentError("[Enqueue] an op needs a handle");
      status = result.status();
      if (result.ok()) {
        const char* name = op_name(static_cast<OpId>(request.op().op()));  // a valid op
        status = store_.keep(*std::move(result), request.op().handle(), client, name).status();
      }
    }
    store_.drop(request.deletes(), client);
    response.Clear();
    if (status.ok() && request.fetch() != 0) {
      absl::StatusOr<Tensor> t = find_to_send(request.fetch(), client);
      status = t.ok() ? encode_tensor(*t->impl(), response.mutable_value()) : t.status();
    }
    if (!status.ok()) return to_grpc(status);  // ends the stream: later ops do not run
    response.set_seq(request.seq());
    if (!stream->Write(response)) break;  // the client went away
  }
  return grpc::Status::OK;
}

absl::StatusOr<Tensor> WorkerService::start_upload(const proto::UploadRequest& header,
                                                   const std::string& client) {
  MT_ASSIGN_OR_RETURN(Runtime * rt, Context::get().runtime());
  MT_ASSIGN_OR_RETURN(Device * device, local_device(*rt, header.device(), "Upload"));
  MT_ASSIGN_OR_RETURN(DecodedValue v, decode_value(header.value(), "[Upload] the value", false));
  int64_t size = v.shape.num_elements() * static_cast<int64_t>(dtype_size(v.dtype));
  if (size > max_message_bytes_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "[Upload] a tensor of ", size, " bytes is more than the task's message limit of ",
        max_message_bytes_, " bytes"));
  }
  if (header.handle() == 0) return absl::InvalidArgumentError("[Upload] a tensor needs a handle");
  if (header.parts() != 0 &&
      (header.parts() < 2 || header.parts() > kMaxParts || header.parts() > size)) {
    return absl::InvalidArgumentError(
        absl::StrCat("[Upload] a tensor of ", size, " bytes cannot come in ", header.parts(),
                     " parts (2 to ", kMaxParts, ", and no more than its bytes)"));
  }
  MT_RETURN_IF_ERROR(store_.check_room(client, size, "Upload"));
  MT_ASSIGN_OR_RETURN(mt::internal::TensorImpl * impl,
                      mt::internal::allocate_tensor(*device, v.dtype, std::move(v.shape)));
  return Tensor(impl);
}

grpc::Status WorkerService::GetMemoryInfo(grpc::ServerContext* context,
                                          const proto::MemoryInfoRequest* request,
                                          proto::MemoryInfoResponse* response) {
  if (grpc::Status s = auth_.check(*context, "GetMemoryInfo"); !s.ok()) return s;
  absl::StatusOr<Runtime*> rt = Context::get().runtime();
  if (!rt.ok()) return to_grpc(rt.status());
  absl::StatusOr<Device*> device = local_device(**rt, request->device(), "GetMemoryInfo");
  if (!device.ok()) return to_grpc(device.status());
  MemoryStats s = (*device)->allocator().stats();
  response->set_bytes_in_use(s.bytes_in_use);
  response->set_peak_bytes_in_use(s.peak_bytes_in_use);
  response->set_bytes_reserved(s.bytes_reserved);
  response->set_bytes_limit(s.bytes_limit);
  response->set_num_allocs(s.num_allocs);
  response->set_largest_free_block(s.largest_free_block);
  response->set_fragmentation(s.fragmentation);
  return grpc::Status::OK;
}

}  // namespace mt::distributed::internal
