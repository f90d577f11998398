#include "distributed/collective_group.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "distributed/bulk_service.h"
#include "distributed/cluster_spec.h"
#include "distributed/ring_all_reduce.h"
#include "distributed/task_client.h"

namespace mt::distributed::internal {
namespace {

using Clock = std::chrono::steady_clock;
using Peer = CollectiveGroup::Peer;

constexpr const char* kStrategy = "[MultiWorkerMirroredStrategy] ";
constexpr int64_t kMaxTimeoutMs = int64_t{1} << 31;

std::unique_ptr<grpc::ClientContext> call_context(const CallMetadata& metadata,
                                                  Clock::time_point deadline,
                                                  bool wait_for_ready = false) {
  auto context = std::make_unique<grpc::ClientContext>();
  // gRPC takes system_clock deadlines; the collective keeps steady ones.
  context->set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::duration_cast<std::chrono::system_clock::duration>(deadline - Clock::now()));
  context->set_wait_for_ready(wait_for_ready);
  for (const auto& [key, value] : metadata) context->AddMetadata(key, value);
  return context;
}

// Turns a failed call to `peer` into the collective's error (Note [No collective hangs]).
absl::Status peer_error(const Peer& peer, const grpc::Status& status, const std::string& doing,
                        int64_t timeout_ms) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(
          absl::StrCat(kStrategy, peer.name, " is unavailable: ", status.error_message()));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
      return absl::UnavailableError(absl::StrCat(kStrategy, peer.name, " did not ", doing,
                                                 " within ", timeout_ms,
                                                 " ms (the collective timeout)"));
    default:
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          absl::StrCat(kStrategy, peer.name, ": ", status.error_message()));
  }
}

// Returns the heartbeat's tick for a collective timeout of `timeout_ms`.
int64_t heartbeat_tick_ms(int64_t timeout_ms) {
  return std::clamp<int64_t>(timeout_ms / 5, 50, 1000);
}

// Asks `peer` whether it is there and whether its group `group` failed: OK when it
// answers that it has not or does not answer by `deadline` (slow, not gone); Unavailable
// when it is gone; its group's failure when it failed.
absl::Status ask(const Peer& peer, uint64_t group, const CallMetadata& metadata,
                 Clock::time_point deadline, int64_t timeout_ms) {
  proto::HeartbeatRequest request;
  request.set_group(group);
  proto::HeartbeatResponse response;
  auto context = call_context(metadata, deadline);
  grpc::Status status = peer.stub->Heartbeat(context.get(), request, &response);
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) return absl::OkStatus();
  if (!status.ok()) return peer_error(peer, status, "answer", timeout_ms);
  if (response.aborted_code() != 0) {
    return absl::Status(static_cast<absl::StatusCode>(response.aborted_code()),
                        response.aborted_message());
  }
  return absl::OkStatus();
}

// The ring's links of one collective: Deliver to the next worker, the mailbox for the
// previous one, with a heartbeat to it while waiting.
class PeerLinks final : public RingLinks {
 public:
  PeerLinks(uint64_t group, uint64_t instance, int rank, const std::vector<Peer>& peers,
            CollectiveMailbox& mailbox, const CallMetadata& metadata, Clock::time_point deadline,
            int64_t timeout_ms)
      : group_(group),
        instance_(instance),
        rank_(rank),
        next_(peers[(rank + 1) % peers.size()]),
        previous_(peers[(rank + peers.size() - 1) % peers.size()]),
        previous_rank_(static_cast<int>((rank + peers.size() - 1) % peers.size())),
        mailbox_(mailbox),
        metadata_(metadata),
        deadline_(deadline),
        timeout_ms_(timeout_ms) {}

  absl::Status send(uint32_t step, uint32_t chunk, const std::string& what, const char* data,
                    size_t bytes) override {
    proto::DeliverRequest header;
    proto::CollectiveKey* key = header.mutable_key();
    key->set_group(group_);
    key->set_instance(instance_);
    key->set_step(step);
    key->set_chunk(chunk);
    key->set_source(rank_);
    header.set_what(what);
    header.set_bytes(bytes);
    auto context = call_context(metadata_, deadline_);
    grpc::Status status =
        deliver_bytes(next_.channel.get(), context.get(), header, std::string_view(data, bytes));
    if (status.ok()) return absl::OkStatus();
    return peer_error(next_, status, absl::StrCat("take step ", step, " of the all-reduce"),
                      timeout_ms_);
  }

