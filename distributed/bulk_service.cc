#include "distributed/bulk_service.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/check.h"
#include "distributed/tensor_codec.h"
#include "distributed/worker_service.h"

namespace mt::distributed::internal {
namespace {

using grpc::internal::RpcMethod;

constexpr char kUpload[] = "/mt.distributed.proto.Bulk/Upload";
constexpr char kFetch[] = "/mt.distributed.proto.Bulk/Fetch";
constexpr char kDeliver[] = "/mt.distributed.proto.Bulk/Deliver";

// Returns a buffer that points at `bytes` without copying them.
grpc::ByteBuffer view(std::string_view bytes) {
  grpc::Slice slice(const_cast<char*>(bytes.data()), bytes.size(), grpc::Slice::STATIC_SLICE);
  return grpc::ByteBuffer(&slice, 1);
}

// Sends `header`, then `pieces`, on a client stream of `method`; returns the call's status.
template <typename Response>
grpc::Status write_stream(const char* method, grpc::Channel* channel, grpc::ClientContext* context,
                          const google::protobuf::Message& header,
                          absl::Span<const std::string_view> pieces) {
  Response response;
  std::unique_ptr<grpc::ClientWriter<grpc::ByteBuffer>> writer(
      grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(
          channel, RpcMethod(method, RpcMethod::CLIENT_STREAMING), context, &response));
  std::string first = header.SerializeAsString();
  bool open = writer->Write(view(first));
  for (size_t i = 0; open && i < pieces.size(); ++i) open = writer->Write(view(pieces[i]));
  writer->WritesDone();
  return writer->Finish();  // when a write failed, the task's reason
}

}  // namespace

void keep_transfer_buffers() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);   // glibc's largest
    mallopt(M_TRIM_THRESHOLD, 256 << 20);  // fixed values also stop glibc adjusting them
  });
#endif
}

BulkService::BulkService(WorkerService* worker) {
  AddMethod(new grpc::internal::RpcServiceMethod(
      kUpload, RpcMethod::CLIENT_STREAMING,
      new grpc::internal::ClientStreamingHandler<WorkerService, grpc::ByteBuffer,
                                                 proto::UploadResponse>(
          [](WorkerService* service, grpc::ServerContext* context,
             grpc::ServerReader<grpc::ByteBuffer>* reader,
             proto::UploadResponse*) { return service->receive_upload(context, reader); },
          worker)));
  AddMethod(new grpc::internal::RpcServiceMethod(
      kFetch, RpcMethod::SERVER_STREAMING,
      new grpc::internal::ServerStreamingHandler<WorkerService, proto::FetchRequest,
                                                 grpc::ByteBuffer>(
          [](WorkerService* service, grpc::ServerContext* context,
             const proto::FetchRequest* request, grpc::ServerWriter<grpc::ByteBuffer>* writer) {
            return service->send_pieces(context, *request, writer);
          },
          worker)));
  AddMethod(new grpc::internal::RpcServiceMethod(
      kDeliver, RpcMethod::CLIENT_STREAMING,
      new grpc::internal::ClientStreamingHandler<WorkerService, grpc::ByteBuffer,
                                                 proto::DeliverResponse>(
          [](WorkerService* service, grpc::ServerContext* context,
             grpc::ServerReader<grpc::ByteBuffer>* reader,
             proto::DeliverResponse*) { return service->receive_delivery(context, reader); },
          worker)));
}

int part_count(size_t bytes, int connections) {
  size_t most = std::min<size_t>(std::max(connections, 1), kMaxParts);
  return static_cast<int>(std::clamp<size_t>(bytes / kChunkBytes, 1, most));
}

std::pair<size_t, size_t> part_range(size_t bytes, int parts, int part) {
  // bytes * part / parts without overflow: bytes = q * parts + r, r < parts <= kMaxParts.
  const size_t q = bytes / parts, r = bytes % parts;
  const auto start = [&](size_t i) { return q * i + r * i / parts; };
  return {start(part), start(part + 1)};
}

grpc::Status upload_pieces(grpc::Channel* channel, grpc::ClientContext* context,
                           const proto::UploadRequest& header,
                           absl::Span<const std::string_view> pieces) {
  return write_stream<proto::UploadResponse>(kUpload, channel, context, header, pieces);
}

grpc::Status deliver_bytes(grpc::Channel* channel, grpc::ClientContext* context,
                           const proto::DeliverRequest& header, std::string_view bytes) {
  return write_stream<proto::DeliverResponse>(kDeliver, channel, context, header, {bytes});
}

grpc::Status fetch_pieces(grpc::Channel* channel, grpc::ClientContext* context,
                          const proto::FetchRequest& request, char* dst, size_t bytes,
                          size_t* received) {
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
          channel, RpcMethod(kFetch, RpcMethod::SERVER_STREAMING), context, request));
  *received = 0;
  grpc::ByteBuffer piece;
  std::vector<grpc::Slice> slices;
  while (reader->Read(&piece)) {
    if (!piece.Dump(&slices).ok()) continue;
    for (const grpc::Slice& s : slices) {
      if (*received + s.size() <= bytes) {  // more than `bytes` is counted, not copied
        std::memcpy(dst + *received, s.begin(), s.size());
      }
      *received += s.size();
    }
  }
  return reader->Finish();
}

grpc::Status run_parts(absl::Span<const std::shared_ptr<grpc::Channel>> channels, int parts,
                       const std::function<std::unique_ptr<grpc::ClientContext>()>& make_context,
                       const PartCall& call) {
  MT_CHECK(parts >= 1 && parts <= static_cast<int>(channels.size()));
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  for (int i = 0; i < parts; ++i) contexts.push_back(make_context());
  std::mutex mu;
  grpc::Status first;  // guarded by mu
  const auto run = [&](int i) {
    grpc::Status s = call(i, channels[i].get(), contexts[i].get());
    if (s.ok()) return;
    std::lock_guard<std::mutex> lock(mu);
    if (!first.ok()) return;  // cancelled by the first failure, or failed beside it
    first = s;
    // A context whose call has not started yet cancels it when it starts.
    for (int j = 0; j < parts; ++j) {
      if (j != i) contexts[j]->TryCancel();
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < parts; ++i) threads.emplace_back(run, i);
  run(0);
  for (std::thread& t : threads) t.join();
  return first;
}

}  // namespace mt::distributed::internal
