#include "distributed/op_stream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace mt::distributed::internal {

// Note [Driving reconnection]
// gRPC's synchronous API makes progress (a connection attempt included) only while some
// call waits on it, or every 5 s from its backup poller. A stream opened while the channel
// is down would fail at once and leave the next attempt undriven, so that a task that came
// back is found seconds late. Opening a stream therefore waits for the channel first, at
// most kReconnectWaitMs (the longest reconnection backoff, task_client.cc).
constexpr int64_t kReconnectWaitMs = 1000;

// One Enqueue call and the thread that reads its answers.
struct OpStream::Call {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<proto::EnqueueRequest, proto::EnqueueResponse>> stream;
  std::thread reader;  // started by the first write
  bool done = false;   // guarded by OpStream::mu_: the reader has finished
};

OpStream::OpStream(std::shared_ptr<grpc::Channel> channel, Describe describe, int64_t timeout_ms)
    : channel_(std::move(channel)),
      stub_(proto::Worker::NewStub(channel_)),
      describe_(std::move(describe)),
      timeout_ms_(timeout_ms) {}

OpStream::~OpStream() {
  std::lock_guard<std::mutex> write(write_mu_);
  if (call_ == nullptr) return;
  proto::EnqueueRequest last;  // the frees still pending, on a stream still open only
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!call_->done && !deletes_.empty()) {
      for (uint64_t handle : deletes_) last.add_deletes(handle);
      last.set_seq(++sent_);
    }
  }
  if (last.seq() != 0) (void)call_->stream->Write(last);
  call_->stream->WritesDone();
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms_), [&] { return call_->done; })) {
    call_->context.TryCancel();
  }
  lock.unlock();
  call_->reader.join();
}

void OpStream::open() {
  if (call_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!call_->done) return;
    }
    call_->reader.join();  // a stream that ended (an op failed, or the task went away)
  }
  // A call made while the channel is down fails at once, and with no call in flight
  // nothing drives gRPC's next connection attempt (Note [Driving reconnection]).
  if (channel_->GetState(/*try_to_connect=*/true) != GRPC_CHANNEL_READY) {
    int64_t ms = std::min<int64_t>(timeout_ms_, kReconnectWaitMs);
    channel_->WaitForConnected(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
  }
  call_ = std::make_unique<Call>();
  // The stream starts with its first message, so that opening it never waits.
  call_->context.set_initial_metadata_corked(true);
  call_->stream = stub_->Enqueue(&call_->context);
}

absl::Status OpStream::enqueue(proto::RunOpRequest* op, const char* name,
                               std::vector<uint64_t> deletes) {
  std::lock_guard<std::mutex> write(write_mu_);
  proto::EnqueueRequest message;
  {
    std::lock_guard<std::mutex> lock(mu_);
    deletes_.insert(deletes_.end(), deletes.begin(), deletes.end());
    if (!error_.ok()) return std::exchange(error_, absl::OkStatus());
    if (op != nullptr) message.mutable_op()->Swap(op);
  }
  return send(message, name);
}

// Sends `message` with the pending frees; holds write_mu_.
absl::Status OpStream::send(proto::EnqueueRequest& message, const char* name) {
  open();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t handle : deletes_) message.add_deletes(handle);
    deletes_.clear();
    message.set_seq(++sent_);
    if (message.has_op()) last_op_ = sent_;
    pending_.emplace_back(sent_, name);
  }
  bool written = call_->stream->Write(message);
  if (!call_->reader.joinable()) call_->reader = std::thread([this, c = call_.get()] { read(c); });
  if (written) return absl::OkStatus();
  // The stream has ended: its reader says why, naming the first op that did not run.
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return call_->done; });  // Write failing means the call is over
  return std::exchange(error_, absl::OkStatus());
}

void OpStream::release(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  deletes_.push_back(handle);
}

absl::Status OpStream::sync(const char* name) { return wait(name, /*frees_too=*/false); }

void OpStream::drain(const char* name) { (void)wait(name, /*frees_too=*/true); }

absl::Status OpStream::wait(const char* name, bool frees_too) {
  std::lock_guard<std::mutex> write(write_mu_);
  bool flush;
  {
    std::lock_guard<std::mutex> lock(mu_);
    flush = !deletes_.empty() && error_.ok();
  }
  if (flush) {
    proto::EnqueueRequest message;
    (void)send(message, "Delete");  // a failure is kept in error_
  }
  std::unique_lock<std::mutex> lock(mu_);
  MT_RETURN_IF_ERROR(await(lock, frees_too ? sent_ : last_op_, name));
  return frees_too ? error_ : std::exchange(error_, absl::OkStatus());
}

absl::Status OpStream::await(std::unique_lock<std::mutex>& lock, uint64_t seq, const char* name) {
  if (cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms_), [&] { return acked_ >= seq; })) {
    return absl::OkStatus();
  }
  const char* late = pending_.empty() ? name : pending_.front().second;
  call_->context.TryCancel();  // the ops still queued are dropped with the stream
  cv_.wait(lock, [&] { return call_->done; });
  error_ = absl::OkStatus();
  return describe_(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, ""), late);
}

absl::Status OpStream::fetch(uint64_t handle, void* dst, size_t bytes) {
  std::lock_guard<std::mutex> write(write_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return std::exchange(error_, absl::OkStatus());
  }
  proto::EnqueueRequest message;
  message.set_fetch(handle);
  MT_RETURN_IF_ERROR(send(message, "Fetch"));
  std::unique_lock<std::mutex> lock(mu_);
  MT_RETURN_IF_ERROR(await(lock, message.seq(), "Fetch"));
  if (!error_.ok()) return std::exchange(error_, absl::OkStatus());
  auto it = fetched_.find(message.seq());
  std::string data = it == fetched_.end() ? std::string() : std::move(it->second);
  if (it != fetched_.end()) fetched_.erase(it);
  if (data.size() != bytes) {
    return absl::DataLossError(absl::StrCat("[Fetch] the task sent ", data.size(),
                                            " bytes for a tensor of ", bytes, " bytes"));
  }
  if (bytes > 0) std::memcpy(dst, data.data(), bytes);
  return absl::OkStatus();
}

void OpStream::read(Call* call) {
  proto::EnqueueResponse response;
  while (call->stream->Read(&response)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (response.has_value()) {
      fetched_[response.seq()] = std::move(*response.mutable_value()->mutable_data());
    }
    acked_ = response.seq();
    while (!pending_.empty() && pending_.front().first <= acked_) pending_.pop_front();
    cv_.notify_all();
  }
  grpc::Status status = call->stream->Finish();
  std::lock_guard<std::mutex> lock(mu_);
  if (!pending_.empty()) {  // these ops did not run: the first one's error is theirs
    if (error_.ok()) {
      error_ = status.ok() ? absl::UnavailableError(absl::StrCat("[", pending_.front().second,
                                                                 "] the task ended the op stream"))
                           : describe_(status, pending_.front().second);
    }
    acked_ = pending_.back().first;
    pending_.clear();
  }
  call->done = true;
  cv_.notify_all();
}

}  // namespace mt::distributed::internal
