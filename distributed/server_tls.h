#pragma once
// ServerTls: a task's TLS credentials, whose certificates can be replaced while it serves
// (internal).
//
// Note [Certificate rotation]
// gRPC 1.51 (Debian 12) changes a server's certificates only through a certificate
// provider; the one it ships, FileWatcherCertificateProvider, re-reads files every second.
// ServerTls therefore writes the PEM text it is given into a directory of its own (mode
// 0700): generation N goes to gen-N/, and a symbolic link `current` is renamed over to
// point at it, so that the watcher never reads a key of one generation with the
// certificate of another. update() writes the next generation; connections opened a
// second later use it, those already open keep theirs. mt-server calls it on SIGHUP, with
// the files read again. The directory goes when the server does; one left by a server
// that was killed (SIGKILL) is removed by the next server of the same user to start.
//
//   auto tls = ServerTls::create(options.tls);   // StatusOr
//   builder.AddListeningPort(address, (*tls)->credentials());
//   (*tls)->update(new_options.tls);
//
// Thread safety: update() may be called from any thread, one call at a time.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "distributed/distributed.h"

namespace mt::distributed::internal {

class ServerTls {
 public:
  // Returns credentials serving tls.server_cert_pem with tls.server_key_pem and, when
  // tls.client_ca_pem is set, requiring a client certificate signed by it. InvalidArgument
  // for a certificate without a key or the reverse; Internal when the directory cannot be
  // written.
  static absl::StatusOr<std::unique_ptr<ServerTls>> create(const TlsOptions& tls);
  ~ServerTls();  // removes the directory

  std::shared_ptr<grpc::ServerCredentials> credentials() const { return credentials_; }

  // Serves `tls` from now on; InvalidArgument when it would turn mutual TLS on or off.
  absl::Status update(const TlsOptions& tls);

 private:
  ServerTls() = default;
  absl::Status write_generation(const TlsOptions& tls);

  std::string dir_;
  bool mutual_ = false;
  int generation_ = 0;
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider_;
  std::shared_ptr<grpc::ServerCredentials> credentials_;
};

// Returns InvalidArgument unless `tls` is empty or has both a certificate and its key
// (a client CA without them included).
absl::Status check_server_tls(const TlsOptions& tls);

}  // namespace mt::distributed::internal
