#include "distributed/task_client.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "distributed/auth.h"
#include "distributed/bulk_service.h"
#include "distributed/cluster_spec.h"
#include "distributed/tensor_codec.h"

namespace mt::distributed::internal {
namespace {

// Note [Bytes stuck in the socket]
// A task that stops reading its socket altogether (a stopped or hung process, a network
// gone quiet) lets the socket's buffers fill; gRPC then holds every call that has bytes in
// that write, and cancelling the call or its deadline expiring does not release it (gRPC
// proposal A18). What ends it is the kernel's TCP_USER_TIMEOUT: sent bytes left
// unacknowledged that long close the connection, and the calls fail. gRPC sets it, to the
// keepalive timeout, only while keepalive is on; so keepalive is on here with an interval
// of 24 days (it sends no pings in practice), and the timeout is twice the RPC deadline,
// so that the deadline (Note [Deadlines on the op stream] in op_stream.cc) is what a
// caller meets first, and the closing only frees what it could not.
constexpr int kNoKeepalivePingsMs = std::numeric_limits<int>::max() - 1;

int unacknowledged_limit_ms(int64_t rpc_timeout_ms) {
  return static_cast<int>(std::min<int64_t>(rpc_timeout_ms, kNoKeepalivePingsMs / 2) * 2);
}

}  // namespace

std::shared_ptr<grpc::Channel> make_channel(const std::string& address,
                                            const config::ConnectOptions& options,
                                            bool own_connection) {
  grpc::ChannelArguments args;
  if (own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // Tensors are checked against options.max_message_bytes by check_size and the task.
  args.SetMaxReceiveMessageSize(grpc_message_limit(options.max_message_bytes));
  args.SetMaxSendMessageSize(grpc_message_limit(options.max_message_bytes));
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kStreamWindowBytes);
  // A restarted task is found again quickly (gRPC's default backoff grows to 120 s).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // Note [Bytes stuck in the socket].
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kNoKeepalivePingsMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, unacknowledged_limit_ms(options.rpc_timeout_ms));
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options.tls.root_cert_pem.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls.root_cert_pem;
    ssl.pem_cert_chain = options.tls.client_cert_pem;  // mutual TLS when set
    ssl.pem_private_key = options.tls.client_key_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  return grpc::CreateCustomChannel(address, credentials, args);
}

namespace {

// Returns ConnectOptions::bulk_connections, 0 replaced by its default.
int bulk_connections(const config::ConnectOptions& options) {
  if (options.bulk_connections > 0) return options.bulk_connections;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

}  // namespace

TaskClient::TaskClient(std::string job, int task, std::string address,
                       const config::ConnectOptions& options)
    : job_(std::move(job)),
      task_(task),
      address_(std::move(address)),
      name_(task_name(job_, task_)),
      options_(options),
      channel_(make_channel(address_, options_, /*own_connection=*/false)),
      metadata_(client_metadata(options_.auth_token)),
      stub_(proto::Worker::NewStub(channel_)),
      // Handles start at a random point, away from other clients' and the task's own.
      next_handle_((std::random_device()() | uint64_t{1}) << 32 | std::random_device()() << 1),
      ops_(std::make_unique<OpStream>(
          channel_,
          [this](const grpc::Status& status, const char* op) {
            return to_status(status, op, options_.rpc_timeout_ms);
          },
          options_.rpc_timeout_ms, metadata_)) {
  keep_transfer_buffers();  // Note [Tensor bytes on the wire]
  // Note [Transfers over several connections]; gRPC connects each at its first call.
  bulk_channels_.push_back(channel_);
  for (int i = 1; i < bulk_connections(options_); ++i) {
    bulk_channels_.push_back(make_channel(address_, options_, /*own_connection=*/true));
  }
}

TaskClient::~TaskClient() = default;

std::unique_ptr<grpc::ClientContext> TaskClient::context(int64_t timeout_ms,
                                                         bool wait_for_ready) const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  context->set_wait_for_ready(wait_for_ready);
  for (const auto& [key, value] : metadata_) context->AddMetadata(key, value);
  return context;
}

