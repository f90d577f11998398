// Mutual TLS (mt-server --tls_client_ca): clients need a certificate from the client CA.
// Certificates made with the openssl command for each test (tests/distributed/auth_fixture.h).
#include <signal.h>

#include "gmock/gmock.h"
#include "tests/distributed/auth_fixture.h"
#include "tests/distributed/raw_client.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using testing::expect_error;
using ::testing::HasSubstr;
using testing::RawClient;

class MutualTlsTest : public testing::RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    if (!testing::make_certs(dir_.path())) GTEST_SKIP() << "openssl could not make certificates";
    // The server reads copies, which the rotation test replaces.
    for (const char* f : {"server1.pem", "server1.key", "ca1.pem"}) {
      fs::copy_file(dir_ / f, dir_ / ("served-" + std::string(f)));
    }
    spec_ = testing::loopback_workers(1);
    worker_.set_stderr((dir_ / "server.log").string());
    worker_.start(spec_, 0, testing::mtls_flags(dir_.path(), "served-server1", "served-ca1"));
  }
  void TearDown() override {
    worker_.stop(SIGTERM);  // not SIGKILL: it removes its copies of the keys
    RuntimeTest::TearDown();
  }
  // Connects the runtime trusting `ca` and showing `client` with `key` (none when empty).
  void connect(const std::string& ca, const std::string& client, const std::string& key) {
    config::ConnectOptions options;
    options.connect_timeout_ms = 2'000;
    options.tls.root_cert_pem = testing::read_text(dir_ / (ca + ".pem"));
    if (!client.empty()) {
      options.tls.client_cert_pem = testing::read_text(dir_ / (client + ".pem"));
      options.tls.client_key_pem = testing::read_text(dir_ / (key + ".key"));
    }
    config::experimental_connect_to_cluster(spec_, "localhost", 0, options);
  }
  const std::string& address() { return spec_["worker"][0]; }
  RawClient raw(const std::string& ca, const std::string& client, const std::string& key = "") {
    return RawClient(address(), "", testing::client_tls(dir_.path(), ca, client, key));
  }
  // Checks that a client without the right certificate cannot connect, and that an
  // authenticated one goes on, its tensors and the pool untouched.
  void expect_refused(const std::string& client, const std::string& key) {
    RawClient good = raw("ca1", "client1");
    uint64_t h = 0;
    ASSERT_TRUE(good.constant({1.f, 2.f}, &h).ok());
    int64_t bytes = 0, allocs = 0;
    ASSERT_TRUE(good.memory(&bytes, &allocs).ok());
    Error e = expect_error([&] { connect("ca1", client, key); });
    EXPECT_EQ(e.code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(e.what(), HasSubstr("[experimental_connect_to_cluster] task "
                                    "/job:worker/replica:0/task:0 at " +
                                    address() + " is unavailable: no answer within 2000 ms ("));
    EXPECT_THAT(e.what(), HasSubstr("Socket closed); with TLS this is also how a task that "
                                    "requires a client certificate refuses a client without one "
                                    "it accepts"));
    RawClient bad = raw("ca1", client, key);
    uint64_t out = 0;
    grpc::Status s = bad.constant({1.f}, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(s.error_message(), HasSubstr("Socket closed"));
    int64_t bytes_after = 0, allocs_after = 0;
    ASSERT_TRUE(good.memory(&bytes_after, &allocs_after).ok());
    EXPECT_EQ(bytes_after, bytes);
    EXPECT_EQ(allocs_after, allocs);
    std::vector<float> values;
    ASSERT_TRUE(good.fetch(h, &values).ok());
    EXPECT_THAT(values, ElementsAre(1.f, 2.f));
  }

  testing::TempDir dir_;
  distributed::ClusterSpec spec_;
  testing::WorkerProcess worker_;
};

TEST_F(MutualTlsTest, RunsOpsWithAClientCertificate) {
  connect("ca1", "client1", "client1");
  DeviceScope scope("/job:worker/task:0");
  EXPECT_THAT((constant({1.f, 2.f}) * constant({3.f, 4.f})).to_vector<float>(),
              ElementsAre(3.f, 8.f));
  std::vector<float> big(5 << 18, 2.5f);  // 5 MiB: uploaded and read in pieces
  EXPECT_EQ(identity(constant(big, {5 << 18})).to_vector<float>(), big);
}

TEST_F(MutualTlsTest, ClientWithoutACertificateCannotConnect) { expect_refused("", ""); }

TEST_F(MutualTlsTest, ClientCertificateFromAnotherCaCannotConnect) {
  expect_refused("client2", "client2");
}

TEST_F(MutualTlsTest, ExpiredClientCertificateCannotConnect) {
  expect_refused("client1-expired", "client1");
}

// The server's certificate and client CA move from ca1 to ca2 on SIGHUP: new connections
// need ca2's, the connection opened before goes on.
TEST_F(MutualTlsTest, RotatesCertificatesOnSighup) {
  RawClient before = raw("ca1", "client1");
  int64_t bytes = 0, allocs = 0;
  ASSERT_TRUE(before.memory(&bytes, &allocs).ok());
  for (auto [from, to] :
       {std::pair{"server2.pem", "served-server1.pem"},
        std::pair{"server2.key", "served-server1.key"}, std::pair{"ca2.pem", "served-ca1.pem"}}) {
    fs::copy_file(dir_ / from, dir_ / to, fs::copy_options::overwrite_existing);
  }
  worker_.signal(SIGHUP);
  ASSERT_TRUE(testing::wait_for_text(dir_ / "server.log", "mt-server: reloaded the credentials"))
      << testing::read_text(dir_ / "server.log");
  // gRPC's certificate provider reads the new files within a second (Note [Certificate
  // rotation] in distributed/server_tls.h).
  bool rotated = false;
  for (int i = 0; i < 50 && !rotated; ++i) {
    rotated = raw("ca2", "client2").devices().ok();
    if (!rotated) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(rotated);
  RawClient after = raw("ca2", "client2");
  uint64_t a = 0, sum = 0;
  ASSERT_TRUE(after.constant({1.f, 2.f}, &a).ok());
  ASSERT_TRUE(after.add(a, a, &sum).ok());
  std::vector<float> values;
  ASSERT_TRUE(after.fetch(sum, &values).ok());
  EXPECT_THAT(values, ElementsAre(2.f, 4.f));
  ASSERT_TRUE(after.remove({a, sum}).ok());
  EXPECT_EQ(raw("ca1", "client1").devices().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(raw("ca2", "client1", "client1").devices().error_code(), grpc::StatusCode::UNAVAILABLE);
  int64_t bytes_after = 0;
  ASSERT_TRUE(before.memory(&bytes_after, &allocs).ok());  // its connection stays
  EXPECT_EQ(bytes_after, bytes);
}

TEST_F(MutualTlsTest, UpdateCredentialsKeepsMutualTls) {
  distributed::ServerOptions options;
  options.tls.server_cert_pem = testing::read_text(dir_ / "server1.pem");
  options.tls.server_key_pem = testing::read_text(dir_ / "server1.key");
  options.tls.client_ca_pem = testing::read_text(dir_ / "ca1.pem");
  distributed::Server server(testing::loopback_workers(1), "worker", 0, options);
  distributed::ServerOptions without_ca = options;
  without_ca.tls.client_ca_pem.clear();
  Error e = expect_error([&] { server.update_credentials(without_ca); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("[Server] new credentials must keep TLS with a client CA, as "
                                  "the server started (restart it to change that)"));
  distributed::ServerOptions without_key = options;
  without_key.tls.server_key_pem.clear();
  e = expect_error([&] { server.update_credentials(without_key); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("[Server] TLS needs both a certificate and its key"));
  server.update_credentials(options);  // the same again is fine
}

// Returns the TLS directories (Note [Certificate rotation]) of process `pid`.
std::vector<fs::path> tls_dirs(pid_t pid) {
  std::vector<fs::path> out;
  std::string prefix = absl::StrCat("mt-server-tls-", pid, "-");
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path())) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) out.push_back(entry.path());
  }
  return out;
}

TEST_F(MutualTlsTest, StoppedServerLeavesNoKeysBehind) {
  std::vector<fs::path> dirs = tls_dirs(worker_.pid());
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_TRUE(fs::exists(dirs[0] / "current" / "key.pem"));
  EXPECT_EQ(fs::status(dirs[0]).permissions(), fs::perms::owner_all);
  EXPECT_EQ(worker_.stop(SIGTERM), 0);
  EXPECT_FALSE(fs::exists(dirs[0]));
}

TEST_F(MutualTlsTest, NextServerRemovesTheKeysOfAKilledOne) {
  pid_t killed = worker_.pid();
  std::vector<fs::path> dirs = tls_dirs(killed);
  ASSERT_EQ(dirs.size(), 1u);
  worker_.kill();  // SIGKILL: it could not remove them
  ASSERT_TRUE(fs::exists(dirs[0]));
  testing::WorkerProcess next;
  next.start(testing::loopback_workers(1), 0, testing::mtls_flags(dir_.path(), "server1", "ca1"));
  EXPECT_FALSE(fs::exists(dirs[0]));
  EXPECT_EQ(tls_dirs(next.pid()).size(), 1u);
  next.stop(SIGTERM);
}

}  // namespace
}  // namespace mt
