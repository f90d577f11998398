#pragma once
// CollectiveGroup: one worker's side of the collectives between the worker processes of a
// cluster (internal; MultiWorkerMirroredStrategy's engine, docs/distribute.md).
//
// Every worker runs the Server of its own task in its process; a worker's chunks reach a
// peer through the peer's server (Bulk's Deliver, with the cluster's TLS and token, as
// every other call) and wait in its mailbox until the peer's collective takes them
// (collective_mailbox.h). Sums run as a ring (Note [Ring all-reduce] in
// ring_all_reduce.h):
//
//   MT_ASSIGN_OR_RETURN(auto group, CollectiveGroup::create(spec, "worker", 1, id, options));
//   MT_RETURN_IF_ERROR(group->all_reduce_sum(DType::kFloat32, data, elements));
//
// Note [No collective hangs]
// Every collective has a deadline, the group's timeout from its start. While a worker
// waits for its previous neighbour it asks that worker, every heartbeat tick (a fifth of
// the timeout, between 50 ms and 1 s), whether it is there: a worker that is gone (its
// process died: the connection is refused) ends the wait at once, a worker that is there
// but silent (stopped, hung) at the deadline. Either way the collective fails with
// Unavailable naming the worker, job, task and address. The worker that found the fault
// then tells every other worker (AbortCollectives), which fails their collectives of the
// group with the same status, so every survivor fails within the timeout, naming the
// worker that was lost, not the neighbour that stopped answering because of it. A group
// that failed stays failed: its later collectives fail at once with the same status.
// Between collectives a thread of the group asks every other worker the same, every tick:
// a worker found gone (or whose group failed) fails the group then, so that the next
// collective fails at once, naming it. At creation a worker waits, up to the timeout, for
// every other worker's server to answer; one that does not is Unavailable, naming it ("is
// it started?").
//
// Thread safety: one collective at a time (MultiWorkerMirroredStrategy's merge point runs
// them); status() from any thread.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "distributed/auth.h"
#include "distributed/collective_mailbox.h"
#include "distributed/distributed.h"
#include "distributed/worker.grpc.pb.h"

namespace mt::distributed::internal {

struct CollectiveOptions {
  int64_t timeout_ms = 300'000;  // of each collective, and of waiting for the workers at start
  // The client side of the cluster's security (tls, auth_token), as to connect to it.
  config::ConnectOptions connect;
};

class CollectiveGroup {
 public:
  // Joins group `group` (a number every worker gives the same group) as task `task` of
  // job `job` of `cluster`, whose Server must run in this process (FailedPrecondition
  // otherwise). The workers are the tasks of jobs "chief" and "worker", ranked in that
  // order, as TensorFlow's. Waits up to the timeout for every other worker to answer.
  // InvalidArgument for a bad spec, job, task or timeout; Unavailable naming a worker that
  // does not answer; Unauthenticated when a worker refuses this one's credentials.
  static absl::StatusOr<std::unique_ptr<CollectiveGroup>> create(const ClusterSpec& cluster,
                                                                 const std::string& job, int task,
                                                                 uint64_t group,
                                                                 const CollectiveOptions& options);
  ~CollectiveGroup();  // stops the heartbeat; the mailbox drops what it holds for the group

  int size() const { return static_cast<int>(peers_.size()); }
  int rank() const { return rank_; }

  // Sums the `elements` elements of `dtype` at `data` over every worker, in place. Fails
  // as Note [No collective hangs] says, and then fails the group.
  absl::Status all_reduce_sum(DType dtype, void* data, int64_t elements);

  // Returns the status the group failed with, OK while it has not.
  absl::Status status() const { return mailbox_->status(group_); }

  // One worker of the group, as a collective's messages name it (internal to its code).
  struct Peer {
    std::string name;     // "worker /job:worker/replica:0/task:1 at 127.0.0.1:2223"
    std::string address;  // "127.0.0.1:2223"
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<proto::Worker::Stub> stub;
  };

 private:
  CollectiveGroup(uint64_t group, int rank, std::vector<Peer> peers,
                  std::shared_ptr<CollectiveMailbox> mailbox, const CollectiveOptions& options);
  absl::Status wait_for_peers();
  // The heartbeat between collectives (Note [No collective hangs]), until stop_.
  void beat();
  // Fails the group with `status` here and on every other worker (best effort).
  void fail(const absl::Status& status);

  const uint64_t group_;
  const int rank_;
  std::vector<Peer> peers_;  // every worker in rank order, this one included
  std::shared_ptr<CollectiveMailbox> mailbox_;
  CollectiveOptions options_;
  CallMetadata metadata_;  // the token every call carries
  uint64_t instance_ = 0;  // collectives begun so far
  std::mutex beat_mu_;
  std::condition_variable beat_cv_;
  bool stop_ = false;  // guarded by beat_mu_
  std::thread heartbeat_;
};

// Returns the number of the next group the task this process serves at `address` joins:
// one more than the last it joined (1 for the first), so that workers that create their
// strategies in the same order agree, whatever groups failed to start before.
// joined_collective_group records that it joined `group`.
uint64_t next_collective_group(const std::string& address);
void joined_collective_group(const std::string& address, uint64_t group);

}  // namespace mt::distributed::internal
