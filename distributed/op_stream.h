#pragma once
// OpStream: the ordered, asynchronous stream of ops from this client to one task (internal;
// Note [Asynchronous remote ops] in distributed/task_client.h).
//
//   OpStream ops(channel, describe, timeout_ms);
//   MT_RETURN_IF_ERROR(ops.enqueue(&request, "AddV2", {}));  // returns once sent
//   MT_RETURN_IF_ERROR(ops.sync());  // waits for it; its error, if any, comes here
//
// Thread safety: every method may be called from any thread.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "distributed/auth.h"
#include "distributed/worker.grpc.pb.h"

namespace mt::distributed::internal {

// Waits, at most 1 s and `timeout_ms`, for `channel` to connect when it is not connected
// (Note [Driving reconnection] in op_stream.cc); returns at once when it is.
void wait_for_connection(grpc::Channel& channel, int64_t timeout_ms);

class OpStream {
 public:
  // Turns a gRPC status of the stream into one that names `op`, the task and its address.
  using Describe = std::function<absl::Status(const grpc::Status&, const char* op)>;

  // Streams to the task at the end of `channel`, each stream carrying `metadata`.
  // `timeout_ms` bounds every wait for it. Starts the watchdog thread (Note [Deadlines on
  // the op stream] in op_stream.cc).
  OpStream(std::shared_ptr<grpc::Channel> channel, Describe describe, int64_t timeout_ms,
           CallMetadata metadata = {});
  ~OpStream();  // closes the stream, waiting at most the timeout for the task

  // Sends `op` (its handle set; null: only frees) and returns without waiting for the task.
  // `deletes` are freed after it. An error of an earlier op not reported yet comes back
  // instead, and `op` is not sent; one the stream reports while sending comes back too.
  // Sending waits only while the stream's flow-control window is full; DeadlineExceeded,
  // naming the first op not answered, when that lasts longer than the timeout (the stream
  // is then closed, as by sync).
  absl::Status enqueue(proto::RunOpRequest* op, const char* name, std::vector<uint64_t> deletes);

  // Copies tensor `handle` (`bytes` of it, a small tensor) into `dst` once every op sent
  // before has run: one round trip on the stream. Errors as for sync.
  absl::Status fetch(uint64_t handle, void* dst, size_t bytes);

  // Frees `handle` on the task after every op sent before; sent with the next message.
  void release(uint64_t handle);

  // Waits for every op sent so far (frees are sent, not waited for), then returns the
  // first error among them not reported yet (and forgets it). DeadlineExceeded, naming
  // the first op not answered, when the task does not answer within the timeout (the
  // stream is then closed: ops still queued may not run).
  absl::Status sync();

  // Waits for every op and free sent so far; keeps any error for the next enqueue or sync.
  void drain();

 private:
  struct Call;

  absl::Status wait(bool frees_too);
  // Waits (holding write_mu_) until message `seq` is answered; DeadlineExceeded after the
  // timeout, when the stream is closed.
  absl::Status await(std::unique_lock<std::mutex>& lock, uint64_t seq);
  void open();   // holds write_mu_
  void close();  // holds write_mu_: ends the stream, if one is open
  absl::Status send(proto::EnqueueRequest& message, const char* name);
  // Runs `io`, a blocking call on `call`'s stream, under the watchdog; holds write_mu_.
  template <typename Io>
  bool watched(Call* call, Io io);
  void read(Call* call);
  void watch();  // the watchdog thread

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Worker::Stub> stub_;
  Describe describe_;
  int64_t timeout_ms_;
  CallMetadata metadata_;

  std::mutex write_mu_;         // one writer at a time; taken before mu_
  std::unique_ptr<Call> call_;  // guarded by write_mu_; null until the first op

  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t sent_ = 0;     // guarded by mu_: messages sent on the current stream
  uint64_t acked_ = 0;    // guarded by mu_: of them, those the task has answered
  uint64_t last_op_ = 0;  // guarded by mu_: the last of them that carried an op
  std::deque<std::pair<uint64_t, const char*>> pending_;  // guarded by mu_: unanswered
  std::vector<uint64_t> deletes_;                         // guarded by mu_: to send
  std::map<uint64_t, std::string> fetched_;               // guarded by mu_: bytes read, by message
  absl::Status error_;                                    // guarded by mu_: not reported yet

  // The watchdog (Note [Deadlines on the op stream] in op_stream.cc).
  std::condition_variable watch_cv_;
  Call* watched_ = nullptr;  // guarded by mu_: whose blocking call is in flight, if any
  uint64_t watch_seq_ = 0;   // guarded by mu_: blocking calls started so far
  std::chrono::steady_clock::time_point watch_deadline_;  // guarded by mu_: the latest one's
  bool watchdog_idle_ = false;  // guarded by mu_: it sleeps until a blocking call starts
  bool closing_ = false;        // guarded by mu_: it is to end
  std::thread watchdog_;        // declared last: started once the rest is built
};

}  // namespace mt::distributed::internal
