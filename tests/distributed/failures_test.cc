// Failures are errors, never hangs: killed and unreachable tasks, bad cluster specs,
// message limits, and malformed requests to a task.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "distributed/bulk_service.h"
#include "distributed/worker.grpc.pb.h"
#include "gmock/gmock.h"
#include "tests/distributed/distributed_fixture.h"

namespace mt {
namespace {

using ::testing::AnyOf;
using testing::expect_error;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::WorkerProcess;

class FailuresTest : public testing::RuntimeTest {
 protected:
  static config::ConnectOptions quick() {
    config::ConnectOptions options;
    options.rpc_timeout_ms = 5'000;
    options.connect_timeout_ms = 5'000;
    return options;
  }
};

TEST_F(FailuresTest, KilledWorkerIsUnavailableAndComesBack) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  std::string task = "/job:worker/replica:0/task:0";
  WorkerProcess worker;
  worker.start(spec, 0);
  config::experimental_connect_to_cluster(spec, "localhost", 0, quick());
  Tensor before;
  {
    DeviceScope scope(task);
    before = constant({1.f, 2.f});
  }
  before.to_vector<float>();  // ran on the task before it goes
  worker.kill();
  Tensor local = constant({3.f});
  {
    DeviceScope scope(task);
    // Enqueued: the error comes with the op, or at the read, naming the op either way.
    Error e = expect_error([&] { (before + before).to_vector<float>(); });
    EXPECT_EQ(e.code(), absl::StatusCode::kUnavailable) << e.what();
    EXPECT_THAT(e.what(),
                HasSubstr("[AddV2] task " + task + " at " + spec["worker"][0] + " is unavailable"));
  }
  EXPECT_EQ((local + local).to_vector<float>(), std::vector<float>{6.f});  // local work goes on
  worker.start(spec, 0);  // same address; gRPC reconnects within its 1 s backoff
  DeviceScope scope(task);
  std::vector<float> sum;
  for (int i = 0; i < 50 && sum.empty(); ++i) {
    try {
      sum = (constant({5.f}) + constant({1.f})).to_vector<float>();
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), absl::StatusCode::kUnavailable) << e.what();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  EXPECT_EQ(sum, std::vector<float>{6.f});
  // Its tensors died with the task.
  Error lost = expect_error([&] { (before + before).to_vector<float>(); });
  EXPECT_EQ(lost.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(lost.what(), HasSubstr("[AddV2] tensor handle"));
  EXPECT_THAT(lost.what(), HasSubstr("is not on this task (freed, or the task restarted)"));
}

TEST_F(FailuresTest, WorkerKilledWithOpsQueuedIsUnavailable) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  WorkerProcess worker;
  worker.start(spec, 0);
  config::experimental_connect_to_cluster(spec, "localhost", 0, quick());
  DeviceScope scope("/job:worker/task:0");
  Tensor x = ones({256, 256});
  Error e = expect_error([&] {
    for (int i = 0; i < 200; ++i) {
      x = matmul(x, x);
      if (i == 20) worker.kill();
    }
    x.to_vector<float>();
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kUnavailable) << e.what();
  EXPECT_THAT(e.what(), HasSubstr("task /job:worker/replica:0/task:0 at " + spec["worker"][0] +
                                  " is unavailable"));
}

TEST_F(FailuresTest, StoppedWorkerIsDeadlineExceededNotAHang) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  WorkerProcess worker;
  worker.start(spec, 0);
  config::ConnectOptions options = quick();
  options.rpc_timeout_ms = 500;
  config::experimental_connect_to_cluster(spec, "localhost", 0, options);
  DeviceScope scope("/job:worker/task:0");
  Tensor x = constant({1.f});
  x.to_vector<float>();
  worker.signal(SIGSTOP);  // alive, but answers nothing
  Error e = expect_error([&] { (x + x).to_vector<float>(); });
  EXPECT_EQ(e.code(), absl::StatusCode::kDeadlineExceeded) << e.what();
  // Named by the op waited for: AddV2, or Fetch if the task ran AddV2 before it stopped.
  EXPECT_THAT(e.what(), HasSubstr("] task /job:worker/replica:0/task:0 at " + spec["worker"][0] +
                                  " did not answer within 500 ms"));
  worker.signal(SIGCONT);
  EXPECT_EQ((x + x).to_vector<float>(), std::vector<float>{2.f});  // a new stream works
}

// A task that stops reading lets the op stream's flow-control window and the socket fill,
// and sending the next op then waits: that wait has the RPC deadline too. ctest's TIMEOUT
// catches the hang this guards against.
TEST_F(FailuresTest, StoppedWorkerWithAFullOpStreamIsDeadlineExceededNotAHang) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  std::string task = "/job:worker/replica:0/task:0";
  WorkerProcess worker;
  worker.start(spec, 0);
  config::ConnectOptions options = quick();
  options.rpc_timeout_ms = 2'000;
  config::experimental_connect_to_cluster(spec, "localhost", 0, options);
  Tensor x;
  {
    DeviceScope scope(task);
    x = constant({1.f});
  }
  x.to_vector<float>();
  worker.signal(SIGSTOP);
  // Each constant travels inside its op (64 KiB, the most that does): 256 MiB in all, far
  // more than the window and the socket buffers hold.
  const int64_t n = 16 << 10;
  std::vector<float> values(n, 1.f);
  Error e = expect_error([&] {
    DeviceScope scope(task);
    for (int i = 0; i < 4096; ++i) constant(values, {n});
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kDeadlineExceeded) << e.what();
  // Named by the first op the task did not answer: one of the constants.
  EXPECT_THAT(e.what(), HasSubstr("[_EagerConst] task " + task + " at " + spec["worker"][0] +
                                  " did not answer within 2000 ms"));
  Tensor local = constant({3.f});
  EXPECT_EQ((local + local).to_vector<float>(), std::vector<float>{6.f});  // local work goes on
  // An op issued while the task is still stopped fails too, on a new stream.
  Error again = expect_error([&] {
    DeviceScope scope(task);
    constant(values, {n});
    (x + x).to_vector<float>();
  });
  EXPECT_THAT(again.code(),
              AnyOf(absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kUnavailable))
      << again.what();
  EXPECT_THAT(again.what(), HasSubstr("] task " + task + " at " + spec["worker"][0]));
  worker.signal(SIGCONT);
  DeviceScope scope(task);
  EXPECT_EQ((x + x).to_vector<float>(), std::vector<float>{2.f});  // its tensors are there
}

// A large tensor goes in pieces on calls of its own (in parts over several connections),
// which a stopped task blocks the same way.
TEST_F(FailuresTest, StoppedWorkerDuringAnUploadIsDeadlineExceededNotAHang) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  std::string task = "/job:worker/replica:0/task:0";
  WorkerProcess worker;
  worker.start(spec, 0);
  config::ConnectOptions options = quick();
  options.rpc_timeout_ms = 2'000;
  config::experimental_connect_to_cluster(spec, "localhost", 0, options);
  const int64_t n = int64_t{16} << 20;  // 64 MiB, more than the window and the socket hold
  Tensor big = fill({n}, 2.f);
  Tensor small = fill({int64_t{1} << 18}, 3.f);  // 1 MiB, sent in pieces too, for afterwards
  const std::string cpu = task + "/device:CPU:0";
  const int64_t before = config::get_memory_info(cpu).current;
  worker.signal(SIGSTOP);
  DeviceScope scope(task);
  Error e = expect_error([&] { identity(big); });
  EXPECT_EQ(e.code(), absl::StatusCode::kDeadlineExceeded) << e.what();
  EXPECT_THAT(e.what(), HasSubstr("[Identity] task " + task + " at " + spec["worker"][0] +
                                  " did not answer within 2000 ms"));
  worker.signal(SIGCONT);
  std::vector<float> back;
  for (int i = 0; i < 50 && back.empty(); ++i) {  // the connection closed: gRPC reconnects
    try {
      back = identity(small).to_vector<float>();
    } catch (const Error& again) {
      ASSERT_EQ(again.code(), absl::StatusCode::kUnavailable) << again.what();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  EXPECT_EQ(back, std::vector<float>(size_t{1} << 18, 3.f));
  // Whatever of `big` reached the task was freed (Note [Transfers over several connections]).
  EXPECT_EQ(config::get_memory_info(cpu).current, before);
}

TEST_F(FailuresTest, UnreachableTaskIsUnavailableAtConnect) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);  // nothing listens there
  config::ConnectOptions options = quick();
  options.connect_timeout_ms = 300;
  Error e =
      expect_error([&] { config::experimental_connect_to_cluster(spec, "localhost", 0, options); });
  EXPECT_EQ(e.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(e.what(), HasSubstr("task /job:worker/replica:0/task:0 at " + spec["worker"][0] +
                                  " is unavailable: no answer within 300 ms"));
}

struct BadSpec {
  const char* name;
  distributed::ClusterSpec spec;
  const char* job;
  int task;
  const char* message;
};

TEST_F(FailuresTest, BadClusterSpecsAreInvalidArgument) {
  const BadSpec cases[] = {
      {"no job", {}, "localhost", 0, "invalid cluster spec: it has no job"},
      {"empty job", {{"worker", {}}}, "localhost", 0, "job 'worker' has no task"},
      {"bad job name", {{"1w", {"127.0.0.1:1"}}}, "localhost", 0, "job name '1w' is not"},
      {"empty address",
       {{"worker", {""}}},
       "localhost",
       0,
       "task 0 of job 'worker' has an empty address"},
      {"no port",
       {{"worker", {"127.0.0.1"}}},
       "localhost",
       0,
       "has address '127.0.0.1', not host:port"},
      {"duplicate",
       {{"worker", {"127.0.0.1:7", "127.0.0.1:7"}}},
       "localhost",
       0,
       "task 1 of job 'worker' repeats address '127.0.0.1:7'"},
      {"duplicate across jobs",
       {{"ps", {"127.0.0.1:7"}}, {"worker", {"127.0.0.1:7"}}},
       "localhost",
       0,
       "repeats address '127.0.0.1:7'"},
      {"task outside job",
       {{"worker", {"127.0.0.1:7"}}},
       "worker",
       1,
       "task index 1 is outside job 'worker', which has 1 tasks"},
      {"negative task", {{"worker", {"127.0.0.1:7"}}}, "worker", -1, "task index -1 is outside"},
      {"task of absent job",
       {{"worker", {"127.0.0.1:7"}}},
       "chief",
       2,
       "job 'chief' is not in the cluster spec"},
  };
  for (const BadSpec& c : cases) {
    SCOPED_TRACE(c.name);
    Error e = expect_error(
        [&] { config::experimental_connect_to_cluster(c.spec, c.job, c.task, quick()); });
    EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("[experimental_connect_to_cluster]"));
    EXPECT_THAT(e.what(), HasSubstr(c.message));
    Error s = expect_error([&] { distributed::Server(c.spec, c.job, c.task); });
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.what(), StartsWith("[Server] "));
    EXPECT_THAT(s.what(), HasSubstr(c.message));
  }
}