  absl::StatusOr<CollectiveMailbox::Message> receive(uint32_t step, uint32_t chunk) override {
    const auto tick = std::chrono::milliseconds(heartbeat_tick_ms(timeout_ms_));
    absl::StatusOr<CollectiveMailbox::Message> message =
        mailbox_.take({group_, instance_, step, chunk, previous_rank_}, deadline_, tick,
                      [&] { return heartbeat(tick); });
    if (message.status().code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::UnavailableError(
          absl::StrCat(kStrategy, previous_.name, " sent nothing for step ", step,
                       " of the all-reduce within ", timeout_ms_, " ms (the collective timeout)"));
    }
    return message;
  }

  std::string previous_name() const override { return previous_.name; }

 private:
  // Asks the previous worker whether it is there, and whether its group failed.
  absl::Status heartbeat(Clock::duration tick) {
    return ask(previous_, group_, metadata_, std::min(deadline_, Clock::now() + tick), timeout_ms_);
  }

  const uint64_t group_, instance_;
  const int rank_;
  const Peer& next_;
  const Peer& previous_;
  const int previous_rank_;
  CollectiveMailbox& mailbox_;
  const CallMetadata& metadata_;
  const Clock::time_point deadline_;
  const int64_t timeout_ms_;
};

// Fills `peers` with every worker, the chief's task first, then the workers', as
// TensorFlow ranks them; returns the rank of task `task` of `job`, -1 when it is none.
int make_peers(const ClusterSpec& cluster, const std::string& job, int task,
               const CollectiveOptions& options, std::vector<Peer>& peers) {
  // A send stuck in a stopped worker's full socket ends when the kernel gives up on the
  // connection, at twice the timeout (Note [Bytes stuck in the socket] in task_client.cc).
  config::ConnectOptions connect = options.connect;
  connect.rpc_timeout_ms = options.timeout_ms;
  int rank = -1;
  for (const char* member_job : {"chief", "worker"}) {
    auto found = cluster.find(member_job);
    if (found == cluster.end()) continue;
    for (int i = 0; i < static_cast<int>(found->second.size()); ++i) {
      const std::string& address = found->second[i];
      Peer peer;
      peer.name = absl::StrCat("worker ", task_name(member_job, i), " at ", address);
      peer.address = address;
      if (member_job == job && i == task) {
        rank = static_cast<int>(peers.size());
      } else {
        peer.channel = make_channel(address, connect, /*own_connection=*/false);
        peer.stub = proto::Worker::NewStub(peer.channel);
      }
      peers.push_back(std::move(peer));
    }
  }
  return rank;
}

}  // namespace

namespace {

std::mutex groups_mu;
std::map<std::string, uint64_t>& last_groups() {
  static auto* last = new std::map<std::string, uint64_t>();  // guarded by groups_mu
  return *last;
}

}  // namespace

uint64_t next_collective_group(const std::string& address) {
  std::lock_guard<std::mutex> lock(groups_mu);
  return last_groups()[address] + 1;
}

void joined_collective_group(const std::string& address, uint64_t group) {
  std::lock_guard<std::mutex> lock(groups_mu);
  uint64_t& last = last_groups()[address];
  last = std::max(last, group);
}

absl::StatusOr<std::unique_ptr<CollectiveGroup>> CollectiveGroup::create(
    const ClusterSpec& cluster, const std::string& job, int task, uint64_t group,
    const CollectiveOptions& options) {
  MT_RETURN_IF_ERROR(validate_cluster(cluster, "MultiWorkerMirroredStrategy"));
  absl::StatusOr<std::string> own = task_address(cluster, job, task);
  if (!own.ok()) return absl::InvalidArgumentError(absl::StrCat(kStrategy, own.status().message()));
  if (options.timeout_ms <= 0 || options.timeout_ms >= kMaxTimeoutMs) {
    return absl::InvalidArgumentError(absl::StrCat(
        kStrategy, "the collective timeout must be in (0, 2^31) ms, got ", options.timeout_ms));
  }
  std::shared_ptr<CollectiveMailbox> mailbox = local_mailbox(*own);
  if (mailbox == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(kStrategy, "this process runs no server for ", task_name(job, task), " at ",
                     *own, ": start it first (mt::distributed::Server)"));
  }
  std::vector<Peer> peers;
  const int rank = make_peers(cluster, job, task, options, peers);
  if (rank < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kStrategy, "task ", task_name(job, task),
        " takes no part in the collectives: only the tasks of jobs 'chief' and 'worker' do"));
  }
  std::unique_ptr<CollectiveGroup> out(
      new CollectiveGroup(group, rank, std::move(peers), std::move(mailbox), options));
  MT_RETURN_IF_ERROR(out->wait_for_peers());
  CollectiveGroup* group_ptr = out.get();
  out->heartbeat_ = std::thread([group_ptr] { group_ptr->beat(); });
  return out;
}

