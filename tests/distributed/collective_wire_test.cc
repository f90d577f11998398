// The collectives' calls sent straight to a task (worker_service_collective.cc): each
// malformed one refused with its code and message, and what good ones leave in the task's
// mailbox.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>

#include "distributed/bulk_service.h"
#include "distributed/collective_mailbox.h"
#include "distributed/distributed.h"
#include "distributed/ring_all_reduce.h"
#include "distributed/worker.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/distributed/worker_process.h"

namespace mt::distributed::internal {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class CollectiveWireTest : public ::testing::Test {
 protected:
  void start(const std::string& token = "") {
    spec_ = testing::loopback_workers(1);
    ServerOptions options;
    options.auth_token = token;
    server_ = std::make_unique<Server>(spec_, "worker", 0, options);
    channel_ = grpc::CreateChannel(spec_["worker"][0], grpc::InsecureChannelCredentials());
    stub_ = proto::Worker::NewStub(channel_);
  }
  static std::unique_ptr<grpc::ClientContext> context() {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return ctx;
  }
  grpc::Status deliver(uint64_t declared, std::string_view bytes) {
    proto::DeliverRequest header;
    header.mutable_key()->set_group(7);
    header.mutable_key()->set_instance(1);
    header.mutable_key()->set_source(3);
    header.set_what("2 of 2 float32");
    header.set_bytes(declared);
    return deliver_bytes(channel_.get(), context().get(), header, bytes);
  }

  ClusterSpec spec_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Worker::Stub> stub_;
};

TEST_F(CollectiveWireTest, KeepsADeliveredChunkForItsCollective) {
  start();
  ASSERT_TRUE(deliver(8, "abcdefgh").ok());
  auto message = local_mailbox(spec_["worker"][0])
                     ->take({7, 1, 0, 0, 3}, Clock::now() + std::chrono::seconds(1),
                            std::chrono::seconds(1), [] { return absl::OkStatus(); });
  ASSERT_TRUE(message.ok()) << message.status();
  EXPECT_EQ(message->what, "2 of 2 float32");
  std::string bytes;
  for (const grpc::Slice& s : message->bytes) bytes.append(s.begin(), s.end());
  EXPECT_EQ(bytes, "abcdefgh");
}

TEST_F(CollectiveWireTest, RefusesChunksThatAreTooLargeOrDisagreeWithTheirHeader) {
  start();
  grpc::Status s = deliver(kRingChunkBytes + 1, "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("[Deliver] a message of 4194305 bytes; at most 4194304"));
  s = deliver(8, "abcd");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("[Deliver] the message declares 8 bytes but carries 4"));
  s = deliver(2, "abcd");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("declares 2 bytes but carries more"));
}

TEST_F(CollectiveWireTest, AbortsAGroupAndSaysSoToHeartbeats) {
  start();
  proto::AbortCollectivesRequest abort;
  abort.set_group(7);
  abort.set_code(0);
  proto::AbortCollectivesResponse done;
  grpc::Status s = stub_->AbortCollectives(context().get(), abort, &done);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("[AbortCollectives] 0 is not an error code"));
  abort.set_code(static_cast<int>(absl::StatusCode::kUnavailable));
  abort.set_message("worker 2 is gone");
  ASSERT_TRUE(stub_->AbortCollectives(context().get(), abort, &done).ok());
  proto::HeartbeatRequest ask;
  ask.set_group(7);
  proto::HeartbeatResponse answer;
  ASSERT_TRUE(stub_->Heartbeat(context().get(), ask, &answer).ok());
  EXPECT_EQ(answer.aborted_code(), static_cast<int>(absl::StatusCode::kUnavailable));
  EXPECT_EQ(answer.aborted_message(), "worker 2 is gone");
  ask.set_group(8);  // another group: not failed
  ASSERT_TRUE(stub_->Heartbeat(context().get(), ask, &answer).ok());
  EXPECT_EQ(answer.aborted_code(), 0);
}

TEST_F(CollectiveWireTest, RefusesCallsWithoutTheToken) {
  start("s3cret");
  grpc::Status s = deliver(4, "abcd");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("[Deliver] no auth token was sent"));
  proto::HeartbeatResponse answer;
  s = stub_->Heartbeat(context().get(), proto::HeartbeatRequest(), &answer);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  proto::AbortCollectivesResponse done;
  s = stub_->AbortCollectives(context().get(), proto::AbortCollectivesRequest(), &done);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

}  // namespace
}  // namespace mt::distributed::internal