TEST_F(FailuresTest, BadConnectOptionsAreInvalidArgument) {
  config::ConnectOptions options;
  options.rpc_timeout_ms = 0;
  Error e = expect_error([&] {
    config::experimental_connect_to_cluster({{"worker", {"127.0.0.1:7"}}}, "localhost", 0, options);
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("timeouts must be positive"));
  options = config::ConnectOptions();
  options.rpc_timeout_ms = INT64_MAX;  // "for ever" would overflow every deadline
  e = expect_error([&] {
    config::experimental_connect_to_cluster({{"worker", {"127.0.0.1:7"}}}, "localhost", 0, options);
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("timeouts must be below 2^31 ms (24.8 days), got rpc_timeout_ms "
                                  "9223372036854775807 and connect_timeout_ms 30000"));
  options = config::ConnectOptions();
  options.max_message_bytes = 0;
  e = expect_error([&] {
    config::experimental_connect_to_cluster({{"worker", {"127.0.0.1:7"}}}, "localhost", 0, options);
  });
  EXPECT_THAT(e.what(), HasSubstr("max_message_bytes must be in [1, 2^31), got 0"));
  options = config::ConnectOptions();
  options.bulk_connections = 65;
  e = expect_error([&] {
    config::experimental_connect_to_cluster({{"worker", {"127.0.0.1:7"}}}, "localhost", 0, options);
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("bulk_connections must be in [0, 64], got 65"));
}

TEST_F(FailuresTest, TensorsOverTheClientLimitAreRefused) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  WorkerProcess worker;
  worker.start(spec, 0);
  config::ConnectOptions options = quick();
  options.max_message_bytes = 1000;
  config::experimental_connect_to_cluster(spec, "localhost", 0, options);
  DeviceScope scope("/job:worker/task:0");
  Error e = expect_error([] { zeros({1000}) + constant(std::vector<float>(1000, 1.f), {1000}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(e.what(), HasSubstr("[_EagerConst] a tensor of 4000 bytes exceeds the message "
                                  "limit of 1000 bytes for task /job:worker/replica:0/task:0"));
}

TEST_F(FailuresTest, MessagesOverTheServerLimitAreRefused) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  WorkerProcess worker;
  worker.start(spec, 0, {"--max_message_mb", "1"});
  config::experimental_connect_to_cluster(spec, "localhost", 0, quick());
  DeviceScope scope("/job:worker/task:0");
  Error e = expect_error([] { constant(std::vector<float>(1 << 19, 1.f), {1 << 19}); });  // 2 MiB
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(e.what(),
              HasSubstr("[_EagerConst] task /job:worker/replica:0/task:0 at " + spec["worker"][0]));
  Tensor big = zeros({1 << 19});  // made there, too big to come back
  Error fetch = expect_error([&] { big.to_vector<float>(); });
  EXPECT_EQ(fetch.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(fetch.what(), HasSubstr("more than the task's message limit of 1048576"));
}

TEST_F(FailuresTest, ServerOnABusyAddressIsUnavailable) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  WorkerProcess worker;
  worker.start(spec, 0);
  Error e = expect_error([&] { distributed::Server(spec, "worker", 0); });
  EXPECT_EQ(e.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(e.what(), HasSubstr("[Server] cannot listen on " + spec["worker"][0]));
}

// Requests no client of ours sends, straight to a task's service.
class WorkerServiceTest : public FailuresTest {
 protected:
  void SetUp() override {
    FailuresTest::SetUp();
    spec_ = testing::loopback_workers(1);
    server_ = std::make_unique<distributed::Server>(spec_, "worker", 0);
    stub_ = distributed::proto::Worker::NewStub(
        grpc::CreateChannel(spec_["worker"][0], grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    server_.reset();
    FailuresTest::TearDown();
  }
  grpc::Status run(const distributed::proto::RunOpRequest& request) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    distributed::proto::RunOpResponse response;
    return stub_->RunOp(&ctx, request, &response);
  }

  distributed::ClusterSpec spec_;
  std::unique_ptr<distributed::Server> server_;
  std::unique_ptr<distributed::proto::Worker::Stub> stub_;
};

TEST_F(WorkerServiceTest, RefusesBytesThatDisagreeWithTheShape) {
  distributed::proto::RunOpRequest request;
  request.set_op(static_cast<int>(OpId::kEagerConst));
  request.mutable_source()->add_dims(2);
  request.mutable_source()->add_dims(2);
  request.mutable_source()->set_data(std::string(12, '\0'));
  grpc::Status s = run(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("[_EagerConst] the source value declares shape "
                                           "(2, 2) of float32 (16 bytes) but carries 12 bytes"));
}

TEST_F(WorkerServiceTest, RefusesUploadsWhoseBytesDisagreeWithTheShape) {
  auto channel = grpc::CreateChannel(spec_["worker"][0], grpc::InsecureChannelCredentials());
  distributed::proto::UploadRequest header;
  header.set_handle(77);
  header.mutable_value()->add_dims(2);
  header.mutable_value()->add_dims(2);
  for (size_t carried : {12, 20}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    std::string bytes(carried, '\0');
    std::vector<std::string_view> pieces = {std::string_view(bytes).substr(0, 8),
                                            std::string_view(bytes).substr(8)};
    grpc::Status s = distributed::internal::upload_pieces(channel.get(), &ctx, header, pieces);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(),
                HasSubstr("[Upload] the value declares shape (2, 2) of float32 (16 bytes) but "
                          "carries " +
                          std::string(carried == 12 ? "12 bytes" : "more than that")));
  }
}

TEST_F(WorkerServiceTest, RefusesEnqueuedOpsWithoutAHandle) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  auto stream = stub_->Enqueue(&ctx);
  distributed::proto::EnqueueRequest request;
  request.set_seq(1);
  request.mutable_op()->set_op(static_cast<int>(OpId::kFill));
  stream->Write(request);
  stream->WritesDone();
  distributed::proto::EnqueueResponse response;
  EXPECT_FALSE(stream->Read(&response));
  grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("[Enqueue] an op needs a handle"));
}

TEST_F(WorkerServiceTest, RefusesMalformedRequests) {
  distributed::proto::RunOpRequest request;
  request.set_op(1000);
  EXPECT_THAT(run(request).error_message(), HasSubstr("[RunOp] unknown op 1000"));
  request.set_op(static_cast<int>(OpId::kIdentity));
  request.set_device(7);
  EXPECT_THAT(run(request).error_message(), HasSubstr("this task has no device with index 7"));
  request.set_device(0);
  request.add_inputs()->set_handle(12345);
  grpc::Status s = run(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("[Identity] tensor handle 12345 is not on this task"));
  request.mutable_inputs(0)->mutable_value()->set_dtype(99);
  EXPECT_THAT(run(request).error_message(), HasSubstr("[Identity] input 0 has unknown dtype 99"));
  request.mutable_inputs(0)->mutable_value()->set_dtype(0);
  request.mutable_inputs(0)->mutable_value()->add_dims(-1);
  EXPECT_EQ(run(request).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.clear_inputs();
  request.set_op(static_cast<int>(OpId::kFill));
  request.mutable_source()->set_data("x");
  EXPECT_THAT(run(request).error_message(), HasSubstr("[Fill] the source value"));
}

}  // namespace
}  // namespace mt