CollectiveGroup::CollectiveGroup(uint64_t group, int rank, std::vector<Peer> peers,
                                 std::shared_ptr<CollectiveMailbox> mailbox,
                                 const CollectiveOptions& options)
    : group_(group),
      rank_(rank),
      peers_(std::move(peers)),
      mailbox_(std::move(mailbox)),
      options_(options),
      metadata_(client_metadata(options.connect.auth_token)) {}

CollectiveGroup::~CollectiveGroup() {
  {
    std::lock_guard<std::mutex> lock(beat_mu_);
    stop_ = true;
  }
  beat_cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
  mailbox_->close(group_);
}

void CollectiveGroup::beat() {
  const auto tick = std::chrono::milliseconds(heartbeat_tick_ms(options_.timeout_ms));
  std::unique_lock<std::mutex> lock(beat_mu_);
  while (!beat_cv_.wait_for(lock, tick, [&] { return stop_; }) && status().ok()) {
    lock.unlock();
    for (int i = 0; i < size() && status().ok(); ++i) {
      if (i == rank_) continue;
      absl::Status peer =
          ask(peers_[i], group_, metadata_, Clock::now() + tick, options_.timeout_ms);
      if (!peer.ok()) fail(peer);
    }
    lock.lock();
  }
}

absl::Status CollectiveGroup::wait_for_peers() {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  for (int i = 0; i < size(); ++i) {
    if (i == rank_) continue;
    const Peer& peer = peers_[i];  // in rank order: the first one missing is named
    proto::HeartbeatRequest request;
    request.set_group(group_);
    proto::HeartbeatResponse response;
    auto context = call_context(metadata_, deadline, /*wait_for_ready=*/true);
    grpc::Status status = peer.stub->Heartbeat(context.get(), request, &response);
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return absl::UnavailableError(absl::StrCat(
          kStrategy, peer.name, " did not answer within ", options_.timeout_ms,
          " ms of this worker's start: is it started? (every worker must start within the "
          "collective timeout of the others)"));
    }
    if (!status.ok()) return peer_error(peer, status, "answer", options_.timeout_ms);
  }
  return absl::OkStatus();
}

absl::Status CollectiveGroup::all_reduce_sum(DType dtype, void* data, int64_t elements) {
  MT_RETURN_IF_ERROR(status());
  const uint64_t instance = ++instance_;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  PeerLinks links(group_, instance, rank_, peers_, *mailbox_, metadata_, deadline,
                  options_.timeout_ms);
  absl::Status status = ring_all_reduce(links, rank_, size(), dtype, data, elements);
  if (!status.ok()) fail(status);
  return status;
}

void CollectiveGroup::fail(const absl::Status& status) {
  if (!mailbox_->status(group_).ok()) return;  // failed already: the others were told
  mailbox_->abort(group_, status);
  // Each other worker in a thread of its own; one gone or stopped costs its deadline.
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(std::min<int64_t>(options_.timeout_ms, 1000));
  proto::AbortCollectivesRequest request;
  request.set_group(group_);
  request.set_code(static_cast<int>(status.code()));
  request.set_message(std::string(status.message()));
  std::vector<std::thread> tellers;
  for (int i = 0; i < size(); ++i) {
    if (i == rank_) continue;
    tellers.emplace_back([&, i] {
      proto::AbortCollectivesResponse response;
      auto context = call_context(metadata_, deadline);
      (void)peers_[i].stub->AbortCollectives(context.get(), request, &response);
    });
  }
  for (std::thread& t : tellers) t.join();
}

}  // namespace mt::distributed::internal
