// WorkerService's side of the collectives between workers (Note [Ring all-reduce] in
// ring_all_reduce.h): a peer's chunks into the mailbox, its aborts, and its heartbeats.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/ring_all_reduce.h"
#include "distributed/worker_service.h"

namespace mt::distributed::internal {

grpc::Status WorkerService::receive_delivery(
    grpc::ServerContext* context, grpc::ServerReaderInterface<grpc::ByteBuffer>* reader) {
  if (grpc::Status s = auth_.check(*context, "Deliver"); !s.ok()) return s;
  grpc::ByteBuffer piece;
  std::vector<grpc::Slice> slices;
  std::string first;
  const bool got = reader->Read(&piece) && piece.Dump(&slices).ok();
  if (got) {
    for (const grpc::Slice& s : slices)
      first.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  proto::DeliverRequest header;
  if (!got || !header.ParseFromString(first)) {
    return to_grpc(
        absl::InvalidArgumentError("[Deliver] the first message is not a DeliverRequest"));
  }
  if (header.bytes() > kRingChunkBytes) {
    return to_grpc(absl::InvalidArgumentError(absl::StrCat(
        "[Deliver] a message of ", header.bytes(), " bytes; at most ", kRingChunkBytes)));
  }
  CollectiveMailbox::Message message{header.what(), {}};
  size_t received = 0;
  while (reader->Read(&piece)) {
    if (!piece.Dump(&slices).ok())
      return to_grpc(absl::DataLossError("[Deliver] unreadable piece"));
    for (grpc::Slice& s : slices) {
      received += s.size();
      if (received > header.bytes()) break;
      message.bytes.push_back(std::move(s));
    }
    if (received > header.bytes()) break;
  }
  if (received != header.bytes()) {
    return to_grpc(absl::InvalidArgumentError(
        absl::StrCat("[Deliver] the message declares ", header.bytes(), " bytes but carries ",
                     received > header.bytes() ? "more" : std::to_string(received))));
  }
  const proto::CollectiveKey& k = header.key();
  mailbox_->deliver({k.group(), k.instance(), k.step(), k.chunk(), k.source()}, std::move(message));
  return grpc::Status::OK;
}

grpc::Status WorkerService::AbortCollectives(grpc::ServerContext* context,
                                             const proto::AbortCollectivesRequest* request,
                                             proto::AbortCollectivesResponse*) {
  if (grpc::Status s = auth_.check(*context, "AbortCollectives"); !s.ok()) return s;
  const auto code = static_cast<absl::StatusCode>(request->code());
  if (code == absl::StatusCode::kOk || request->code() < 0 || request->code() > 16) {
    return to_grpc(absl::InvalidArgumentError(
        absl::StrCat("[AbortCollectives] ", request->code(), " is not an error code")));
  }
  mailbox_->abort(request->group(), absl::Status(code, request->message()));
  return grpc::Status::OK;
}

grpc::Status WorkerService::Heartbeat(grpc::ServerContext* context,
                                      const proto::HeartbeatRequest* request,
                                      proto::HeartbeatResponse* response) {
  if (grpc::Status s = auth_.check(*context, "Heartbeat"); !s.ok()) return s;
  absl::Status status = mailbox_->status(request->group());
  response->set_aborted_code(static_cast<int>(status.code()));
  response->set_aborted_message(std::string(status.message()));
  return grpc::Status::OK;
}

}  // namespace mt::distributed::internal
