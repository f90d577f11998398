#include "distributed/tensor_store.h"

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/check.h"
#include "core/status.h"
#include "runtime/eager/tensor_impl.h"

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
  if (in_parts_.contains(handle)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "[", op, "] tensor handle ", handle, " is still being uploaded (parts are missing)"));
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
  return keep_locked(std::move(t), handle, client, op, &refused);
}

absl::StatusOr<uint64_t> TensorStore::keep_locked(Tensor t, uint64_t handle,
                                                  const std::string& client, const char* op,
                                                  Tensor* refused) {
  int64_t n = bytes(t);
  if (absl::Status room = check_room_locked(client, n, op); !room.ok()) {
    *refused = std::move(t);
    return room;
  }
  if (handle == 0) handle = next_handle_++;
  if (tensors_.contains(handle)) {
    *refused = std::move(t);
    return absl::AlreadyExistsError(
        absl::StrCat("[", op, "] tensor handle ", handle, " is in use"));
  }
  tensors_.emplace(handle, Held{std::move(t), client});
  if (n > 0) client_bytes_[client] += n;  // a client has an entry while it holds a byte
  return handle;
}

absl::Status TensorStore::keep_in_parts(Tensor t, uint64_t handle, const std::string& client,
                                        int parts, const char* op) {
  MT_CHECK(handle != 0 && parts > 1);
  Tensor refused;  // freed outside the lock
  mt::internal::MutexLock lock(&mu_);
  MT_RETURN_IF_ERROR(keep_locked(std::move(t), handle, client, op, &refused).status());
  in_parts_[handle] = Parts{std::vector<bool>(parts, false), parts};  // before the lock goes
  return absl::OkStatus();
}

absl::StatusOr<Tensor> TensorStore::start_part(uint64_t handle, const std::string& client, int part,
                                               int* parts) {
  mt::internal::MutexLock lock(&mu_);
  auto held = tensors_.find(handle);
  auto waiting = in_parts_.find(handle);
  if (held == tensors_.end() || held->second.client != client || waiting == in_parts_.end()) {
    return absl::NotFoundError(
        absl::StrCat("[Upload] tensor handle ", handle, " is not on this task waiting for parts"));
  }
  std::vector<bool>& started = waiting->second.started;
  if (part < 0 || part >= static_cast<int>(started.size()) || started[part]) {
    return absl::InvalidArgumentError(absl::StrCat("[Upload] part ", part + 1, " of tensor handle ",
                                                   handle, " (of ", started.size(),
                                                   " parts) is out of range or was sent before"));
  }
  started[part] = true;
  *parts = static_cast<int>(started.size());
  return held->second.tensor;
}

void TensorStore::finish_part(uint64_t handle, const std::string& client) {
  mt::internal::MutexLock lock(&mu_);
  auto held = tensors_.find(handle);
  auto waiting = in_parts_.find(handle);
  if (held == tensors_.end() || held->second.client != client || waiting == in_parts_.end()) {
    return;  // freed meanwhile
  }
  if (--waiting->second.left == 0) in_parts_.erase(waiting);
}

void TensorStore::abandon(uint64_t handle, const std::string& client) {
  std::vector<Tensor> dropped;  // freed outside the lock
  mt::internal::MutexLock lock(&mu_);
  if (in_parts_.contains(handle)) drop_locked(handle, client, &dropped);
}

void TensorStore::drop(absl::Span<const uint64_t> handles, const std::string& client) {
  std::vector<Tensor> dropped;  // freed outside the lock
  mt::internal::MutexLock lock(&mu_);
  for (uint64_t handle : handles) drop_locked(handle, client, &dropped);
}

void TensorStore::drop_locked(uint64_t handle, const std::string& client,
                              std::vector<Tensor>* dropped) {
  auto it = tensors_.find(handle);
  if (it == tensors_.end() || it->second.client != client) return;  // deleting twice is fine
  if (const int64_t n = bytes(it->second.tensor); n > 0) {
    auto held = client_bytes_.find(client);
    held->second -= n;
    if (held->second == 0) client_bytes_.erase(held);
  }
  dropped->push_back(std::move(it->second.tensor));
  tensors_.erase(it);
  in_parts_.erase(handle);
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
  in_parts_.clear();
}

}  // namespace mt::distributed::internal
