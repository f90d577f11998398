#pragma once
// Certificates made with the openssl command, in a directory of the caller's own: for the
// authentication tests (auth_fixture.h) and the TLS figures of the remote benchmark.
//
// make_certs() writes, into a directory, two certificate authorities (ca1, ca2), and for
// each a server certificate for 127.0.0.1 and a client certificate (server1/client1 from
// ca1, server2/client2 from ca2), each as NAME.pem and NAME.key, and client1-expired.pem
// (ca1's, expired yesterday, with client1.key).

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

}  // namespace mt::testing
