#pragma once
// TaskClient: the client's connection to one task (internal). Every call has a deadline;
// transport failures come back as statuses that name the task and its address:
//   Unavailable "[MatMul] task /job:worker/replica:0/task:1 at 127.0.0.1:2223 is
//   unavailable: <gRPC's reason>".
// A failed call leaves the channel usable: gRPC reconnects when the task is back.
//
// Thread safety: every method may be called from any thread.

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "allocator/allocator.h"
#include "distributed/distributed.h"
#include "distributed/worker.grpc.pb.h"

namespace mt::distributed::internal {

class TaskClient {
 public:
  TaskClient(std::string job, int task, std::string address, const config::ConnectOptions& options);

  const std::string& job() const { return job_; }
  int task() const { return task_; }
  // Returns "/job:<job>/replica:0/task:<task>".
  const std::string& name() const { return name_; }
  int64_t max_message_bytes() const { return options_.max_message_bytes; }

  // Asks for the task's devices, waiting up to the connect timeout for it to come up.
  absl::StatusOr<proto::GetDevicesResponse> get_devices();

  absl::StatusOr<proto::RunOpResponse> run_op(const proto::RunOpRequest& request, const char* op);

  // Copies the `bytes` bytes of tensor `handle` into `dst`.
  absl::Status fetch(uint64_t handle, void* dst, size_t bytes);

  // Frees tensor `handle` on the task; best effort (a task that is gone freed it already).
  void release(uint64_t handle);

  absl::StatusOr<MemoryStats> memory_info(int device);

  // Returns ResourceExhausted when `bytes` exceeds the message limit; `op` names the caller.
  absl::Status check_size(size_t bytes, const char* op) const;

 private:
  std::unique_ptr<grpc::ClientContext> context(int64_t timeout_ms, bool wait_for_ready) const;
  absl::Status to_status(const grpc::Status& status, const char* op, int64_t timeout_ms) const;

  std::string job_;
  int task_;
  std::string address_;
  std::string name_;
  config::ConnectOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Worker::Stub> stub_;
};

}  // namespace mt::distributed::internal
