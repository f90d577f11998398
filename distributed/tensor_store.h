#pragma once
// TensorStore: the tensors a task keeps for its clients, by handle, each owned by the
// client that made it (internal). A client sees only its own tensors: another's handle is
// NotFound, as a freed one is. With a byte limit, a client may hold at most that many
// bytes of tensors (their logical size); a tensor that would take it over is refused with
// ResourceExhausted naming the limit, and other clients are unaffected. A tensor uploaded
// in parts (Note [Transfers over several connections] in bulk_service.h) is kept from its
// first call on, counted and freed as any other, but cannot be used until every part has
// arrived.
//
//   TensorStore store(/*max_client_bytes=*/1 << 30);
//   MT_RETURN_IF_ERROR(store.check_room(client, bytes, "Fill"));  // before allocating
//   MT_ASSIGN_OR_RETURN(uint64_t handle, store.keep(std::move(t), 0, client, "Fill"));
//
// Thread safety: every method may be called from any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/mutex.h"
#include "runtime/eager/tensor.h"

namespace mt::distributed::internal {

class TensorStore {
 public:
  // `max_client_bytes` 0: no limit.
  explicit TensorStore(int64_t max_client_bytes);

  // Returns `client`'s tensor `handle`; NotFound naming `op` when it has none of that name,
  // FailedPrecondition when its parts have not all arrived.
  absl::StatusOr<Tensor> find(uint64_t handle, const std::string& client, const char* op);

  // Returns ResourceExhausted naming `op` and the limit when `client` cannot take `bytes`
  // more; a check made before allocating (keep() checks again).
  absl::Status check_room(const std::string& client, int64_t bytes, const char* op);

  // Keeps `t` for `client` under `handle` (0: a new one) and returns the handle;
  // AlreadyExists when the handle is in use, ResourceExhausted as check_room.
  absl::StatusOr<uint64_t> keep(Tensor t, uint64_t handle, const std::string& client,
                                const char* op);

  // Keeps `t` as keep() does, as a tensor whose bytes are to come in `parts` parts.
  absl::Status keep_in_parts(Tensor t, uint64_t handle, const std::string& client, int parts,
                             const char* op);

  // Returns `client`'s tensor `handle` still waiting for part `part` (0-based), and marks
  // that part as on its way; sets `parts` to its number of parts. NotFound when no such
  // tensor waits for parts; InvalidArgument for a part out of range or sent before.
  absl::StatusOr<Tensor> start_part(uint64_t handle, const std::string& client, int part,
                                    int* parts);

  // Records that a part started by start_part arrived whole; after the last, the tensor
  // can be used. Nothing when the tensor was freed meanwhile.
  void finish_part(uint64_t handle, const std::string& client);

  // Frees `client`'s tensor `handle` if it still waits for parts (its upload failed).
  void abandon(uint64_t handle, const std::string& client);

  // Frees `client`'s tensors among `handles`; others' and unknown ones are ignored.
  void drop(absl::Span<const uint64_t> handles, const std::string& client);

  // Returns the bytes `client` holds.
  int64_t bytes_of(const std::string& client);

  // Frees every tensor (the server is stopping).
  void clear();

 private:
  struct Held {
    Tensor tensor;
    std::string client;
  };
  // What a tensor in parts still waits for.
  struct Parts {
    std::vector<bool> started;  // by part
    int left;                   // parts not arrived whole yet
  };
  absl::Status check_room_locked(const std::string& client, int64_t bytes, const char* op)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves `client`'s tensor `handle`, if it has one, to `dropped`.
  void drop_locked(uint64_t handle, const std::string& client, std::vector<Tensor>* dropped)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // keep(); a tensor it refuses goes to `refused`, to be freed once the lock is released.
  absl::StatusOr<uint64_t> keep_locked(Tensor t, uint64_t handle, const std::string& client,
                                       const char* op, Tensor* refused)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int64_t max_client_bytes_;
  mt::internal::Mutex mu_;
  uint64_t next_handle_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, Held> tensors_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> client_bytes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, Parts> in_parts_ ABSL_GUARDED_BY(mu_);  // by handle
};

}  // namespace mt::distributed::internal
