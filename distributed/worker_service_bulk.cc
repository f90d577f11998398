// The Bulk service's methods of WorkerService (Note [Tensor bytes on the wire] and Note
// [Transfers over several connections] in bulk_service.h): uploads, whole or in parts, and
// reads, whole or by byte range.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "distributed/auth.h"
#include "distributed/bulk_service.h"
#include "distributed/tensor_codec.h"
#include "distributed/worker_service.h"
#include "runtime/eager/tensor_impl.h"

namespace mt::distributed::internal {

namespace {

// Copies the bytes `reader` brings into bytes [begin, end) of `t`: InvalidArgument, after
// `what`, when they are more or fewer.
absl::Status receive_bytes(grpc::ServerReaderInterface<grpc::ByteBuffer>* reader,
                           mt::internal::TensorImpl& t, size_t begin, size_t end,
                           const std::string& what) {
  char* dst = static_cast<char*>(t.data) + begin;
  const size_t bytes = end - begin;
  size_t received = 0;
  grpc::ByteBuffer piece;
  std::vector<grpc::Slice> slices;
  while (reader->Read(&piece)) {
    if (piece.Length() == 0) continue;  // carries nothing (an empty tensor has no buffer)
    if (piece.Length() > bytes - received) {
      return absl::InvalidArgumentError(
          absl::StrCat("[Upload] ", what, " but carries more than that"));
    }
    if (!piece.Dump(&slices).ok()) return absl::DataLossError("[Upload] unreadable piece");
    for (const grpc::Slice& s : slices) {
      MT_RETURN_IF_ERROR(t.device->copy_from_host(dst + received, s.begin(), s.size()));
      received += s.size();
    }
  }
  if (received != bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("[Upload] ", what, " but carries ", received, " bytes"));
  }
  return absl::OkStatus();
}

// Parses `buffer` into `message`; returns whether it could.
bool parse(const grpc::ByteBuffer& buffer, proto::UploadRequest* message) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (buffer.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices)
      bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return message->ParseFromString(bytes);
}

}  // namespace

absl::Status WorkerService::receive_part(const proto::UploadRequest& header,
                                         const std::string& client,
                                         grpc::ServerReaderInterface<grpc::ByteBuffer>* reader) {
  const int64_t part = static_cast<int64_t>(header.part()) - 1;
  int parts = 0;
  MT_ASSIGN_OR_RETURN(Tensor t, store_.start_part(header.handle(), client, part, &parts));
  auto [begin, end] = part_range(t.impl()->bytes(), parts, static_cast<int>(part));
  MT_RETURN_IF_ERROR(
      receive_bytes(reader, *t.impl(), begin, end,
                    absl::StrCat("part ", header.part(), " of ", parts, " of tensor handle ",
                                 header.handle(), " (", end - begin, " bytes)")));
  store_.finish_part(header.handle(), client);
  return absl::OkStatus();
}

grpc::Status WorkerService::receive_upload(grpc::ServerContext* context,
                                           grpc::ServerReaderInterface<grpc::ByteBuffer>* reader) {
  if (grpc::Status s = auth_.check(*context, "Upload"); !s.ok()) return s;
  std::string client = client_of(*context);
  grpc::ByteBuffer first;
  if (!reader->Read(&first)) return to_grpc(absl::InvalidArgumentError("[Upload] no value"));
  proto::UploadRequest header;
  if (!parse(first, &header)) {
    return to_grpc(
        absl::InvalidArgumentError("[Upload] the first message is not an UploadRequest"));
  }
  if (header.part() != 0) {
    absl::Status received = receive_part(header, client, reader);
    if (!received.ok()) store_.abandon(header.handle(), client);  // it cannot be completed
    return to_grpc(received);
  }
  absl::StatusOr<Tensor> t = start_upload(header, client);
  if (!t.ok()) return to_grpc(t.status());
  mt::internal::TensorImpl& impl = *t->impl();
  if (header.parts() != 0) {  // the parts follow in calls of their own
    while (reader->Read(&first)) {
      if (first.Length() != 0) {
        return to_grpc(absl::InvalidArgumentError(
            "[Upload] the first call of an upload in parts carries bytes (its parts carry them)"));
      }
    }
    absl::Status kept = store_.keep_in_parts(*std::move(t), header.handle(), client,
                                             static_cast<int>(header.parts()), "Upload");
    if (kept.ok() && context->IsCancelled()) {  // the client gave up: it sends no parts
      store_.abandon(header.handle(), client);
      kept = absl::CancelledError("[Upload] the client cancelled the call");
    }
    return to_grpc(kept);
  }
  absl::Status received =
      receive_bytes(reader, impl, 0, impl.bytes(),
                    absl::StrCat("the value declares shape ", impl.shape.to_string(), " of ",
                                 dtype_name(impl.dtype), " (", impl.bytes(), " bytes)"));
  if (!received.ok()) return to_grpc(received);
  return to_grpc(store_.keep(*std::move(t), header.handle(), client, "Upload").status());
}

grpc::Status WorkerService::send_pieces(grpc::ServerContext* context,
                                        const proto::FetchRequest& request,
                                        grpc::ServerWriterInterface<grpc::ByteBuffer>* writer) {
  if (grpc::Status s = auth_.check(*context, "Fetch"); !s.ok()) return s;
  absl::StatusOr<Tensor> t = find_to_send(request.handle(), client_of(*context));
  if (!t.ok()) return to_grpc(t.status());
  const mt::internal::TensorImpl& impl = *t->impl();
  // A part (Note [Transfers over several connections] in bulk_service.h), or the whole.
  const size_t begin = request.offset();
  const size_t bytes = request.length() != 0 ? request.length() : impl.bytes();
  if ((request.offset() != 0 && request.length() == 0) || begin > impl.bytes() ||
      bytes > impl.bytes() - begin) {
    return to_grpc(absl::InvalidArgumentError(
        absl::StrCat("[Fetch] ", request.length(), " bytes from byte ", request.offset(),
                     " are not a part of the tensor's ", impl.bytes(), " bytes")));
  }
  const char* src = static_cast<const char*>(impl.data) + begin;
  std::string staging;  // for a device whose memory is not this process's host memory
  if (impl.device->type() != DeviceType::kCPU && bytes > 0) {
    staging.resize(bytes);
    absl::Status s = impl.device->copy_to_host(staging.data(), src, bytes);
    if (!s.ok()) return to_grpc(s);
    src = staging.data();
  }
  // The pieces point into the tensor, which `t` holds until the call is over.
  for (size_t offset = 0; offset < bytes; offset += kChunkBytes) {
    size_t n = std::min(kChunkBytes, bytes - offset);
    grpc::Slice slice(const_cast<char*>(src + offset), n, grpc::Slice::STATIC_SLICE);
    if (!writer->Write(grpc::ByteBuffer(&slice, 1))) break;  // the client went away
  }
  return grpc::Status::OK;
}

}  // namespace mt::distributed::internal
