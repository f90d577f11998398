// The "checkpoint" state file (checkpoint_state.h).
#include "runtime/train/checkpoint_state.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace mt::internal {
namespace {

// Returns the quoted value of `line` if it is `key: "value"`.
std::optional<std::string> value_of(absl::string_view line, absl::string_view key) {
  if (!absl::ConsumePrefix(&line, key) || !absl::ConsumePrefix(&line, ": \"") ||
      !absl::ConsumeSuffix(&line, "\"")) {
    return std::nullopt;
  }
  return std::string(line);
}

}  // namespace

std::optional<CheckpointState> read_checkpoint_state(FileSystem& fs, const std::string& dir) {
  absl::StatusOr<std::string> text = read_whole_file(fs, dir + "/" + kStateFileName);
  if (!text.ok()) return std::nullopt;
  CheckpointState state;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    if (auto v = value_of(line, "model_checkpoint_path")) state.latest = *v;
    if (auto v = value_of(line, "all_model_checkpoint_paths")) state.all.push_back(*v);
  }
  return state;
}

absl::Status write_checkpoint_state(FileSystem& fs, const std::string& dir,
                                    const CheckpointState& state) {
  std::string text = absl::StrCat("model_checkpoint_path: \"", state.latest, "\"\n");
  for (const std::string& path : state.all) {
    absl::StrAppend(&text, "all_model_checkpoint_paths: \"", path, "\"\n");
  }
  return write_file_atomically(fs, dir + "/" + kStateFileName, text);
}

}  // namespace mt::internal
