#include "distributed/tensor_store.h"

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/tensor_impl.h"

namespace mt::distributed::internal {
namespace {

int64_t bytes(const Tensor& t) { return static_cast<int64_t>(t.impl()->bytes()); }

}  // namespace

TensorStore::TensorStore(int64_t max_client_bytes) : max_client_bytes_(max_client_bytes) {
  // Handles start at a random point, so that a restarted task does not take handles of
  // its previous life for its own.
  next_handle_ = (std::random_device()() | uint64_t{1}) << 32;
}

absl::StatusOr<Tensor> TensorStore::find(uint64_t handle, const std::string& client,
                                         const char* op) {
  mt::internal::MutexLock lock(&mu_);
  auto it = tensors_.find(handle);
  if (it == tensors_.end() || it->second.client != client) {
    return absl::NotFoundError(absl::StrCat("[", op, "] tensor handle ", handle,
                                            " is not on this task (freed, or the task restarted)"));
  }
  return it->second.tensor;
}

absl::Status TensorStore::check_room_locked(const std::string& client, int64_t bytes,
                                            const char* op) {
  if (max_client_bytes_ == 0) return absl::OkStatus();
  auto it = client_bytes_.find(client);
  int64_t held = it == client_bytes_.end() ? 0 : it->second;
  if (bytes <= max_client_bytes_ - held) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "[", op, "] a tensor of ", bytes, " bytes would take this client's tensors on the task to ",
      held + bytes, " bytes, over its limit of ", max_client_bytes_,
      " bytes (mt-server --max_client_bytes); free some first"));
}

absl::Status TensorStore::check_room(const std::string& client, int64_t bytes, const char* op) {
  mt::internal::MutexLock lock(&mu_);
  return check_room_locked(client, bytes, op);
}

absl::StatusOr<uint64_t> TensorStore::keep(Tensor t, uint64_t handle, const std::string& client,
                                           const char* op) {
  Tensor refused;  // freed outside the lock
  mt::internal::MutexLock lock(&mu_);
  int64_t n = bytes(t);
  if (absl::Status room = check_room_locked(client, n, op); !room.ok()) {
    refused = std::move(t);
    return room;
  }
  if (handle == 0) handle = next_handle_++;
  if (tensors_.contains(handle)) {
    refused = std::move(t);
    return absl::AlreadyExistsError(
        absl::StrCat("[", op, "] tensor handle ", handle, " is in use"));
  }
  tensors_.emplace(handle, Held{std::move(t), client});
  if (n > 0) client_bytes_[client] += n;  // a client has an entry while it holds a byte
  return handle;
}

void TensorStore::drop(absl::Span<const uint64_t> handles, const std::string& client) {
  std::vector<Tensor> dropped;  // freed outside the lock
  mt::internal::MutexLock lock(&mu_);
  for (uint64_t handle : handles) {
    auto it = tensors_.find(handle);
    if (it == tensors_.end() || it->second.client != client) continue;  // deleting twice is fine
    if (const int64_t n = bytes(it->second.tensor); n > 0) {
      auto held = client_bytes_.find(client);
      held->second -= n;
      if (held->second == 0) client_bytes_.erase(held);
    }
    dropped.push_back(std::move(it->second.tensor));
    tensors_.erase(it);
  }
}

int64_t TensorStore::bytes_of(const std::string& client) {
  mt::internal::MutexLock lock(&mu_);
  auto it = client_bytes_.find(client);
  return it == client_bytes_.end() ? 0 : it->second;
}

void TensorStore::clear() {
  absl::flat_hash_map<uint64_t, Held> dropped;
  mt::internal::MutexLock lock(&mu_);
  dropped.swap(tensors_);
  client_bytes_.clear();
}

}  // namespace mt::distributed::internal
