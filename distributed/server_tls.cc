#include "distributed/server_tls.h"

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace mt::distributed::internal {
namespace {

namespace fs = std::filesystem;

constexpr unsigned kRefreshSeconds = 1;  // how often gRPC re-reads the files
constexpr char kDirPrefix[] = "mt-server-tls-";

absl::Status write_private(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("[Server] cannot write ", path.string()));
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  return absl::OkStatus();
}

// Removes the directories of servers that were killed before they could (a SIGKILL):
// "mt-server-tls-<pid>-XXXXXX" of this user whose process is gone.
void remove_stale_dirs(const fs::path& tmp) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(tmp, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(kDirPrefix, 0) != 0) continue;
    long pid = std::strtol(name.c_str() + std::strlen(kDirPrefix), nullptr, 10);
    struct stat st {};
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH ||
        lstat(entry.path().c_str(), &st) != 0 || st.st_uid != getuid()) {
      continue;
    }
    fs::remove_all(entry.path(), ec);
  }
}

}  // namespace

absl::Status check_server_tls(const TlsOptions& tls) {
  if (tls.server_cert_pem.empty() != tls.server_key_pem.empty()) {
    return absl::InvalidArgumentError("[Server] TLS needs both a certificate and its key");
  }
  if (!tls.client_ca_pem.empty() && tls.server_cert_pem.empty()) {
    return absl::InvalidArgumentError(
        "[Server] mutual TLS (a client CA) needs the server's certificate and key too");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ServerTls>> ServerTls::create(const TlsOptions& tls) {
  MT_RETURN_IF_ERROR(check_server_tls(tls));
  std::unique_ptr<ServerTls> out(new ServerTls());
  fs::path tmp = fs::temp_directory_path();
  remove_stale_dirs(tmp);
  std::string dir = (tmp / absl::StrCat(kDirPrefix, getpid(), "-XXXXXX")).string();
  if (mkdtemp(dir.data()) == nullptr) {  // mode 0700
    return absl::InternalError(absl::StrCat("[Server] cannot make a directory like ", dir));
  }
  out->dir_ = dir;
  out->mutual_ = !tls.client_ca_pem.empty();
  MT_RETURN_IF_ERROR(out->write_generation(tls));
  fs::path current = fs::path(dir) / "current";
  std::string ca = out->mutual_ ? (current / "ca.pem").string() : "";
  // Note [Certificate rotation]
  out->provider_ = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      (current / "key.pem").string(), (current / "cert.pem").string(), ca, kRefreshSeconds);
  grpc::experimental::TlsServerCredentialsOptions options(out->provider_);
  options.watch_identity_key_cert_pairs();
  if (out->mutual_) {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  out->credentials_ = grpc::experimental::TlsServerCredentials(options);
  return out;
}

ServerTls::~ServerTls() {
  std::error_code ignored;
  if (!dir_.empty()) fs::remove_all(dir_, ignored);
}

absl::Status ServerTls::update(const TlsOptions& tls) {
  MT_RETURN_IF_ERROR(check_server_tls(tls));
  if (tls.server_cert_pem.empty() || tls.client_ca_pem.empty() == mutual_) {
    return absl::InvalidArgumentError(
        absl::StrCat("[Server] new credentials must keep TLS", mutual_ ? " with" : " without",
                     " a client CA, as the server started (restart it to change that)"));
  }
  return write_generation(tls);
}

// Note [Certificate rotation]: gen-N/, then `current` renamed to point at it.
absl::Status ServerTls::write_generation(const TlsOptions& tls) {
  fs::path dir = fs::path(dir_);
  fs::path gen = dir / absl::StrCat("gen-", ++generation_);
  std::error_code ec;
  fs::create_directory(gen, ec);
  if (ec) return absl::InternalError(absl::StrCat("[Server] cannot make ", gen.string()));
  MT_RETURN_IF_ERROR(write_private(gen / "key.pem", tls.server_key_pem));
  MT_RETURN_IF_ERROR(write_private(gen / "cert.pem", tls.server_cert_pem));
  if (mutual_) MT_RETURN_IF_ERROR(write_private(gen / "ca.pem", tls.client_ca_pem));
  fs::path link = dir / "current.new";
  fs::remove(link, ec);
  fs::create_directory_symlink(gen.filename(), link, ec);
  if (!ec) fs::rename(link, dir / "current", ec);
  if (ec) return absl::InternalError(absl::StrCat("[Server] cannot switch to ", gen.string()));
  // The generation before the last stays: the watcher may be reading it right now.
  fs::remove_all(dir / absl::StrCat("gen-", generation_ - 2), ec);
  return absl::OkStatus();
}

}  // namespace mt::distributed::internal
