#pragma once
// Helpers for the authentication tests: the certificates and files of certs.h, mt-server's
// stderr, and mt-server runs that should fail to start.

#include <grpcpp/grpcpp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "tests/distributed/certs.h"
#include "tests/distributed/worker_process.h"

namespace mt::testing {

// Waits up to `seconds` for `path` to contain `text`.
inline bool wait_for_text(const fs::path& path, const std::string& text, int seconds = 10) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (read_text(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Flags for mt-server serving NAME.pem/.key of `dir` and requiring clients from `ca`.
inline std::vector<std::string> mtls_flags(const fs::path& dir, const std::string& server,
                                           const std::string& ca) {
  return {"--tls_cert",      (dir / (server + ".pem")).string(),
          "--tls_key",       (dir / (server + ".key")).string(),
          "--tls_client_ca", (dir / (ca + ".pem")).string()};
}

// Client credentials trusting `ca` and showing `client` (none when empty).
inline std::shared_ptr<grpc::ChannelCredentials> client_tls(const fs::path& dir,
                                                            const std::string& ca,
                                                            const std::string& client,
                                                            const std::string& key = "") {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = read_text(dir / (ca + ".pem"));
  if (!client.empty()) {
    ssl.pem_cert_chain = read_text(dir / (client + ".pem"));
    ssl.pem_private_key = read_text(dir / ((key.empty() ? client : key) + ".key"));
  }
  return grpc::SslCredentials(ssl);
}

// What an mt-server run that was expected to exit said, and its exit status.
struct ServerExit {
  int code = -1;
  std::string stderr_text;
};

// Runs mt-server with `args` (10 s at most) and returns how it ended.
inline ServerExit run_server_to_exit(const std::vector<std::string>& args, const fs::path& log) {
  std::string cmd = absl::StrCat("timeout 10 ", mt_server_path(), " ", absl::StrJoin(args, " "),
                                 " >/dev/null 2>", log.string());
  int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(log)};
}

// An mt-server command line that must be refused: its flags after --cluster, the exit
// status and a message its stderr holds.
struct ServerRefusal {
  std::vector<std::string> flags;
  int code;
  std::string message;
};

// Runs mt-server for cluster `spec` with each refusal's flags and checks how it exits.
inline void expect_server_refuses(const std::string& spec, const std::vector<ServerRefusal>& cases,
                                  const fs::path& log) {
  for (const ServerRefusal& c : cases) {
    std::vector<std::string> args = {"--cluster", spec};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    ServerExit run = run_server_to_exit(args, log);
    EXPECT_EQ(run.code, c.code) << c.message;
    EXPECT_THAT(run.stderr_text, ::testing::HasSubstr(c.message));
  }
}

}  // namespace mt::testing
