#pragma once
// Helpers for the authentication tests: certificates made with the openssl command, files
// in a directory of the test's own, mt-server's stderr, and mt-server runs that should
// fail to start.
//
// Certs::make() writes, into a fresh directory, two certificate authorities (ca1, ca2),
// and for each a server certificate for 127.0.0.1 and a client certificate
// (server1/client1 from ca1, server2/client2 from ca2), each as NAME.pem and NAME.key, and
// client1-expired.pem (ca1's, expired yesterday, with client1.key).

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
#include "tests/distributed/worker_process.h"

namespace mt::testing {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// Waits up to `seconds` for `path` to contain `text`.
inline bool wait_for_text(const fs::path& path, const std::string& text, int seconds = 10) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (read_text(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A directory of the test's own, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "mt-auth-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

// Returns false when openssl could not make them.
inline bool make_certs(const fs::path& dir) {
  std::string d = dir.string();
  std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::vector<std::string> steps = {
      absl::StrCat("printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ", d, "/san.ext")};
  auto sign = [&](const std::string& name, const std::string& ca, const std::string& cn,
                  const std::string& days, const std::string& out, bool san) {
    steps.push_back(absl::StrCat("openssl req ", ec, " -subj /CN=", cn, " -keyout ", d, "/", name,
                                 ".key -out ", d, "/", name, ".csr"));
    steps.push_back(absl::StrCat("openssl x509 -req -in ", d, "/", name, ".csr -CA ", d, "/", ca,
                                 ".pem -CAkey ", d, "/", ca, ".key -CAcreateserial -days ", days,
                                 san ? absl::StrCat(" -extfile ", d, "/san.ext") : "", " -out ", d,
                                 "/", out, ".pem"));
  };
  for (std::string ca : {"ca1", "ca2"}) {
    steps.push_back(absl::StrCat("openssl req -x509 ", ec, " -days 2 -subj /CN=mt-test-", ca,
                                 " -keyout ", d, "/", ca, ".key -out ", d, "/", ca, ".pem"));
    std::string n = ca.substr(2);
    sign("server" + n, ca, "localhost", "1", "server" + n, true);
    sign("client" + n, ca, "client" + n, "1", "client" + n, false);
  }
  steps.push_back(absl::StrCat("openssl x509 -req -in ", d, "/client1.csr -CA ", d,
                               "/ca1.pem -CAkey ", d, "/ca1.key -days -1 -out ", d,
                               "/client1-expired.pem"));
  std::string cmd = absl::StrCat("(", absl::StrJoin(steps, " && "), ") >/dev/null 2>&1");
  return std::system(cmd.c_str()) == 0;
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

}  // namespace mt::testing