absl::Status TaskClient::to_status(const grpc::Status& status, const char* op,
                                   int64_t timeout_ms) const {
  if (status.ok()) return absl::OkStatus();
  std::string who = absl::StrCat("[", op, "] task ", name_, " at ", address_);
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(absl::StrCat(who, " is unavailable: ", status.error_message()));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(
          absl::StrCat(who, " did not answer within ", timeout_ms, " ms"));
    case grpc::StatusCode::UNAUTHENTICATED:
      return absl::UnauthenticatedError(
          absl::StrCat(who, " refused the call: ", status.error_message()));
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return absl::ResourceExhaustedError(absl::StrCat(who, ": ", status.error_message()));
    default:  // the task's own error, which names the op already
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
  }
}

// Note [Refused client certificates]
// A task with mutual TLS checks the client's certificate in the TLS handshake, and closes
// the connection when it has none or one it does not accept (another authority, expired).
// With TLS 1.3 the client has finished its side of the handshake by then, so all gRPC
// tells it is "Socket closed": the client cannot tell a refused certificate from a task
// that went away, and says both.
absl::StatusOr<proto::GetDevicesResponse> TaskClient::get_devices() {
  proto::GetDevicesResponse response;
  auto ctx = context(options_.connect_timeout_ms, /*wait_for_ready=*/true);
  grpc::Status status = stub_->GetDevices(ctx.get(), proto::GetDevicesRequest(), &response);
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    // Waiting for the task to come up: not answering in time means it is not there. One
    // more call that does not wait tells what the last connection attempt met.
    auto probe = context(1'000, /*wait_for_ready=*/false);
    grpc::Status last = stub_->GetDevices(probe.get(), proto::GetDevicesRequest(), &response);
    std::string why = last.error_code() == grpc::StatusCode::UNAVAILABLE
                          ? absl::StrCat(" (", last.error_message(), ")")
                          : "";
    // Note [Refused client certificates]
    if (!options_.tls.root_cert_pem.empty()) {
      absl::StrAppend(&why,
                      "; with TLS this is also how a task that requires a client "
                      "certificate refuses a client without one it accepts");
    }
    return absl::UnavailableError(absl::StrCat(
        "[experimental_connect_to_cluster] task ", name_, " at ", address_,
        " is unavailable: no answer within ", options_.connect_timeout_ms, " ms", why));
  }
  if (!status.ok()) {
    return to_status(status, "experimental_connect_to_cluster", options_.connect_timeout_ms);
  }
  return response;
}

absl::Status TaskClient::enqueue(proto::RunOpRequest* request, const char* op,
                                 std::vector<uint64_t> deletes) {
  return ops_->enqueue(request, op, std::move(deletes));
}

absl::Status TaskClient::upload(uint64_t handle, int device, DType dtype, const Shape& shape,
                                const void* data, size_t bytes, const char* op) {
  MT_RETURN_IF_ERROR(check_size(bytes, op));
  proto::UploadRequest header;
  header.set_device(device);
  header.set_handle(handle);
  header.mutable_value()->set_dtype(static_cast<int>(dtype));
  for (int64_t d : shape.dims()) header.mutable_value()->add_dims(d);
  const char* src = static_cast<const char*>(data);
  const int parts = part_count(bytes, static_cast<int>(bulk_channels_.size()));
  if (parts > 1) return to_status(upload_in_parts(header, src, bytes, parts), op, timeout_ms());
  wait_for_connection(*channel_, timeout_ms());
  auto ctx = context(timeout_ms(), false);
  grpc::Status status = upload_pieces(channel_.get(), ctx.get(), header, pieces(src, bytes));
  return to_status(status, op, timeout_ms());
}

