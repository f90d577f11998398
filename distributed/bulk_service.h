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
//
// gRPC reads into buffers from malloc, a few MiB each, and frees them once the piece is
// copied out. glibc hands blocks that large back to the kernel when freed (mmap'd blocks,
// and the trimmed top of a heap), so every transfer page-faulted on fresh memory: a fifth
// of the 64 MiB round trip's time. Both sides therefore call keep_transfer_buffers(),
// which has malloc serve blocks up to 32 MiB from its heaps and keep up to 256 MiB of
// freed memory there for reuse: the process's resident size does not shrink after a large
// transfer, the price of not faulting on the next one.

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

// Sets malloc as the Note says (once per process; glibc only, elsewhere nothing).
void keep_transfer_buffers();

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
