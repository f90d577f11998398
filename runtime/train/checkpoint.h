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
//
// Tracked objects must outlive the Checkpoint. Errors throw mt::Error: NotFound when the
// checkpoint does not exist or lacks a tracked name; InvalidArgument for a tensor of
// another shape or dtype than its variable, or a name tracked twice; DataLoss naming the
// file and tensor when a file is damaged; Unimplemented for a dtype minitensor does not
// hold. restore checks everything before it assigns anything. Not thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

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

  // Tracks `variable` as tensor `name`.
  void track(const std::string& name, Variable variable);
  // Tracks the optimizer's step count as "<name>/iterations" and the slots it has for
  // each tracked variable as "<name>/slots/<its tracked name>/<index>".
  void track(const std::string& name, optimizers::Optimizer& optimizer);
  // Tracks a scalar the caller owns (an epoch, a data position) as a 0-d tensor.
  void track(const std::string& name, int64_t& value);
  void track(const std::string& name, double& value);

  // Writes every tracked object as checkpoint `prefix` (Note [Checkpoint commit]).
  void write(const std::string& prefix) const;
  // Restores every tracked object from checkpoint `prefix`.
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
};

// Returns the prefix of the latest checkpoint recorded in `directory`'s "checkpoint" file
// whose manifest exists, or nullopt (tf.train.latest_checkpoint).
std::optional<std::string> latest_checkpoint(const std::string& directory);

}  // namespace mt::train
