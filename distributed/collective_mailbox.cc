#include "distributed/collective_mailbox.h"

#include <algorithm>
#include <utility>

namespace mt::distributed::internal {

void CollectiveMailbox::deliver(const MailboxKey& key, Message message) {
  const uint64_t group = std::get<0>(key);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_.count(group) > 0 || closed_.count(group) > 0) return;
    messages_[key] = std::move(message);
  }
  changed_.notify_all();
}

absl::StatusOr<CollectiveMailbox::Message> CollectiveMailbox::take(
    const MailboxKey& key, Clock::time_point deadline, Clock::duration tick,
    const std::function<absl::Status()>& check) {
  const uint64_t group = std::get<0>(key);
  std::unique_lock<std::mutex> lock(mu_);
  Clock::time_point next_check = Clock::now() + tick;
  while (true) {
    // A message that came before the group failed is still good (its sender finished).
    if (auto found = messages_.find(key); found != messages_.end()) {
      Message message = std::move(found->second);
      messages_.erase(found);
      return message;
    }
    if (auto failed = aborted_.find(group); failed != aborted_.end()) return failed->second;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return absl::DeadlineExceededError("no message before the deadline");
    if (now >= next_check) {
      lock.unlock();
      absl::Status peer = check();
      lock.lock();
      if (!peer.ok()) return peer;
      next_check = Clock::now() + tick;
      continue;
    }
    changed_.wait_until(lock, std::min(deadline, next_check));
  }
}

void CollectiveMailbox::abort(uint64_t group, const absl::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!aborted_.emplace(group, status).second) return;
  }
  changed_.notify_all();
}

absl::Status CollectiveMailbox::status(uint64_t group) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto failed = aborted_.find(group);
  return failed == aborted_.end() ? absl::OkStatus() : failed->second;
}

void CollectiveMailbox::close(uint64_t group) {
  std::lock_guard<std::mutex> lock(mu_);
  closed_.insert(group);
  auto first = messages_.lower_bound(MailboxKey{group, 0, 0, 0, 0});
  auto last = messages_.lower_bound(MailboxKey{group + 1, 0, 0, 0, 0});
  messages_.erase(first, last);
}

namespace {

std::mutex registry_mu;
std::map<std::string, std::shared_ptr<CollectiveMailbox>>& registry() {
  static auto* mailboxes = new std::map<std::string, std::shared_ptr<CollectiveMailbox>>();
  return *mailboxes;
}

}  // namespace

std::shared_ptr<CollectiveMailbox> local_mailbox(const std::string& address) {
  std::lock_guard<std::mutex> lock(registry_mu);
  auto found = registry().find(address);
  return found == registry().end() ? nullptr : found->second;
}

void register_mailbox(const std::string& address, std::shared_ptr<CollectiveMailbox> mailbox) {
  std::lock_guard<std::mutex> lock(registry_mu);
  registry()[address] = std::move(mailbox);
}

void unregister_mailbox(const std::string& address, const CollectiveMailbox* mailbox) {
  std::lock_guard<std::mutex> lock(registry_mu);
  auto found = registry().find(address);
  if (found != registry().end() && found->second.get() == mailbox) registry().erase(found);
}

}  // namespace mt::distributed::internal
