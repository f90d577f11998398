#pragma once
// TaskClient: the client's connection to one task (internal). Every call has a deadline;
// transport failures come back as statuses that name the task and its address:
//   Unavailable "[MatMul] task /job:worker/replica:0/task:1 at 127.0.0.1:2223 is
//   unavailable: <gRPC's reason>".
// A failed call leaves the channel usable: gRPC reconnects when the task is back.
//
// Note [Asynchronous remote ops]
// As TensorFlow's eager client does, ops on a task are enqueued: the client picks the
// result's handle, infers its shape and dtype locally, sends the op on one Enqueue stream
// per task and returns without waiting. The task runs the stream's ops in order and
// answers each. An op's error (or the task going away) is reported, with that op's name,
// by the next enqueue or read (fetch) of any of the task's tensors (memory_info waits
// for every op and free but leaves the error to those); the ops sent after the failing
// one did not run, and their
// tensors are NotFound. Frees ride on the next message; a read waits for the ops before
// it, not for the frees. Tensors over kInlineBytes are sent and read in pieces on the
// Bulk service (distributed/bulk_service.h), each call synchronous with a deadline; large
// ones in parts, over several connections at once.
//
// Thread safety: every method may be called from any thread.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/allocator.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "distributed/auth.h"
#include "distributed/distributed.h"
#include "distributed/op_stream.h"
#include "distributed/worker.grpc.pb.h"

namespace mt::distributed::internal {

// Returns a channel to `address` with `options`' limits, credentials and reconnection
// settings. `own_connection`: a connection of its own rather than one shared with other
// channels to the same address (Note [Transfers over several connections] in
// bulk_service.h).
std::shared_ptr<grpc::Channel> make_channel(const std::string& address,
                                            const config::ConnectOptions& options,
                                            bool own_connection);

class TaskClient {
 public:
  TaskClient(std::string job, int task, std::string address, const config::ConnectOptions& options);
  ~TaskClient();  // closes the op stream, after sending the frees still pending

  const std::string& job() const { return job_; }
  int task() const { return task_; }
  // Returns "/job:<job>/replica:0/task:<task>".
  const std::string& name() const { return name_; }
  int64_t max_message_bytes() const { return options_.max_message_bytes; }

  // Asks for the task's devices, waiting up to the connect timeout for it to come up.
  absl::StatusOr<proto::GetDevicesResponse> get_devices();

  // Returns a handle for a new tensor on the task, unused by this client.
  uint64_t new_handle() { return next_handle_.fetch_add(1); }

  // Enqueues `request` (its handle set, see the Note); `deletes` are freed after it.
  absl::Status enqueue(proto::RunOpRequest* request, const char* op,
                       std::vector<uint64_t> deletes = {});

  // Sends the `bytes` bytes at `data` as tensor `handle` of `dtype` and `shape` on device
  // `device` of the task, in pieces; returns once the task has it.
  absl::Status upload(uint64_t handle, int device, DType dtype, const Shape& shape,
                      const void* data, size_t bytes, const char* op);

  // Waits for the ops enqueued so far, then copies the `bytes` bytes of tensor `handle`
  // into `dst`. An enqueued op's error comes back here.
  absl::Status fetch(uint64_t handle, void* dst, size_t bytes);

  // Frees tensor `handle` on the task after the ops enqueued before; best effort (a task
  // that is gone freed it already).
  void release(uint64_t handle);

  absl::StatusOr<MemoryStats> memory_info(int device);

  // Returns ResourceExhausted when `bytes` exceeds the message limit; `op` names the caller.
  absl::Status check_size(size_t bytes, const char* op) const;

 private:
  std::unique_ptr<grpc::ClientContext> context(int64_t timeout_ms, bool wait_for_ready) const;
  int64_t timeout_ms() const { return options_.rpc_timeout_ms; }
  // Returns `bytes` bytes at `src` as pieces of at most kChunkBytes.
  static std::vector<std::string_view> pieces(const char* src, size_t bytes);
  grpc::Status upload_in_parts(proto::UploadRequest header, const char* src, size_t bytes,
                               int parts);
  absl::Status to_status(const grpc::Status& status, const char* op, int64_t timeout_ms) const;

  std::string job_;
  int task_;
  std::string address_;
  std::string name_;
  config::ConnectOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  // channel_, then the connections of its own that large tensors are split over (Note
  // [Transfers over several connections] in bulk_service.h).
  std::vector<std::shared_ptr<grpc::Channel>> bulk_channels_;
  CallMetadata metadata_;  // the token and session id every call carries
  std::unique_ptr<proto::Worker::Stub> stub_;
  std::atomic<uint64_t> next_handle_;
  std::unique_ptr<OpStream> ops_;  // declared last: closed before the stub goes
};

}  // namespace mt::distributed::internal
