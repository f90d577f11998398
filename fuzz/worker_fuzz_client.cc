#include "fuzz/worker_fuzz_client.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/grpc_library.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "distributed/tensor_codec.h"
#include "distributed/worker_service.h"
#include "fuzz/fuzz_util.h"
#include "kernels/op_id.h"

namespace mt::fuzz {
namespace {

using distributed::internal::decode_dtype;
using distributed::internal::decode_value;
using distributed::internal::kChunkBytes;
using distributed::internal::WorkerService;

// The task's service, one per process as a task has; never destroyed (the runtime outlives
// every input).
WorkerService& service() {
  static auto* const service = new WorkerService(kWireMessageBytes, kWireClientBytes);
  return *service;
}

// Checks an answer: an error has a specific code and a message. Returns status.ok().
// With MT_WIRE_FUZZ_VERBOSE set, prints each answer (to see what a seed does).
bool check_status(const grpc::Status& status, const char* method) {
  static const bool verbose = std::getenv("MT_WIRE_FUZZ_VERBOSE") != nullptr;
  const std::string what =
      absl::StrCat(method, ": ", status.error_code(), " ", status.error_message());
  if (verbose) std::fprintf(stderr, "%s\n", what.c_str());
  if (status.ok()) return true;
  FUZZ_CHECK_MSG(status.error_code() != grpc::StatusCode::UNKNOWN, what);
  FUZZ_CHECK_MSG(status.error_code() != grpc::StatusCode::INTERNAL, what);
  FUZZ_CHECK_MSG(!status.error_message().empty(), what);
  return false;
}

// Checks a tensor the task sent: it decodes as the task decodes what it receives.
void check_value(const proto::TensorValue& value) {
  absl::Status decoded = decode_value(value, "the value the task sent").status();
  FUZZ_CHECK_MSG(decoded.ok(), decoded.ToString());
  FUZZ_CHECK(static_cast<int64_t>(value.data().size()) <= kWireMessageBytes);
}

// Enqueue's stream: gives `messages` in order, parsed as gRPC parses them, and checks the
// answers: one per message read, in order, with its seq.
class EnqueueStream final
    : public grpc::ServerReaderWriterInterface<proto::EnqueueResponse, proto::EnqueueRequest> {
 public:
  explicit EnqueueStream(const std::vector<std::string_view>& messages) : messages_(messages) {}

  // Handles the ops read named (the client's choice, as OpStream's).
  const std::vector<uint64_t>& named() const { return named_; }

  void SendInitialMetadata() override {}
  bool NextMessageSize(uint32_t* size) override {
    if (next_ == messages_.size()) return false;
    *size = static_cast<uint32_t>(messages_[next_].size());
    return true;
  }
  bool Read(proto::EnqueueRequest* message) override {
    if (next_ == messages_.size()) return false;
    std::string_view bytes = messages_[next_++];
    // gRPC fails the Read of a message that does not parse; the handler sees the end.
    if (!message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
    if (message->has_op()) named_.push_back(message->op().handle());
    FUZZ_CHECK(answered_ == read_);  // the previous message was answered before this read
    ++read_;
    last_seq_ = message->seq();
    return true;
  }
  bool Write(const proto::EnqueueResponse& response, grpc::WriteOptions) override {
    FUZZ_CHECK(answered_ + 1 == read_);
    FUZZ_CHECK(response.seq() == last_seq_);
    if (response.has_value()) check_value(response.value());
    ++answered_;
    return true;
  }

 private:
  const std::vector<std::string_view>& messages_;
  size_t next_ = 0;
  int64_t read_ = 0, answered_ = 0;
  uint64_t last_seq_ = 0;
  std::vector<uint64_t> named_;
};

// Upload's stream: gives `pieces` in order, copied into gRPC buffers.
class PieceReader final : public grpc::ServerReaderInterface<grpc::ByteBuffer> {
 public:
  explicit PieceReader(std::vector<std::string_view> pieces) : pieces_(std::move(pieces)) {}

  void SendInitialMetadata() override {}
  bool NextMessageSize(uint32_t* size) override {
    if (next_ == pieces_.size()) return false;
    *size = static_cast<uint32_t>(pieces_[next_].size());
    return true;
  }
  bool Read(grpc::ByteBuffer* piece) override {
    if (next_ == pieces_.size()) return false;
    grpc::Slice slice(pieces_[next_].data(), pieces_[next_].size());  // copies
    *piece = grpc::ByteBuffer(&slice, 1);
    ++next_;
    return true;
  }

 private:
  std::vector<std::string_view> pieces_;
  size_t next_ = 0;
};

// Bulk Fetch's stream: keeps the bytes of the pieces written, each at most kChunkBytes.
class PieceWriter final : public grpc::ServerWriterInterface<grpc::ByteBuffer> {
 public:
  const std::string& bytes() const { return bytes_; }

  void SendInitialMetadata() override {}
  bool Write(const grpc::ByteBuffer& piece, grpc::WriteOptions) override {
    FUZZ_CHECK(piece.Length() > 0 && piece.Length() <= kChunkBytes);
    std::vector<grpc::Slice> slices;
    FUZZ_CHECK(piece.Dump(&slices).ok());
    for (const grpc::Slice& s : slices) {
      bytes_.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    return true;
  }

 private:
  std::string bytes_;
};

}  // namespace

void init_wire_runtime() {
  grpc::internal::GrpcLibraryInitializer grpc_library;
  grpc_library.summon();
  PhysicalDevice cpu = config::list_physical_devices("CPU")[0];
  config::set_logical_device_configuration(
      cpu, std::vector<LogicalDeviceConfiguration>(kWireCpus, {.memory_limit_mb = kWirePoolMb}));
  config::list_logical_devices();  // initialises the runtime
  service();
}

bool WireClient::get_devices(const proto::GetDevicesRequest& request) {
  grpc::ServerContext context;
  proto::GetDevicesResponse response;
  if (!check_status(service().GetDevices(&context, &request, &response), "GetDevices")) {
    return false;
  }
  FUZZ_CHECK(response.num_ops() == kNumOps && response.num_dtypes() == kNumDTypes);
  FUZZ_CHECK(response.devices_size() == kWireCpus);
  for (const proto::DeviceAttrs& d : response.devices()) {
    FUZZ_CHECK(d.kernels().size() == size_t{kNumOps} * kNumDeviceTypes * kNumDTypes);
  }
  return true;
}

bool WireClient::run_op(const proto::RunOpRequest& request) {
  grpc::ServerContext context;
  proto::RunOpResponse response;
  if (!check_status(service().RunOp(&context, &request, &response), "RunOp")) return false;
  FUZZ_CHECK(response.handle() != 0);
  note_handle(response.handle());
  FUZZ_CHECK(decode_dtype(response.dtype(), "RunOp's result").ok());
  FUZZ_CHECK(std::all_of(response.dims().begin(), response.dims().end(),
                         [](int64_t d) { return d >= 0; }));
  return true;
}

bool WireClient::fetch(const proto::FetchRequest& request) {
  grpc::ServerContext context;
  proto::FetchResponse response;
  if (!check_status(service().Fetch(&context, &request, &response), "Fetch")) return false;
  check_value(response.value());
  return true;
}

bool WireClient::bulk_fetch(const proto::FetchRequest& request) {
  grpc::ServerContext context;
  PieceWriter writer;
  if (!check_status(service().send_pieces(&context, request, &writer), "Bulk Fetch")) {
    return false;
  }
  // The pieces hold what Fetch sends in one message, or the part of it asked for.
  grpc::ServerContext unary_context;
  proto::FetchRequest whole;
  whole.set_handle(request.handle());
  proto::FetchResponse response;
  FUZZ_CHECK(service().Fetch(&unary_context, &whole, &response).ok());
  const std::string& all = response.value().data();
  const size_t length = request.length() != 0 ? request.length() : all.size();
  FUZZ_CHECK(writer.bytes() == all.substr(request.offset(), length));
  return true;
}

bool WireClient::remove(const proto::DeleteRequest& request) {
  grpc::ServerContext context;
  proto::DeleteResponse response;
  return check_status(service().Delete(&context, &request, &response), "Delete");
}

bool WireClient::memory_info(const proto::MemoryInfoRequest& request) {
  grpc::ServerContext context;
  proto::MemoryInfoResponse response;
  if (!check_status(service().GetMemoryInfo(&context, &request, &response), "GetMemoryInfo")) {
    return false;
  }
  FUZZ_CHECK(response.bytes_in_use() >= 0 && response.bytes_in_use() <= response.bytes_limit());
  FUZZ_CHECK(response.bytes_limit() == int64_t{kWirePoolMb} << 20);
  return true;
}

bool WireClient::upload(std::string_view header, const std::vector<std::string_view>& pieces) {
  proto::UploadRequest parsed;  // to know the handle it names; the service parses its own
  if (parsed.ParseFromArray(header.data(), static_cast<int>(header.size()))) {
    note_handle(parsed.handle());
  }
  std::vector<std::string_view> all = {header};
  all.insert(all.end(), pieces.begin(), pieces.end());
  PieceReader reader(std::move(all));
  grpc::ServerContext context;
  return check_status(service().receive_upload(&context, &reader), "Upload");
}

bool WireClient::enqueue(const std::vector<std::string_view>& messages) {
  EnqueueStream stream(messages);
  grpc::ServerContext context;
  grpc::Status status = service().serve_enqueue(&context, &stream);
  for (uint64_t handle : stream.named()) note_handle(handle);
  return check_status(status, "Enqueue");
}

void WireClient::note_handle(uint64_t handle) {
  if (handle == 0 || std::find(handles_.begin(), handles_.end(), handle) != handles_.end()) {
    return;
  }
  handles_.push_back(handle);
}

void WireClient::release_all() {
  proto::DeleteRequest request;
  for (uint64_t handle : handles_) request.add_handles(handle);
  FUZZ_CHECK(remove(request));
  for (uint64_t handle : handles_) {
    grpc::ServerContext context;
    proto::FetchRequest fetch;
    fetch.set_handle(handle);
    proto::FetchResponse response;
    grpc::Status status = service().Fetch(&context, &fetch, &response);
    FUZZ_CHECK_MSG(status.error_code() == grpc::StatusCode::NOT_FOUND, status.error_message());
  }
  handles_.clear();
  for (int i = 0; i < kWireCpus; ++i) {
    const int64_t held = config::get_memory_info(absl::StrCat("CPU:", i)).current;
    FUZZ_CHECK_MSG(held == 0, absl::StrCat("CPU:", i, " holds ", held, " bytes"));
  }
}

}  // namespace mt::fuzz
