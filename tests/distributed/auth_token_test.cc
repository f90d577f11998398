// Client authentication by a shared token (mt-server --auth_token_file), real processes on
// loopback.
#include <signal.h>

#include "gmock/gmock.h"
#include "tests/distributed/auth_fixture.h"
#include "tests/distributed/raw_client.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using ::testing::ElementsAre;
using testing::expect_error;
using ::testing::HasSubstr;
using testing::RawClient;

constexpr char kToken[] = "s3cret-token";

class AuthTokenTest : public testing::RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    testing::write_text(dir_ / "token", std::string(kToken) + "\n");
    spec_ = testing::loopback_workers(1);
    worker_.set_stderr((dir_ / "server.log").string());
    worker_.start(spec_, 0, {"--auth_token_file", (dir_ / "token").string()});
  }
  void TearDown() override {
    worker_.kill();
    RuntimeTest::TearDown();
  }
  void connect(const std::string& token) {
    config::ConnectOptions options;
    options.connect_timeout_ms = 5'000;
    options.auth_token = token;
    config::experimental_connect_to_cluster(spec_, "localhost", 0, options);
  }
  const std::string& address() { return spec_["worker"][0]; }
  std::string log() { return testing::read_text(dir_ / "server.log"); }

  testing::TempDir dir_;
  distributed::ClusterSpec spec_;
  testing::WorkerProcess worker_;
};

TEST_F(AuthTokenTest, RunsOpsWithTheToken) {
  connect(kToken);
  DeviceScope scope("/job:worker/task:0");
  EXPECT_THAT((constant({1.f, 2.f}) * constant({3.f, 4.f})).to_vector<float>(),
              ElementsAre(3.f, 8.f));
  std::vector<float> big(5 << 18, 1.5f);  // 5 MiB: uploaded and read in pieces
  EXPECT_EQ(identity(constant(big, {5 << 18})).to_vector<float>(), big);
}

