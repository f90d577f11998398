#pragma once
// mt::train::Checkpoint: saves and restores a named set of variables, optimizers (their
// slot variables and step count) and scalars, whole or not at all (tf.train.Checkpoint's
// role). A checkpoint is a safetensors file of every tensor plus a manifest, written last,
// with a CRC32C per tensor (runtime/train/checkpoint_files.h, docs/checkpoints.md).
//
//   mt::train::Checkpoint ckpt;
//   ckpt.track("model/w", w);            // a Variable
//   ckpt.track("optimizer", adam);       // iterations, and the slots of tracked variables
//   ckpt.track("epoch", epoch);          // an int64_t or double, by reference
//   ckpt.write("/ckpt/step-100");        // /ckpt/step-100.safetensors and .manifest
//   ckpt.restore("/ckpt/step-100");      // every tracked object, or nothing
//   ckpt.write_async("/ckpt/step-200");  // returns at once; training goes on
//   ckpt.sync();                          // waits until it is on the disk
//
// Tracked objects must outlive the Checkpoint. Errors throw mt::Error: NotFound when the
// checkpoint does not exist or lacks a tracked name; InvalidArgument for a tensor of
// another shape or dtype than its variable, or a name tracked twice; DataLoss naming the
// file and tensor when a file is damaged; Unimplemented for a dtype minitensor does not
// hold. restore checks everything before it assigns anything. The methods are called from
// one thread at a time; write_async's writing thread is its own.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "runtime/train/optimizers.h"
#include "runtime/train/variable.h"

namespace mt::internal {
class FileSystem;
struct NamedTensor;
}  // namespace mt::internal

namespace mt::train {

class Checkpoint {
 public:
  Checkpoint();
  // Writes and reads through `fs` (tests record or fail its operations); `fs` outlives it.
  explicit Checkpoint(internal::FileSystem& fs);
  // Waits for a write_async in flight (its error, if any, is dropped: call sync() first).
  ~Checkpoint();
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  // Tracks `variable` as tensor `name`.
  void track(const std::string& name, Variable variable);
  // Tracks the optimizer's step count as "<name>/iterations" and the slots it has for
  // each tracked variable as "<name>/slots/<its tracked name>/<index>".
  void track(const std::string& name, optimizers::Optimizer& optimizer);
  // Tracks a scalar the caller owns (an epoch, a data position) as a 0-d tensor.
  void track(const std::string& name, int64_t& value);
  void track(const std::string& name, double& value);

  // Writes every tracked object as checkpoint `prefix` (Note [Checkpoint commit]).
  void write(const std::string& prefix);
  // Takes the tracked values now and writes them as checkpoint `prefix` on a background
  // thread, then runs `then` there (CheckpointManager records the checkpoint so). Taking a
  // value costs no copy: later assignments move the variable to a new buffer while the
  // taken value is held (Note [Variables write in place]). Waits first for a write in
  // flight, throwing its error.
  void write_async(const std::string& prefix, std::function<absl::Status()> then = nullptr);
  // Waits until the write in flight (if any) is on the disk; throws its error.
  void sync();
  // Restores every tracked object from checkpoint `prefix` (after sync()).
  void restore(const std::string& prefix);

  // Internal: returns the tensors write() saves, by name.
  std::vector<internal::NamedTensor> tensors() const;
  internal::FileSystem& file_system() const { return *fs_; }

 private:
  struct Entry {
    std::string name;
    std::variant<Variable, optimizers::Optimizer*, int64_t*, double*> object;
  };
  void add(Entry entry);

  internal::FileSystem* fs_;
  std::vector<Entry> entries_;
  std::thread writer_;          // the write_async in flight, joined by sync()
  absl::Status writer_status_;  // written by writer_ before it ends, read after join
};

// Returns the prefix of the latest checkpoint recorded in `directory`'s "checkpoint" file
// whose manifest exists, or nullopt (tf.train.latest_checkpoint).
std::optional<std::string> latest_checkpoint(const std::string& directory);

}  // namespace mt::train
