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
// back is found seconds late. Opening a stream, and each upload or read in pieces, therefore
// waits for the channel first, at most kReconnectWaitMs (the longest reconnection backoff,
// task_client.cc).
constexpr int64_t kReconnectWaitMs = 1000;

// Note [Deadlines on the op stream]
// The stream lives as long as the connection, so its ClientContext has no deadline; each
// wait on it has one instead. A wait for answers is a timed wait on cv_ (await). A blocking
// call on the stream (Write, WritesDone) returns at once unless the task stopped reading
// and the flow-control window filled; as gRPC's synchronous API has no timed form of
// them, a watchdog thread cancels the call (TryCancel) when one has not returned by its
// deadline, and marks it timed out, so that the reader reports DeadlineExceeded rather
// than Cancelled. The watchdog sleeps until the deadline of the latest blocking call, and
// without a deadline while none started since it last looked: a call wakes it only when
// it sleeps so, at most once per timeout. Read needs no watchdog: the reader thread waits
// in it by design, and an await or a cancel ends it. Finish follows a failed Read, when
// the call is over, and returns at once. The next op after a cancel opens a new stream.

void wait_for_connection(grpc::Channel& channel, int64_t timeout_ms) {
  // A call made while the channel is down fails at once, and with no call in flight
  // nothing drives gRPC's next connection attempt (Note [Driving reconnection]).
  if (channel.GetState(/*try_to_connect=*/true) == GRPC_CHANNEL_READY) return;
  int64_t ms = std::min<int64_t>(timeout_ms, kReconnectWaitMs);
  channel.WaitForConnected(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
}

// One Enqueue call and the thread that reads its answers.
struct OpStream::Call {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<proto::EnqueueRequest, proto::EnqueueResponse>> stream;
  std::thread reader;      // started by the first write
  bool done = false;       // guarded by OpStream::mu_: the reader has finished
  bool timed_out = false;  // guarded by OpStream::mu_: cancelled for a deadline
};

OpStream::OpStream(std::shared_ptr<grpc::Channel> channel, Describe describe, int64_t timeout_ms,
                   CallMetadata metadata)
    : channel_(std::move(channel)),
      stub_(proto::Worker::NewStub(channel_)),
      describe_(std::move(describe)),
      timeout_ms_(timeout_ms),
      metadata_(std::move(metadata)),
      watchdog_([this] { watch(); }) {}

OpStream::~OpStream() {
  {
    std::lock_guard<std::mutex> write(write_mu_);
    close();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  watch_cv_.notify_all();
  watchdog_.join();
}

void OpStream::close() {
  if (call_ == nullptr) return;
  proto::EnqueueRequest last;  // the frees still pending, on a stream still open only
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!call_->done && !deletes_.empty()) {
      for (uint64_t handle : deletes_) last.add_deletes(handle);
      last.set_seq(++sent_);
    }
  }
  Call* call = call_.get();
  if (last.seq() != 0) (void)watched(call, [&] { return call->stream->Write(last); });
  (void)watched(call, [&] { return call->stream->WritesDone(); });
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms_), [&] { return call->done; })) {
    call->context.TryCancel();
  }
  lock.unlock();
  if (call->reader.joinable()) call->reader.join();
}

void OpStream::open() {
  if (call_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!call_->done) return;
    }
    call_->reader.join();  // a stream that ended (an op failed, or the task went away)
  }
  wait_for_connection(*channel_, timeout_ms_);
  call_ = std::make_unique<Call>();
  // The stream starts with its first message, so that opening it never waits.
  call_->context.set_initial_metadata_corked(true);
  for (const auto& [key, value] : metadata_) call_->context.AddMetadata(key, value);
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
  Call* call = call_.get();
  bool written = watched(call, [&] { return call->stream->Write(message); });
  if (!call->reader.joinable()) call->reader = std::thread([this, call] { read(call); });
  if (written) return absl::OkStatus();
  // The stream has ended (or the watchdog ended it): its reader says why, naming the first
  // op that did not run.
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return call->done; });  // Write failing means the call is over
  return std::exchange(error_, absl::OkStatus());
}

template <typename Io>
bool OpStream::watched(Call* call, Io io) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    watched_ = call;
    ++watch_seq_;
    watch_deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
    if (watchdog_idle_) watch_cv_.notify_one();
  }
  bool ok = io();
  std::lock_guard<std::mutex> lock(mu_);
  watched_ = nullptr;
  return ok;
}

void OpStream::watch() {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t seen = 0;  // the latest blocking call this thread looked at
  while (!closing_) {
    if (watch_seq_ == seen) {  // none started since
      watchdog_idle_ = true;
      watch_cv_.wait(lock, [&] { return closing_ || watch_seq_ != seen; });
      watchdog_idle_ = false;
      continue;
    }
    seen = watch_seq_;
    std::chrono::steady_clock::time_point deadline = watch_deadline_;
    if (watch_cv_.wait_until(lock, deadline, [&] { return closing_; })) break;
    if (watched_ != nullptr && watch_seq_ == seen) {  // still in flight: end its stream
      watched_->timed_out = true;
      watched_->context.TryCancel();
    }
  }
}

void OpStream::release(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  deletes_.push_back(handle);
}

absl::Status OpStream::sync() { return wait(/*frees_too=*/false); }

void OpStream::drain() { (void)wait(/*frees_too=*/true); }

absl::Status OpStream::wait(bool frees_too) {
  std::lock_guard<std::mutex> write(write_mu_);
  bool flush;
  {
    std::lock_guard<std::mutex> lock(mu_);
    flush = !deletes_.empty() && error_.ok();
  }
  if (flush) {
    proto::EnqueueRequest message;
    absl::Status sent = send(message, "Delete");
    if (!sent.ok()) {  // kept in error_: returned below, or left for the next call by drain
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::move(sent);
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  MT_RETURN_IF_ERROR(await(lock, frees_too ? sent_ : last_op_));
  return frees_too ? error_ : std::exchange(error_, absl::OkStatus());
}

absl::Status OpStream::await(std::unique_lock<std::mutex>& lock, uint64_t seq) {
  if (cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms_), [&] { return acked_ >= seq; })) {
    return absl::OkStatus();
  }
  // The reader names the first op not answered; the ops still queued go with the stream.
  call_->timed_out = true;
  call_->context.TryCancel();
  cv_.wait(lock, [&] { return call_->done; });
  return std::exchange(error_, absl::OkStatus());
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
  MT_RETURN_IF_ERROR(await(lock, message.seq()));
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
  if (call->timed_out && status.error_code() == grpc::StatusCode::CANCELLED) {
    status = grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "");  // our cancel, not the task's
  }
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
