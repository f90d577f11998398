// mt::distributed::Server: one task of a cluster, serving WorkerService on the address its
// cluster spec gives it, and nowhere else.
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "distributed/bulk_service.h"
#include "distributed/cluster_spec.h"
#include "distributed/distributed.h"
#include "distributed/tensor_codec.h"
#include "distributed/worker_service.h"
#include "runtime/error.h"

namespace mt::distributed {

struct Server::State {
  std::string address;
  std::unique_ptr<internal::WorkerService> service;
  std::unique_ptr<internal::BulkService> bulk;
  std::unique_ptr<grpc::Server> server;
  std::once_flag stopped;
};

namespace {

std::shared_ptr<grpc::ServerCredentials> server_credentials(const TlsOptions& tls) {
  if (tls.server_cert_pem.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({tls.server_key_pem, tls.server_cert_pem});
  return grpc::SslServerCredentials(options);
}

absl::Status check_options(const ServerOptions& options) {
  if (options.max_message_bytes <= 0 || options.max_message_bytes > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "[Server] max_message_bytes must be in [1, 2^31), got ", options.max_message_bytes));
  }
  if (options.tls.server_cert_pem.empty() != options.tls.server_key_pem.empty()) {
    return absl::InvalidArgumentError("[Server] TLS needs both a certificate and its key");
  }
  return absl::OkStatus();
}

}  // namespace

Server::Server(const ClusterSpec& cluster, std::string_view job_name, int task_index,
               const ServerOptions& options)
    : state_(std::make_unique<State>()) {
  mt::internal::throw_if_error(internal::validate_cluster(cluster));
  mt::internal::throw_if_error(check_options(options));
  absl::StatusOr<std::string> address = internal::task_address(cluster, job_name, task_index);
  if (!address.ok()) {
    mt::internal::throw_error(
        absl::InvalidArgumentError(absl::StrCat("[Server] ", address.status().message())));
  }
  state_->address = *address;
  internal::keep_transfer_buffers();  // Note [Tensor bytes on the wire]
  state_->service = std::make_unique<internal::WorkerService>(options.max_message_bytes);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(state_->address, server_credentials(options.tls), &port);
  // One server per address: without this gRPC lets a second process share the port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // The service checks tensors against options.max_message_bytes itself.
  builder.SetMaxReceiveMessageSize(internal::grpc_message_limit(options.max_message_bytes));
  builder.SetMaxSendMessageSize(internal::grpc_message_limit(options.max_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, internal::kStreamWindowBytes);
  builder.RegisterService(state_->service.get());
  state_->bulk = std::make_unique<internal::BulkService>(state_->service.get());
  builder.RegisterService(state_->bulk.get());
  state_->server = builder.BuildAndStart();
  if (state_->server == nullptr || port == 0) {
    mt::internal::throw_error(absl::UnavailableError(
        absl::StrCat("[Server] cannot listen on ", state_->address, " for ",
                     internal::task_name(job_name, task_index), " (address in use?)")));
  }
}

Server::~Server() { stop(); }

std::string Server::target() const { return absl::StrCat("grpc://", state_->address); }

void Server::join() {
  if (state_->server != nullptr) state_->server->Wait();
}

void Server::stop() {
  if (state_->server == nullptr) return;
  std::call_once(state_->stopped, [this] {
    state_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    state_->server->Wait();
    state_->service->clear();
  });
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