// Note [Transfers over several connections] in bulk_service.h.
grpc::Status TaskClient::upload_in_parts(proto::UploadRequest header, const char* src, size_t bytes,
                                         int parts) {
  header.set_parts(parts);  // allocates the tensor
  wait_for_connection(*channel_, timeout_ms());
  grpc::Status status =
      upload_pieces(channel_.get(), context(timeout_ms(), false).get(), header, {});
  if (!status.ok()) {
    // The task's own refusal allocated nothing; a call that failed on the way may have.
    const grpc::StatusCode code = status.error_code();
    if (code == grpc::StatusCode::DEADLINE_EXCEEDED || code == grpc::StatusCode::UNAVAILABLE ||
        code == grpc::StatusCode::CANCELLED) {
      release(header.handle());
    }
    return status;
  }
  status = run_parts(
      bulk_channels_, parts, [this] { return context(timeout_ms(), false); },
      [&](int i, grpc::Channel* channel, grpc::ClientContext* ctx) {
        proto::UploadRequest part;
        part.set_handle(header.handle());
        part.set_part(i + 1);
        auto [begin, end] = part_range(bytes, parts, i);
        wait_for_connection(*channel, timeout_ms());
        return upload_pieces(channel, ctx, part, pieces(src + begin, end - begin));
      });
  if (!status.ok()) release(header.handle());  // what arrived is freed after the next op
  return status;
}

absl::Status TaskClient::fetch(uint64_t handle, void* dst, size_t bytes) {
  MT_RETURN_IF_ERROR(check_size(bytes, "Fetch"));
  if (bytes <= kInlineBytes) return ops_->fetch(handle, dst, bytes);  // one round trip
  MT_RETURN_IF_ERROR(ops_->sync());
  // In parts over several connections when large (Note [Transfers over several connections]).
  const int parts = part_count(bytes, static_cast<int>(bulk_channels_.size()));
  grpc::Status status = run_parts(
      bulk_channels_, parts, [this] { return context(timeout_ms(), false); },
      [&](int i, grpc::Channel* channel, grpc::ClientContext* ctx) {
        auto [begin, end] = part_range(bytes, parts, i);
        proto::FetchRequest request;
        request.set_handle(handle);
        if (parts > 1) {
          request.set_offset(begin);
          request.set_length(end - begin);
        }
        wait_for_connection(*channel, timeout_ms());
        size_t received = 0;
        grpc::Status s = fetch_pieces(channel, ctx, request, static_cast<char*>(dst) + begin,
                                      end - begin, &received);
        if (!s.ok() || received == end - begin) return s;
        std::string asked =
            parts == 1 ? "" : absl::StrCat(end - begin, " bytes from byte ", begin, " of ");
        return grpc::Status(grpc::StatusCode::DATA_LOSS,
                            absl::StrCat("[Fetch] task ", name_, " sent ", received, " bytes for ",
                                         asked, "a tensor of ", bytes, " bytes"));
      });
  return to_status(status, "Fetch", timeout_ms());
}

void TaskClient::release(uint64_t handle) { ops_->release(handle); }

absl::StatusOr<MemoryStats> TaskClient::memory_info(int device) {
  proto::MemoryInfoRequest request;
  request.set_device(device);
  proto::MemoryInfoResponse r;
  ops_->drain();  // frees and ops sent before count; errors stay for later
  auto ctx = context(options_.rpc_timeout_ms, false);
  grpc::Status status = stub_->GetMemoryInfo(ctx.get(), request, &r);
  if (!status.ok()) return to_status(status, "get_memory_info", options_.rpc_timeout_ms);
  return MemoryStats{r.bytes_in_use(), r.peak_bytes_in_use(),  r.bytes_reserved(), r.bytes_limit(),
                     r.num_allocs(),   r.largest_free_block(), r.fragmentation()};
}

std::vector<std::string_view> TaskClient::pieces(const char* src, size_t bytes) {
  std::vector<std::string_view> out;
  for (size_t offset = 0; offset < bytes; offset += kChunkBytes) {
    out.emplace_back(src + offset, std::min(kChunkBytes, bytes - offset));
  }
  return out;
}

absl::Status TaskClient::check_size(size_t bytes, const char* op) const {
  if (static_cast<int64_t>(bytes) <= options_.max_message_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("[", op, "] a tensor of ", bytes,
                                                   " bytes exceeds the message limit of ",
                                                   options_.max_message_bytes, " bytes for task ",
                                                   name_, " (ConnectOptions::max_message_bytes)"));
}

}  // namespace mt::distributed::internal
