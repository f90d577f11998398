// What a server refuses to start with, and how its credentials may change while it runs.
#include "gmock/gmock.h"
#include "tests/distributed/auth_fixture.h"
#include "tests/distributed/raw_client.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::expect_error;
using ::testing::HasSubstr;
using testing::RawClient;

class ServerSecurityTest : public testing::RuntimeTest {
 protected:
  // A one-task spec on `host` and an unused port.
  static distributed::ClusterSpec spec_on(const std::string& host, int port) {
    return {{"worker", {absl::StrCat(host, ":", port)}}};
  }
  testing::TempDir dir_;
};

TEST_F(ServerSecurityTest, RefusesAnOpenAddressWithoutAuthentication) {
  int port = distributed::pick_unused_loopback_port();
  std::string address = absl::StrCat("0.0.0.0:", port);
  testing::ServerExit run = testing::run_server_to_exit(
      {"--cluster", "worker=" + address, "--job", "worker", "--task", "0"}, dir_ / "log");
  EXPECT_EQ(run.code, 1);
  std::string why = "[Server] refusing to serve " + address + " without client authentication";
  EXPECT_THAT(run.stderr_text, HasSubstr("mt-server: " + why));
  EXPECT_THAT(run.stderr_text, HasSubstr("or pass --insecure (ServerOptions::insecure)"));
  Error e = expect_error([&] { distributed::Server(spec_on("0.0.0.0", port), "worker", 0); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr(why));
}

TEST_F(ServerSecurityTest, ServesAnOpenAddressWithATokenOrWhenInsecure) {
  testing::write_text(dir_ / "token", "t0ken");
  for (bool insecure : {false, true}) {
    int port = distributed::pick_unused_loopback_port();
    testing::WorkerProcess worker;
    worker.start(spec_on("0.0.0.0", port), 0,
                 insecure
                     ? std::vector<std::string>{"--insecure"}
                     : std::vector<std::string>{"--auth_token_file", (dir_ / "token").string()});
    RawClient client(absl::StrCat("127.0.0.1:", port), insecure ? "" : "t0ken");
    EXPECT_TRUE(client.devices().ok()) << insecure;
  }
}

TEST_F(ServerSecurityTest, RefusesBadCredentialFlags) {
  std::string spec = absl::StrCat("worker=127.0.0.1:", distributed::pick_unused_loopback_port());
  testing::write_text(dir_ / "empty", "\n");
  testing::write_text(dir_ / "pem", "not a certificate");
  testing::expect_server_refuses(
      spec,
      {
          {{"--auth_token_file", (dir_ / "missing").string()},
           2,
           "mt-server: cannot read " + (dir_ / "missing").string()},
          {{"--auth_token_file", (dir_ / "empty").string()},
           2,
           "mt-server: " + (dir_ / "empty").string() + " holds no token"},
          {{"--tls_client_ca", (dir_ / "pem").string()},
           1,
           "[Server] mutual TLS (a client CA) needs the server's certificate and key too"},
          {{"--max_client_bytes", "-1"}, 2, "mt-server: --max_client_bytes needs a number >= 0"},
      },
      dir_ / "log");
}

TEST_F(ServerSecurityTest, RefusesACertificateWithoutItsKey) {
  distributed::ServerOptions options;
  options.tls.server_cert_pem = "cert";
  Error e = expect_error(
      [&] { distributed::Server(testing::loopback_workers(1), "worker", 0, options); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("[Server] TLS needs both a certificate and its key"));
}

TEST_F(ServerSecurityTest, RefusesANegativeClientLimit) {
  distributed::ServerOptions options;
  options.max_client_bytes = -1;
  Error e = expect_error(
      [&] { distributed::Server(testing::loopback_workers(1), "worker", 0, options); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("[Server] max_client_bytes must be >= 0 (0: no limit), got -1"));
}

TEST_F(ServerSecurityTest, UpdateCredentialsKeepsTheModeTheServerStartedIn) {
  distributed::ServerOptions options;
  options.auth_token = "t0ken";
  distributed::Server server(testing::loopback_workers(1), "worker", 0, options);
  distributed::ServerOptions no_token;
  Error e = expect_error([&] { server.update_credentials(no_token); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("[Server] new credentials must keep an auth token if and only "
                                  "if the server started with one"));
  distributed::ServerOptions with_tls = options;
  with_tls.tls.server_cert_pem = "cert";
  with_tls.tls.server_key_pem = "key";
  e = expect_error([&] { server.update_credentials(with_tls); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("[Server] the server started without TLS"));
}

TEST(AuthTest, ComparesTokensWhateverTheirLengths) {
  using distributed::internal::constant_time_equal;
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
  EXPECT_FALSE(constant_time_equal("", "a"));
}

TEST(AuthTest, TellsLoopbackAddresses) {
  using distributed::internal::is_loopback;
  for (const char* address : {"127.0.0.1:1", "127.1.2.3:80", "localhost:2222", "[::1]:5"}) {
    EXPECT_TRUE(is_loopback(address)) << address;
  }
  for (const char* address :
       {"0.0.0.0:1", "10.0.0.1:1", "[::]:1", "example.com:1", "127.example.com:1", "128.0.0.1:1"}) {
    EXPECT_FALSE(is_loopback(address)) << address;
  }
}

}  // namespace
}  // namespace mt
