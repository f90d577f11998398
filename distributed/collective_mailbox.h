#pragma once
// CollectiveMailbox: where a task keeps the collective messages other workers delivered to
// it until its own side of the collective takes them (internal; Note [Ring all-reduce] in
// distributed/collective_group.h). Each Server has one; a worker's CollectiveGroup finds
// the mailbox of the server this process runs for its task with local_mailbox().
//
//   mailbox.deliver(key, {"float32 x 1000", std::move(slices)});   // Bulk's Deliver
//   absl::StatusOr<CollectiveMailbox::Message> message =
//       mailbox.take(key, deadline, tick, check_peer);               // the receiver
//
// A message may arrive before its receiver asks for it (it waits in the mailbox) or after
// (the receiver waits). A group that failed (abort()) fails every later take of a message
// not there yet with the abort's status, and drops later messages; a closed group drops
// what it holds and everything that comes later.
//
// Thread safety: every method may be called from any thread.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"

namespace mt::distributed::internal {

// group, instance, step, chunk, source: worker.proto's CollectiveKey.
using MailboxKey = std::tuple<uint64_t, uint64_t, uint32_t, uint32_t, int32_t>;

class CollectiveMailbox {
 public:
  // A message: what the sender says it holds ("float32 x 1000", checked by the receiver)
  // and its bytes as gRPC received them (no copy).
  struct Message {
    std::string what;
    std::vector<grpc::Slice> bytes;
  };
  using Clock = std::chrono::steady_clock;

  // Keeps `message` for take(key); dropped when the key's group failed or closed.
  void deliver(const MailboxKey& key, Message message);

  // Waits until the message `key` is there and returns it. Every `tick` of waiting it calls
  // `check` (without the lock); an error from it ends the wait with that error. Returns
  // the group's abort status when it fails, DeadlineExceeded at `deadline`.
  absl::StatusOr<Message> take(const MailboxKey& key, Clock::time_point deadline,
                               Clock::duration tick, const std::function<absl::Status()>& check);

  // Fails group `group` with `status` (not OK), waking its waiters; the first abort stays.
  void abort(uint64_t group, const absl::Status& status);

  // Returns the status `group` failed with, OK while it has not.
  absl::Status status(uint64_t group) const;

  // Drops everything held for `group`, whose collectives are over; later messages for it
  // are dropped too.
  void close(uint64_t group);

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<MailboxKey, Message> messages_;    // guarded by mu_
  std::map<uint64_t, absl::Status> aborted_;  // guarded by mu_
  std::set<uint64_t> closed_;                 // guarded by mu_
};

// The mailbox of the Server this process runs at `address` ("host:port"), or nullptr.
std::shared_ptr<CollectiveMailbox> local_mailbox(const std::string& address);

// Server's side of local_mailbox: registers its mailbox while it serves `address`.
void register_mailbox(const std::string& address, std::shared_ptr<CollectiveMailbox> mailbox);
void unregister_mailbox(const std::string& address, const CollectiveMailbox* mailbox);

}  // namespace mt::distributed::internal
