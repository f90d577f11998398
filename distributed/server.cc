// mt::distributed::Server: one task of a cluster, serving WorkerService on the address its
// cluster spec gives it, and nowhere else.
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "distributed/auth.h"
#include "distributed/bulk_service.h"
#include "distributed/cluster_spec.h"
#include "distributed/collective_mailbox.h"
#include "distributed/distributed.h"
#include "distributed/server_tls.h"
#include "distributed/tensor_codec.h"
#include "distributed/worker_service.h"
#include "runtime/eager/error.h"

namespace mt::distributed {

struct Server::State {
  std::string address;
  std::unique_ptr<internal::WorkerService> service;
  std::unique_ptr<internal::BulkService> bulk;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<internal::ServerTls> tls;  // null: plaintext
  std::mutex update_mu;                      // one update_credentials at a time
  std::once_flag stopped;
};

namespace {

// gRPC 1.51's default for MAX_POLLERS, which a larger min_pollers alone must raise: with
// fewer idle pollers allowed than required, each call would start a thread and end one.
constexpr int kGrpcDefaultMaxPollers = 2;

// Returns InvalidArgument for queues or pollers out of range, or more pollers required
// than allowed.
absl::Status check_sync_server(const ServerOptions& options) {
  struct Setting {
    const char* name;
    int value, limit;
  } settings[] = {{"num_cqs", options.num_cqs, kMaxServerCqs},
                  {"min_pollers", options.min_pollers, kMaxServerPollers},
                  {"max_pollers", options.max_pollers, kMaxServerPollers}};
  for (auto [name, value, limit] : settings) {
    if (value < 0 || value > limit) {
      return absl::InvalidArgumentError(absl::StrCat("[Server] ", name, " must be in [0, ", limit,
                                                     "] (0: gRPC's default), got ", value));
    }
  }
  if (options.max_pollers > 0 && options.min_pollers > options.max_pollers) {
    return absl::InvalidArgumentError(absl::StrCat("[Server] min_pollers (", options.min_pollers,
                                                   ") must not exceed max_pollers (",
                                                   options.max_pollers, ")"));
  }
  return absl::OkStatus();
}

// Sets the sync server's queues and pollers that `options` names; leaves gRPC's defaults.
void set_sync_server(grpc::ServerBuilder& builder, const ServerOptions& options) {
  using Option = grpc::ServerBuilder::SyncServerOption;
  if (options.num_cqs > 0) builder.SetSyncServerOption(Option::NUM_CQS, options.num_cqs);
  if (options.min_pollers > 0) {
    builder.SetSyncServerOption(Option::MIN_POLLERS, options.min_pollers);
  }
  int max_pollers = options.max_pollers;
  if (max_pollers == 0 && options.min_pollers > kGrpcDefaultMaxPollers) {
    max_pollers = options.min_pollers;
  }
  if (max_pollers > 0) builder.SetSyncServerOption(Option::MAX_POLLERS, max_pollers);
}

absl::Status check_options(const ServerOptions& options, const std::string& address) {
  if (options.max_message_bytes <= 0 || options.max_message_bytes > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "[Server] max_message_bytes must be in [1, 2^31), got ", options.max_message_bytes));
  }
  if (options.max_client_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "[Server] max_client_bytes must be >= 0 (0: no limit), got ", options.max_client_bytes));
  }
  MT_RETURN_IF_ERROR(check_sync_server(options));
  MT_RETURN_IF_ERROR(internal::check_server_tls(options.tls));
  bool authenticated = !options.tls.client_ca_pem.empty() || !options.auth_token.empty();
  if (!authenticated && !options.insecure && !internal::is_loopback(address)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "[Server] refusing to serve ", address,
        " without client authentication: anyone who reaches it could read and fill the "
        "task's memory. Give a client CA (mt-server --tls_client_ca) or an auth token "
        "(--auth_token_file), or pass --insecure (ServerOptions::insecure)"));
  }
  return absl::OkStatus();
}

}  // namespace

Server::Server(const ClusterSpec& cluster, std::string_view job_name, int task_index,
               const ServerOptions& options)
    : state_(std::make_unique<State>()) {
  mt::internal::throw_if_error(internal::validate_cluster(cluster, "Server"));
  absl::StatusOr<std::string> address = internal::task_address(cluster, job_name, task_index);
  if (!address.ok()) {
    mt::internal::throw_error(
        absl::InvalidArgumentError(absl::StrCat("[Server] ", address.status().message())));
  }
  mt::internal::throw_if_error(check_options(options, *address));
  state_->address = *address;
  internal::keep_transfer_buffers();  // Note [Tensor bytes on the wire]
  state_->service = std::make_unique<internal::WorkerService>(
      options.max_message_bytes, options.max_client_bytes, options.auth_token);
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!options.tls.server_cert_pem.empty()) {
    absl::StatusOr<std::unique_ptr<internal::ServerTls>> tls =
        internal::ServerTls::create(options.tls);
    mt::internal::throw_if_error(tls.status());
    state_->tls = *std::move(tls);
    credentials = state_->tls->credentials();
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(state_->address, credentials, &port);
  // One server per address: without this gRPC lets a second process share the port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // The service checks tensors against options.max_message_bytes itself.
  builder.SetMaxReceiveMessageSize(internal::grpc_message_limit(options.max_message_bytes));
  builder.SetMaxSendMessageSize(internal::grpc_message_limit(options.max_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, internal::kStreamWindowBytes);
  set_sync_server(builder, options);
  builder.RegisterService(state_->service.get());
  state_->bulk = std::make_unique<internal::BulkService>(state_->service.get());
  builder.RegisterService(state_->bulk.get());
  state_->server = builder.BuildAndStart();
  if (state_->server == nullptr || port == 0) {
    mt::internal::throw_error(absl::UnavailableError(
        absl::StrCat("[Server] cannot listen on ", state_->address, " for ",
                     internal::task_name(job_name, task_index), " (address in use?)")));
  }
  // The collectives of this process's worker find their messages here (collective_group.h).
  internal::register_mailbox(state_->address, state_->service->mailbox());
}

Server::~Server() { stop(); }

std::string Server::target() const { return absl::StrCat("grpc://", state_->address); }

void Server::join() {
  if (state_->server != nullptr) state_->server->Wait();
}

void Server::stop() {
  if (state_->server == nullptr) return;
  std::call_once(state_->stopped, [this] {
    internal::unregister_mailbox(state_->address, state_->service->mailbox().get());
    state_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    state_->server->Wait();
    state_->service->clear();
  });
}

void Server::update_credentials(const ServerOptions& options) {
  std::lock_guard<std::mutex> lock(state_->update_mu);
  if (options.auth_token.empty() != state_->service->auth_token_empty()) {
    mt::internal::throw_error(absl::InvalidArgumentError(
        "[Server] new credentials must keep an auth token if and only if the server started "
        "with one (restart it to change that)"));
  }
  if (state_->tls == nullptr && !options.tls.server_cert_pem.empty()) {
    mt::internal::throw_error(absl::InvalidArgumentError(
        "[Server] the server started without TLS (restart it to turn TLS on)"));
  }
  if (state_->tls != nullptr) mt::internal::throw_if_error(state_->tls->update(options.tls));
  state_->service->set_auth_token(options.auth_token);
}

int pick_unused_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  if (fd >= 0) close(fd);
  if (!ok) {
    mt::internal::throw_error(
        absl::UnavailableError("[pick_unused_loopback_port] cannot bind 127.0.0.1:0"));
  }
  return ntohs(addr.sin_port);
}

}  // namespace mt::distributed
