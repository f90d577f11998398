#pragma once
// RawClient: one client of a task through the worker service's stub, without the runtime,
// so that one test can be many clients at once (the runtime connects to a cluster once).
// It carries an auth token (empty: none) and a session id of its own, as TaskClient does,
// and has a connection of its own. Every call has a 10 s deadline.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "distributed/auth.h"
#include "distributed/bulk_service.h"
#include "distributed/tensor_codec.h"
#include "distributed/worker.grpc.pb.h"
#include "kernels/op_id.h"

namespace mt::testing {

class RawClient {
 public:
  explicit RawClient(
      const std::string& address, std::string token = "",
      std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials())
      : metadata_(distributed::internal::client_metadata(token)) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
    channel_ = grpc::CreateCustomChannel(address, credentials, args);
    stub_ = distributed::proto::Worker::NewStub(channel_);
  }

  // Makes a float32 tensor of `values` on the task's CPU:0 (RunOp _EagerConst).
  grpc::Status constant(const std::vector<float>& values, uint64_t* handle) {
    distributed::proto::RunOpRequest request;
    request.set_op(static_cast<int>(OpId::kEagerConst));
    fill_value(values, request.mutable_source());
    return run(request, handle);
  }

  // Adds tensors `a` and `b` (RunOp AddV2).
  grpc::Status add(uint64_t a, uint64_t b, uint64_t* handle) {
    distributed::proto::RunOpRequest request;
    request.set_op(static_cast<int>(OpId::kAddV2));
    request.add_inputs()->set_handle(a);
    request.add_inputs()->set_handle(b);
    return run(request, handle);
  }

  grpc::Status fetch(uint64_t handle, std::vector<float>* values) {
    distributed::proto::FetchRequest request;
    request.set_handle(handle);
    return fetch(request, values);
  }
  grpc::Status fetch(const distributed::proto::FetchRequest& request, std::vector<float>* values) {
    distributed::proto::FetchResponse response;
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = stub_->Fetch(&ctx, request, &response);
    const std::string& data = response.value().data();
    values->resize(data.size() / sizeof(float));
    if (!data.empty()) std::memcpy(values->data(), data.data(), data.size());
    return s;
  }

  grpc::Status remove(const std::vector<uint64_t>& handles) {
    distributed::proto::DeleteRequest request;
    for (uint64_t h : handles) request.add_handles(h);
    distributed::proto::DeleteResponse response;
    grpc::ClientContext ctx;
    prepare(ctx);
    return stub_->Delete(&ctx, request, &response);
  }

  grpc::Status devices() {
    distributed::proto::GetDevicesResponse response;
    grpc::ClientContext ctx;
    prepare(ctx);
    return stub_->GetDevices(&ctx, distributed::proto::GetDevicesRequest(), &response);
  }

  // The task's CPU:0 pool: bytes in use and allocations made so far.
  grpc::Status memory(int64_t* bytes_in_use, int64_t* num_allocs) {
    distributed::proto::MemoryInfoResponse response;
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = stub_->GetMemoryInfo(&ctx, distributed::proto::MemoryInfoRequest(), &response);
    *bytes_in_use = response.bytes_in_use();
    *num_allocs = response.num_allocs();
    return s;
  }

  // Sends one Fill op named `handle` on an Enqueue stream and returns how the stream ended.
  grpc::Status enqueue_fill(uint64_t handle) {
    grpc::ClientContext ctx;
    prepare(ctx);
    auto stream = stub_->Enqueue(&ctx);
    distributed::proto::EnqueueRequest request;
    request.set_seq(1);
    request.mutable_op()->set_op(static_cast<int>(OpId::kFill));
    request.mutable_op()->set_handle(handle);
    request.mutable_op()->mutable_source()->add_dims(4);
    stream->Write(request);
    stream->WritesDone();
    distributed::proto::EnqueueResponse response;
    while (stream->Read(&response)) {
    }
    return stream->Finish();
  }

  // Sends `values` as tensor `handle` on the Bulk service.
  grpc::Status upload(uint64_t handle, const std::vector<float>& values) {
    distributed::proto::UploadRequest header;
    header.set_handle(handle);
    header.mutable_value()->add_dims(static_cast<int64_t>(values.size()));
    std::string_view bytes(reinterpret_cast<const char*>(values.data()),
                           values.size() * sizeof(float));
    std::vector<std::string_view> pieces;
    for (size_t at = 0; at < bytes.size(); at += distributed::internal::kChunkBytes) {
      pieces.push_back(bytes.substr(at, distributed::internal::kChunkBytes));
    }
    grpc::ClientContext ctx;
    prepare(ctx);
    return distributed::internal::upload_pieces(channel_.get(), &ctx, header, pieces);
  }

  // Sends an Upload of `header` and `pieces` as they are (uploads in parts included).
  grpc::Status upload(const distributed::proto::UploadRequest& header,
                      const std::vector<std::string_view>& pieces) {
    grpc::ClientContext ctx;
    prepare(ctx);
    return distributed::internal::upload_pieces(channel_.get(), &ctx, header, pieces);
  }

  // Reads what `request` asks for on the Bulk service into `bytes`.
  grpc::Status fetch_pieces(const distributed::proto::FetchRequest& request, size_t count,
                            std::string* bytes) {
    bytes->assign(count, '\0');
    size_t received = 0;
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = distributed::internal::fetch_pieces(channel_.get(), &ctx, request,
                                                         bytes->data(), count, &received);
    bytes->resize(std::min(received, count));
    return s;
  }

  // Reads tensor `handle` (`count` floats) on the Bulk service.
  grpc::Status fetch_pieces(uint64_t handle, size_t count, std::vector<float>* values) {
    values->resize(count);
    size_t received = 0;
    grpc::ClientContext ctx;
    prepare(ctx);
    distributed::proto::FetchRequest request;
    request.set_handle(handle);
    return distributed::internal::fetch_pieces(channel_.get(), &ctx, request,
                                               reinterpret_cast<char*>(values->data()),
                                               count * sizeof(float), &received);
  }

 private:
  static void fill_value(const std::vector<float>& values, distributed::proto::TensorValue* v) {
    v->set_dtype(static_cast<int>(DType::kFloat32));
    v->add_dims(static_cast<int64_t>(values.size()));
    v->set_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  }

  grpc::Status run(const distributed::proto::RunOpRequest& request, uint64_t* handle) {
    distributed::proto::RunOpResponse response;
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = stub_->RunOp(&ctx, request, &response);
    *handle = response.handle();
    return s;
  }

  void prepare(grpc::ClientContext& ctx) const {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    for (const auto& [key, value] : metadata_) ctx.AddMetadata(key, value);
  }

  distributed::internal::CallMetadata metadata_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<distributed::proto::Worker::Stub> stub_;
};

}  // namespace mt::testing
