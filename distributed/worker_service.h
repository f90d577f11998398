#pragma once
// WorkerService: the gRPC side of a task (internal). It runs ops on this process's logical
// devices and keeps their results, by handle, until the client deletes them
// (Note [Remote tensors] in distributed/remote_device.h).
//
// Every handler first checks the caller's token (distributed/auth.h): a call without the
// right one is Unauthenticated and touches nothing. Each client's tensors are its own
// (distributed/tensor_store.h).
//
// Thread safety: gRPC calls the handlers from its own threads, concurrently.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "distributed/auth.h"
#include "distributed/collective_mailbox.h"
#include "distributed/tensor_store.h"
#include "distributed/worker.grpc.pb.h"
#include "kernels/kernel_registry.h"
#include "runtime/eager/tensor.h"

namespace mt::distributed::internal {

class WorkerService final : public proto::Worker::Service {
 public:
  // Refuses tensors larger than `max_message_bytes`, both ways, tensors that would take a
  // client over `max_client_bytes` (0: no limit), and calls without `auth_token` (empty:
  // none needed).
  explicit WorkerService(int64_t max_message_bytes, int64_t max_client_bytes = 0,
                         std::string auth_token = "");

  grpc::Status GetDevices(grpc::ServerContext*, const proto::GetDevicesRequest*,
                          proto::GetDevicesResponse* response) override;
  grpc::Status RunOp(grpc::ServerContext*, const proto::RunOpRequest* request,
                     proto::RunOpResponse* response) override;
  grpc::Status Fetch(grpc::ServerContext*, const proto::FetchRequest* request,
                     proto::FetchResponse* response) override;
  grpc::Status Enqueue(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<proto::EnqueueResponse, proto::EnqueueRequest>* stream) override {
    return serve_enqueue(context, stream);
  }
  grpc::Status Delete(grpc::ServerContext*, const proto::DeleteRequest* request,
                      proto::DeleteResponse*) override;
  grpc::Status GetMemoryInfo(grpc::ServerContext*, const proto::MemoryInfoRequest* request,
                             proto::MemoryInfoResponse* response) override;
  // A peer's collectives (worker_service_collective.cc).
  grpc::Status AbortCollectives(grpc::ServerContext* context,
                                const proto::AbortCollectivesRequest* request,
                                proto::AbortCollectivesResponse*) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const proto::HeartbeatRequest* request,
                         proto::HeartbeatResponse* response) override;

  // Handles Enqueue's messages in order. Takes the stream's interface, so that a stream
  // that is not gRPC's (the wire fuzz targets in fuzz/) drives the same code.
  grpc::Status serve_enqueue(
      grpc::ServerContext* context,
      grpc::ServerReaderWriterInterface<proto::EnqueueResponse, proto::EnqueueRequest>* stream);

  // The Bulk service's methods (Note [Tensor bytes on the wire] in bulk_service.h), over
  // the streams' interfaces as serve_enqueue.
  grpc::Status receive_upload(grpc::ServerContext* context,
                              grpc::ServerReaderInterface<grpc::ByteBuffer>* reader);
  grpc::Status send_pieces(grpc::ServerContext* context, const proto::FetchRequest& request,
                           grpc::ServerWriterInterface<grpc::ByteBuffer>* writer);
  grpc::Status receive_delivery(grpc::ServerContext* context,
                                grpc::ServerReaderInterface<grpc::ByteBuffer>* reader);

  // Returns the mailbox of the collectives' messages this task was sent.
  const std::shared_ptr<CollectiveMailbox>& mailbox() const { return mailbox_; }

  // Replaces the token calls must carry (Server::update_credentials).
  void set_auth_token(std::string token) { auth_.set_token(std::move(token)); }
  bool auth_token_empty() const { return auth_token_empty_; }

  // Drops every tensor still held (the server is stopping).
  void clear() { store_.clear(); }

 private:
  absl::StatusOr<Tensor> run_op(const proto::RunOpRequest& request, const std::string& client);
  // Returns the tensor `handle` when it is small enough to send (Fetch, Bulk's Fetch).
  absl::StatusOr<Tensor> find_to_send(uint64_t handle, const std::string& client);
  // Allocates the tensor an Upload's `header` describes.
  absl::StatusOr<Tensor> start_upload(const proto::UploadRequest& header,
                                      const std::string& client);
  // Receives a part of a tensor uploaded in parts (Note [Transfers over several
  // connections] in bulk_service.h).
  absl::Status receive_part(const proto::UploadRequest& header, const std::string& client,
                            grpc::ServerReaderInterface<grpc::ByteBuffer>* reader);

  int64_t max_message_bytes_;
  bool auth_token_empty_;
  Authenticator auth_;
  KernelRegistry registry_;  // the kernels this process has, as its runtime registers them
  TensorStore store_;
  std::shared_ptr<CollectiveMailbox> mailbox_ = std::make_shared<CollectiveMailbox>();
};

// Returns `status` as a grpc::Status with the same code and message.
grpc::Status to_grpc(const absl::Status& status);

}  // namespace mt::distributed::internal
