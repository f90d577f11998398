// Resource limits per client (mt-server --max_client_bytes): one client cannot take the
// task's memory from the others.
#include "gmock/gmock.h"
#include "tests/distributed/raw_client.h"
#include "tests/distributed/worker_process.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using ::testing::ElementsAre;
using testing::expect_error;
using ::testing::HasSubstr;
using testing::RawClient;

constexpr int64_t kLimit = 4096;

class ClientLimitsTest : public testing::RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    spec_ = testing::loopback_workers(1);
    worker_.start(spec_, 0, {"--max_client_bytes", std::to_string(kLimit)});
  }
  void TearDown() override {
    worker_.kill();
    RuntimeTest::TearDown();
  }
  const std::string& address() { return spec_["worker"][0]; }
  static std::string over(const std::string& op, int64_t bytes, int64_t total) {
    return absl::StrCat("[", op, "] a tensor of ", bytes,
                        " bytes would take this client's tensors on the task to ", total,
                        " bytes, over its limit of 4096 bytes (mt-server --max_client_bytes)");
  }

  distributed::ClusterSpec spec_;
  testing::WorkerProcess worker_;
};

TEST_F(ClientLimitsTest, ClientOverItsLimitIsResourceExhaustedAndOthersGoOn) {
  config::ConnectOptions options;
  options.connect_timeout_ms = 5'000;
  config::experimental_connect_to_cluster(spec_, "localhost", 0, options);
  RawClient other(address());
  int64_t before = 0, allocs = 0;
  ASSERT_TRUE(other.memory(&before, &allocs).ok());
  DeviceScope scope("/job:worker/task:0");
  Tensor a = constant(std::vector<float>(512, 1.f), {512});  // 2048 bytes
  Tensor b = constant(std::vector<float>(512, 2.f), {512});  // 4096 held
  Error e = expect_error([] { constant({7.f}).to_vector<float>(); });
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(e.what(), HasSubstr("task /job:worker/replica:0/task:0 at " + address()));
  EXPECT_THAT(e.what(), HasSubstr(over("_EagerConst", 4, 4100)));
  // Another client has a limit of its own.
  uint64_t h1 = 0, h2 = 0, h3 = 0;
  ASSERT_TRUE(other.constant(std::vector<float>(1024, 3.f), &h1).ok());
  grpc::Status s = other.constant({1.f}, &h2);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr(over("_EagerConst", 4, 4100)));
  // Freeing makes room again once the free is done (get_memory_info waits for it); the
  // tensors held all along are intact.
  a = Tensor();
  config::get_memory_info("/job:worker/replica:0/task:0/device:CPU:0");
  EXPECT_THAT(constant({7.f, 8.f}).to_vector<float>(), ElementsAre(7.f, 8.f));
  EXPECT_EQ(b.to_vector<float>(), std::vector<float>(512, 2.f));
  ASSERT_TRUE(other.remove({h1}).ok());
  ASSERT_TRUE(other.constant({1.f}, &h3).ok());
  ASSERT_TRUE(other.remove({h3}).ok());
  b = Tensor();
  config::get_memory_info("/job:worker/replica:0/task:0/device:CPU:0");  // the frees are done
  int64_t after = 0;
  ASSERT_TRUE(other.memory(&after, &allocs).ok());
  EXPECT_EQ(after, before);
}

TEST_F(ClientLimitsTest, ResultOverTheLimitIsRefusedAndFreed) {
  RawClient client(address());
  uint64_t a = 0, sum = 0;
  ASSERT_TRUE(client.constant(std::vector<float>(750, 1.f), &a).ok());  // 3000 bytes
  int64_t held = 0, allocs = 0;
  ASSERT_TRUE(client.memory(&held, &allocs).ok());
  grpc::Status s = client.add(a, a, &sum);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr(over("AddV2", 3000, 6000)));
  int64_t after = 0;
  ASSERT_TRUE(client.memory(&after, &allocs).ok());
  EXPECT_EQ(after, held);
}

TEST_F(ClientLimitsTest, UploadOverTheLimitIsRefusedBeforeItsBytesArrive) {
  RawClient client(address());
  int64_t before = 0, allocs = 0;
  ASSERT_TRUE(client.memory(&before, &allocs).ok());
  grpc::Status s = client.upload(99, std::vector<float>(2048, 1.f));  // 8192 bytes
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr(over("Upload", 8192, 8192)));
  distributed::proto::UploadRequest in_parts;  // the first call of an upload in parts
  in_parts.set_handle(99);
  in_parts.mutable_value()->set_dtype(static_cast<int>(DType::kFloat32));
  in_parts.mutable_value()->add_dims(2048);
  in_parts.set_parts(2);
  s = client.upload(in_parts, {});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr(over("Upload", 8192, 8192)));
  int64_t after = 0, allocs_after = 0;
  ASSERT_TRUE(client.memory(&after, &allocs_after).ok());
  EXPECT_EQ(after, before);
  EXPECT_EQ(allocs_after, allocs);  // refused before allocating
}

TEST_F(ClientLimitsTest, ClientSeesOnlyItsOwnTensors) {
  RawClient owner(address()), other(address());
  uint64_t h = 0, out = 0;
  ASSERT_TRUE(owner.constant({1.f, 2.f}, &h).ok());
  std::vector<float> values;
  grpc::Status s = other.fetch(h, &values);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(),
              HasSubstr(absl::StrCat("[Fetch] tensor handle ", h, " is not on this task")));
  EXPECT_EQ(other.add(h, h, &out).error_code(), grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(other.remove({h}).ok());  // not its own: nothing happens
  ASSERT_TRUE(owner.fetch(h, &values).ok());
  EXPECT_THAT(values, ElementsAre(1.f, 2.f));
}

}  // namespace
}  // namespace mt
