#pragma once
// mt::train::CheckpointManager: numbered checkpoints of one Checkpoint in a folder, the
// newest `max_to_keep` kept (tf.train.CheckpointManager's role). The folder's "checkpoint"
// file (TensorFlow's form) names them; it is replaced only after a checkpoint is whole,
// and old checkpoints are deleted only after that, so a crash at any moment leaves a
// latest_checkpoint that restores whole.
//
//   mt::train::CheckpointManager manager(ckpt, "/ckpt", /*max_to_keep=*/3);
//   if (auto latest = manager.latest_checkpoint()) ckpt.restore(*latest);
//   for (...) { train(); manager.save(); }            // /ckpt/ckpt-1, ckpt-2, ...
//
// The constructor takes up the folder's recorded checkpoints and removes temporary files
// a killed save left. Errors throw mt::Error (Internal / NotFound naming the path for a
// file-system failure). Not thread-safe; one manager per folder.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/train/checkpoint.h"

namespace mt::train {

class CheckpointManager {
 public:
  // `checkpoint` outlives the manager. max_to_keep <= 0 keeps every checkpoint.
  CheckpointManager(Checkpoint& checkpoint, std::string directory, int max_to_keep = 5,
                    std::string checkpoint_name = "ckpt");

  // Writes checkpoint "<directory>/<checkpoint_name>-<n>", n one more than the last (or
  // `checkpoint_number`), records it, deletes the oldest beyond max_to_keep; returns it.
  // With `async`, all that happens on the Checkpoint's writing thread (write_async) and
  // is on the disk after its sync(); latest_checkpoint() and checkpoints() name it at once.
  std::string save(std::optional<int64_t> checkpoint_number = std::nullopt, bool async = false);
  // Returns the newest checkpoint's prefix, or nullopt.
  std::optional<std::string> latest_checkpoint() const;
  // Returns the prefixes of the kept checkpoints, oldest first.
  std::vector<std::string> checkpoints() const;

 private:
  Checkpoint* checkpoint_;
  std::string directory_, name_;
  int max_to_keep_;
  int64_t next_number_ = 1;
  std::vector<std::string> kept_;  // names relative to directory_, oldest first
};

}  // namespace mt::train
