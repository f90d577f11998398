#pragma once
// WorkerService: the gRPC side of a task (internal). It runs ops on this process's logical
// devices and keeps their results, by handle, until the client deletes them
// (Note [Remote tensors] in distributed/remote_device.h).
//
// Thread safety: gRPC calls the handlers from its own threads, concurrently.

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/mutex.h"
#include "distributed/worker.grpc.pb.h"
#include "kernels/kernel_registry.h"
#include "runtime/tensor.h"

namespace mt::distributed::internal {

class WorkerService final : public proto::Worker::Service {
 public:
  // Refuses tensors larger than `max_message_bytes`, both ways.
  explicit WorkerService(int64_t max_message_bytes);

  grpc::Status GetDevices(grpc::ServerContext*, const proto::GetDevicesRequest*,
                          proto::GetDevicesResponse* response) override;
  grpc::Status RunOp(grpc::ServerContext*, const proto::RunOpRequest* request,
                     proto::RunOpResponse* response) override;
  grpc::Status Fetch(grpc::ServerContext*, const proto::FetchRequest* request,
                     proto::FetchResponse* response) override;
  grpc::Status Enqueue(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<proto::EnqueueResponse, proto::EnqueueRequest>* stream) override;
  grpc::Status Delete(grpc::ServerContext*, const proto::DeleteRequest* request,
                      proto::DeleteResponse*) override;
  grpc::Status GetMemoryInfo(grpc::ServerContext*, const proto::MemoryInfoRequest* request,
                             proto::MemoryInfoResponse* response) override;

  // The Bulk service's methods (Note [Tensor bytes on the wire] in bulk_service.h).
  grpc::Status receive_upload(grpc::ServerReader<grpc::ByteBuffer>* reader);
  grpc::Status send_pieces(const proto::FetchRequest& request,
                           grpc::ServerWriter<grpc::ByteBuffer>* writer);

  // Drops every tensor still held (the server is stopping).
  void clear();

 private:
  absl::StatusOr<Tensor> run_op(const proto::RunOpRequest& request);
  absl::StatusOr<Tensor> find(uint64_t handle, const char* op);
  // Returns the tensor `handle` when it is small enough to send (Fetch, Bulk's Fetch).
  absl::StatusOr<Tensor> find_to_send(uint64_t handle);
  // Keeps `t` under `handle` (0: a new one) and returns the handle; AlreadyExists when
  // the client chose a handle in use.
  absl::StatusOr<uint64_t> keep(Tensor t, uint64_t handle);
  // Allocates the tensor an Upload's first message describes.
  absl::StatusOr<Tensor> start_upload(const grpc::ByteBuffer& first, uint64_t* handle);
  void drop(absl::Span<const uint64_t> handles);

  int64_t max_message_bytes_;
  KernelRegistry registry_;  // the kernels this process has, as its runtime registers them
  mt::internal::Mutex mu_;
  uint64_t next_handle_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, Tensor> tensors_ ABSL_GUARDED_BY(mu_);
};

// Returns `status` as a grpc::Status with the same code and message.
grpc::Status to_grpc(const absl::Status& status);

}  // namespace mt::distributed::internal
