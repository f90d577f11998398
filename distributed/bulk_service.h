#pragma once
// The Bulk service: large tensors to and from a task, in pieces of raw bytes (internal).
//
// Note [Tensor bytes on the wire]
// A protobuf `bytes` field costs two copies per side (into the message, then into gRPC's
// buffer; out of gRPC's buffer, then out of the message) and a fresh buffer per message.
// The Bulk service's messages are grpc::ByteBuffers instead: a piece that is sent points
// at the tensor's own memory (no copy before the kernel's), and one that arrives is copied
// once, from gRPC's buffers straight into the tensor. Its two methods:
//   Upload  client stream: an UploadRequest (worker.proto), then the tensor's bytes in
//           pieces of at most kChunkBytes; answers once the task holds the tensor.
//   Fetch   a FetchRequest; answers with the tensor's bytes in pieces.
// The task checks declared against carried sizes, and sizes against its limit, as for
// every other message.

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/service_type.h>
#include <grpcpp/support/method_handler.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "distributed/worker.pb.h"

namespace mt::distributed::internal {

class WorkerService;

// Serves the Bulk methods for `worker`'s tensors.
class BulkService final : public grpc::Service {
 public:
  explicit BulkService(WorkerService* worker);
};

// Client side. Each call blocks until the task answered or `context`'s deadline.

// Sends `header` then `pieces` (each at most kChunkBytes); the bytes must stay put until
// the call returns.
grpc::Status upload_pieces(grpc::Channel* channel, grpc::ClientContext* context,
                           const proto::UploadRequest& header,
                           absl::Span<const std::string_view> pieces);

// Copies the bytes of tensor `handle` into `dst`, which holds `bytes`. DataLoss when the
// task sends another count (reported through `received`, which the call sets).
grpc::Status fetch_pieces(grpc::Channel* channel, grpc::ClientContext* context, uint64_t handle,
                          char* dst, size_t bytes, size_t* received);

}  // namespace mt::distributed::internal
