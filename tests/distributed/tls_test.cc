// TLS through gRPC's SSL credentials, with a self-signed certificate made for the test.
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "tests/distributed/worker_process.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using ::testing::ElementsAre;
using testing::expect_error;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TlsTest : public testing::RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    dir_ = fs::temp_directory_path() / ("mt-tls-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::string cmd =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
        "-addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout " +
        (dir_ / "key.pem").string() + " -out " + (dir_ / "cert.pem").string() + " 2>/dev/null";
    if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "openssl could not make a certificate";
    spec_ = testing::loopback_workers(1);
    worker_.start(
        spec_, 0,
        {"--tls_cert", (dir_ / "cert.pem").string(), "--tls_key", (dir_ / "key.pem").string()});
  }
  void TearDown() override {
    worker_.stop(SIGTERM);  // not SIGKILL: it removes its copies of the key
    fs::remove_all(dir_);
    RuntimeTest::TearDown();
  }

  fs::path dir_;
  distributed::ClusterSpec spec_;
  testing::WorkerProcess worker_;
};

TEST_F(TlsTest, RunsOpsOverTls) {
  config::ConnectOptions options;
  options.connect_timeout_ms = 10'000;
  options.tls.root_cert_pem = read(dir_ / "cert.pem");
  config::experimental_connect_to_cluster(spec_, "localhost", 0, options);
  DeviceScope scope("/job:worker/task:0");
  EXPECT_THAT((constant({1.f, 2.f}) * constant({3.f, 4.f})).to_vector<float>(),
              ElementsAre(3.f, 8.f));
}

TEST_F(TlsTest, PlaintextClientCannotConnect) {
  config::ConnectOptions options;
  options.connect_timeout_ms = 1'000;
  Error e = expect_error(
      [&] { config::experimental_connect_to_cluster(spec_, "localhost", 0, options); });
  EXPECT_EQ(e.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(e.what(), HasSubstr("task /job:worker/replica:0/task:0 at " + spec_["worker"][0]));
}

}  // namespace
}  // namespace mt
