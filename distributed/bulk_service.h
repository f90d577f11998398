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
//   Deliver a DeliverRequest, then one chunk of a collective's message raw (at most
//           kRingChunkBytes); the task keeps it in its CollectiveMailbox for the collective
//           that takes it (Note [Ring all-reduce] in ring_all_reduce.h).
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
//
// Note [Transfers over several connections]
// A gRPC connection handles its bytes on one thread at a time: with TLS each record is
// sealed by the sender and opened by the receiver in turn, so one connection moves a large
// tensor at about one core's AES-GCM speed, however many cores are idle. A tensor of at
// least two kChunkBytes therefore travels in parts, as many as there are connections
// (ConnectOptions::bulk_connections) and none under kChunkBytes, each part on a connection
// of its own and, on the client, a thread of its own; plaintext takes the same path. A read
// in parts is one Fetch per part, each naming its byte range. An upload in parts is first
// an Upload that allocates the tensor (its header with `parts`, no bytes), then one Upload
// per part, naming the handle and the part: the task works out each part's range itself
// (part_range), takes each part once, and refuses the tensor to every use until all parts
// have arrived whole (FailedPrecondition). When a part fails, the client cancels the others
// and frees the tensor (the free rides on the next op, as any other), so that a failed
// upload leaves nothing on the task; a part that comes later is NotFound.

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/service_type.h>
#include <grpcpp/support/method_handler.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

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

// The most parts a tensor may come in (Note [Transfers over several connections]).
inline constexpr int kMaxParts = 64;

// Returns how many parts a tensor of `bytes` bytes goes in over `connections` connections:
// one per connection, with no part under kChunkBytes (1: the tensor goes whole).
int part_count(size_t bytes, int connections);

// Returns the bytes [begin, end) of part `part` (0 to parts - 1) of a tensor of `bytes`
// bytes: the parts are as even as can be, and none is empty when parts <= bytes.
std::pair<size_t, size_t> part_range(size_t bytes, int parts, int part);

// Client side. Each call blocks until the task answered or `context`'s deadline.

// Sends `header` then `pieces` (each at most kChunkBytes); the bytes must stay put until
// the call returns.
grpc::Status upload_pieces(grpc::Channel* channel, grpc::ClientContext* context,
                           const proto::UploadRequest& header,
                           absl::Span<const std::string_view> pieces);

// Sends `header` then `bytes` (at most kRingChunkBytes) to the task's mailbox.
grpc::Status deliver_bytes(grpc::Channel* channel, grpc::ClientContext* context,
                           const proto::DeliverRequest& header, std::string_view bytes);

// Copies the bytes `request` asks for into `dst`, which holds `bytes`. The caller checks
// `received`, the count the task sent (more than `bytes` is counted, not copied).
grpc::Status fetch_pieces(grpc::Channel* channel, grpc::ClientContext* context,
                          const proto::FetchRequest& request, char* dst, size_t bytes,
                          size_t* received);

// One part of a transfer: a call on `channel` with `context`.
using PartCall =
    std::function<grpc::Status(int part, grpc::Channel* channel, grpc::ClientContext* context)>;

// Runs `call` for parts 0 to `parts` - 1 at once, part i on channels[i] (parts <=
// channels.size()) with a context from `make_context`: part 0 on this thread, each other
// on a thread of its own. When a part fails the others are cancelled. Returns the first
// failure (not the cancellations it caused), or OK once every part succeeded.
grpc::Status run_parts(absl::Span<const std::shared_ptr<grpc::Channel>> channels, int parts,
                       const std::function<std::unique_ptr<grpc::ClientContext>()>& make_context,
                       const PartCall& call);

}  // namespace mt::distributed::internal
