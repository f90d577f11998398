#pragma once
// The "checkpoint" file of a checkpoint folder, in TensorFlow's text form, so that either
// side's latest_checkpoint reads the other's:
//   model_checkpoint_path: "ckpt-3"
//   all_model_checkpoint_paths: "ckpt-2"
//   all_model_checkpoint_paths: "ckpt-3"
// Paths are relative to the folder. It is replaced atomically (write_file_atomically).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/train/checkpoint_file_system.h"

namespace mt::internal {

struct CheckpointState {
  std::string latest;            // model_checkpoint_path
  std::vector<std::string> all;  // all_model_checkpoint_paths, oldest first
};

inline constexpr char kStateFileName[] = "checkpoint";

// Returns the folder's state, or nullopt when it has no readable state file.
std::optional<CheckpointState> read_checkpoint_state(FileSystem& fs, const std::string& dir);

// Replaces the folder's state file atomically.
absl::Status write_checkpoint_state(FileSystem& fs, const std::string& dir,
                                    const CheckpointState& state);

}  // namespace mt::internal
