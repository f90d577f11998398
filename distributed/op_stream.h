#pragma once
// OpStream: the ordered, asynchronous stream of ops from this client to one task (internal;
// Note [Asynchronous remote ops] in distributed/task_client.h).
//
//   OpStream ops(channel, describe, timeout_ms);
//   MT_RETURN_IF_ERROR(ops.enqueue(&request, "AddV2", {}));  // returns once sent
//   MT_RETURN_IF_ERROR(ops.sync("Fetch"));  // waits for it; its error, if any, comes here
//
// Thread safety: every method may be called from any thread.

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "distributed/worker.grpc.pb.h"

namespace mt::distributed::internal {

class OpStream {
 public:
  // Turns a gRPC status of the stream into one that names `op`, the task and its address.
  using Describe = std::function<absl::Status(const grpc::Status&, const char* op)>;

  // Streams to the task at the end of `channel`. `timeout_ms` bounds every wait for it.
  OpStream(std::shared_ptr<grpc::Channel> channel, Describe describe, int64_t timeout_ms);
  ~OpStream();  // closes the stream, waiting at most the timeout for the task

  // Sends `op` (its handle set; null: only frees) and returns without waiting for the task.
  // `deletes` are freed after it. An error of an earlier op not reported yet comes back
  // instead, and `op` is not sent; one the stream reports while sending comes back too.
  absl::Status enqueue(proto::RunOpRequest* op, const char* name, std::vector<uint64_t> deletes);

  // Frees `handle` on the task after every op sent before; sent with the next message.
  void release(uint64_t handle);

  // Waits for every op sent so far, then returns the first error among them not reported
  // yet (and forgets it). DeadlineExceeded, naming `name`, when the task does not answer
  // within the timeout (the stream is then closed: ops still queued did not run).
  absl::Status sync(const char* name);

  // As sync, but keeps any error for the next enqueue or sync.
  void drain(const char* name);

 private:
  struct Call;

  absl::Status wait(const char* name, bool take_error);
  void open();  // holds write_mu_
  absl::Status send(proto::EnqueueRequest& message, const char* name);
  void read(Call* call);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Worker::Stub> stub_;
  Describe describe_;
  int64_t timeout_ms_;

  std::mutex write_mu_;         // one writer at a time; taken before mu_
  std::unique_ptr<Call> call_;  // guarded by write_mu_; null until the first op

  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t sent_ = 0;   // guarded by mu_: messages sent on the current stream
  uint64_t acked_ = 0;  // guarded by mu_: of them, those the task has answered
  std::deque<std::pair<uint64_t, const char*>> pending_;  // guarded by mu_: unanswered
  std::vector<uint64_t> deletes_;                         // guarded by mu_: to send
  absl::Status error_;                                    // guarded by mu_: not reported yet
};

}  // namespace mt::distributed::internal