TEST_F(AuthTokenTest, ConnectWithoutATokenIsUnauthenticated) {
  Error e = expect_error([&] { connect(""); });
  EXPECT_EQ(e.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(e.what(), HasSubstr("[experimental_connect_to_cluster] task "
                                  "/job:worker/replica:0/task:0 at " +
                                  address() +
                                  " refused the call: [GetDevices] no auth token was sent "
                                  "(ConnectOptions::auth_token)"));
  EXPECT_TRUE(testing::wait_for_text(dir_ / "server.log",
                                     "[Server] refused GetDevices from ipv4:127.0.0.1:"))
      << log();
}

TEST_F(AuthTokenTest, ConnectWithAWrongTokenIsUnauthenticated) {
  Error e = expect_error([&] { connect("not-the-token"); });
  EXPECT_EQ(e.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(e.what(), HasSubstr("refused the call: [GetDevices] the auth token sent is not "
                                  "the task's (ConnectOptions::auth_token)"));
  EXPECT_TRUE(testing::wait_for_text(dir_ / "server.log",
                                     "[Server] refused GetDevices from ipv4:127.0.0.1:"))
      << log();
  EXPECT_THAT(log(), HasSubstr("the auth token sent is not the task's"));
}

// Every method of both services, streams included, refuses the call before touching a
// tensor: the owner's tensor is still there and the pool did not move.
TEST_F(AuthTokenTest, EveryMethodRefusesACallWithoutTheToken) {
  RawClient owner(address(), kToken);
  uint64_t h = 0;
  ASSERT_TRUE(owner.constant({1.f, 2.f}, &h).ok());
  int64_t bytes = 0, allocs = 0;
  ASSERT_TRUE(owner.memory(&bytes, &allocs).ok());
  for (const char* token : {"", "wrong"}) {
    SCOPED_TRACE(token);
    RawClient intruder(address(), token);
    std::string why = *token == '\0' ? "no auth token was sent" : "the auth token sent is not";
    uint64_t out = 0;
    std::vector<float> values;
    int64_t b = 0, a = 0;
    std::vector<std::pair<std::string, grpc::Status>> calls = {
        {"GetDevices", intruder.devices()},
        {"RunOp", intruder.constant({1.f}, &out)},
        {"RunOp", intruder.add(h, h, &out)},
        {"Fetch", intruder.fetch(h, &values)},
        {"Delete", intruder.remove({h})},
        {"GetMemoryInfo", intruder.memory(&b, &a)},
        {"Enqueue", intruder.enqueue_fill(77)},
        {"Upload", intruder.upload(78, std::vector<float>(1 << 18, 1.f))},
        {"Fetch", intruder.fetch_pieces(h, 2, &values)}};
    for (const auto& [method, status] : calls) {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method;
      EXPECT_THAT(status.error_message(), HasSubstr("[" + method + "] " + why)) << method;
    }
  }
  int64_t bytes_after = 0, allocs_after = 0;
  ASSERT_TRUE(owner.memory(&bytes_after, &allocs_after).ok());
  EXPECT_EQ(bytes_after, bytes);
  EXPECT_EQ(allocs_after, allocs);
  std::vector<float> values;
  ASSERT_TRUE(owner.fetch(h, &values).ok());
  EXPECT_THAT(values, ElementsAre(1.f, 2.f));
  EXPECT_TRUE(testing::wait_for_text(dir_ / "server.log", "[Server] refused Upload from ipv4:"));
}

TEST_F(AuthTokenTest, ReloadsTheTokenOnSighup) {
  RawClient old_client(address(), kToken), new_client(address(), "new-token");
  int64_t before = 0, allocs = 0;
  ASSERT_TRUE(old_client.memory(&before, &allocs).ok());
  EXPECT_EQ(new_client.devices().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  testing::write_text(dir_ / "token", "new-token\n");
  worker_.signal(SIGHUP);
  ASSERT_TRUE(testing::wait_for_text(dir_ / "server.log", "mt-server: reloaded the credentials"))
      << log();
  grpc::Status old_status = old_client.devices();
  EXPECT_EQ(old_status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(old_status.error_message(), HasSubstr("the auth token sent is not the task's"));
  uint64_t a = 0, sum = 0;
  ASSERT_TRUE(new_client.constant({1.f, 2.f}, &a).ok());
  ASSERT_TRUE(new_client.add(a, a, &sum).ok());
  std::vector<float> values;
  ASSERT_TRUE(new_client.fetch(sum, &values).ok());
  EXPECT_THAT(values, ElementsAre(2.f, 4.f));
  ASSERT_TRUE(new_client.remove({a, sum}).ok());
  int64_t after = 0;
  ASSERT_TRUE(new_client.memory(&after, &allocs).ok());
  EXPECT_EQ(after, before);
}

TEST_F(AuthTokenTest, OpenOpStreamEndsWhenTheTokenChanges) {
  connect(kToken);
  DeviceScope scope("/job:worker/task:0");
  EXPECT_THAT(constant({1.f, 2.f}).to_vector<float>(), ElementsAre(1.f, 2.f));  // opens it
  testing::write_text(dir_ / "token", "new-token\n");
  worker_.signal(SIGHUP);
  ASSERT_TRUE(testing::wait_for_text(dir_ / "server.log", "mt-server: reloaded the credentials"));
  Error e = expect_error([] { constant({3.f}).to_vector<float>(); });
  EXPECT_EQ(e.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(e.what(),
              HasSubstr("[_EagerConst] task /job:worker/replica:0/task:0 at " + address() +
                        " refused the call: [Enqueue] the auth token sent is not the "
                        "task's (ConnectOptions::auth_token)"));
}

TEST_F(AuthTokenTest, KeepsTheTokenWhenTheReloadFails) {
  testing::write_text(dir_ / "token", "\n");
  worker_.signal(SIGHUP);
  ASSERT_TRUE(testing::wait_for_text(
      dir_ / "server.log",
      "mt-server: kept the old credentials: " + (dir_ / "token").string() + " holds no token"))
      << log();
  RawClient client(address(), kToken);
  EXPECT_TRUE(client.devices().ok());
}

}  // namespace
}  // namespace mt
