// mt::train::CheckpointManager (checkpoint_manager.h).
#include "runtime/train/checkpoint_manager.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/eager/error.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/checkpoint_state.h"

namespace mt::train {
namespace {

// Returns n of "<name>-<n>", or nullopt.
std::optional<int64_t> number_of(const std::string& path, const std::string& name) {
  int64_t n;
  if (!absl::StartsWith(path, name + "-") || !absl::SimpleAtoi(path.substr(name.size() + 1), &n))
    return std::nullopt;
  return n;
}

}  // namespace

CheckpointManager::CheckpointManager(Checkpoint& checkpoint, std::string directory, int max_to_keep,
                                     std::string checkpoint_name)
    : checkpoint_(&checkpoint),
      directory_(std::move(directory)),
      name_(std::move(checkpoint_name)),
      max_to_keep_(max_to_keep) {
  internal::FileSystem& fs = checkpoint_->file_system();
  internal::throw_if_error(fs.make_dirs(directory_));
  if (auto state = internal::read_checkpoint_state(fs, directory_)) {
    for (const std::string& path : state->all) {
      if (!fs.exists(absl::StrCat(directory_, "/", path, internal::kManifestSuffix))) continue;
      kept_.push_back(path);
      if (auto n = number_of(path, name_)) next_number_ = std::max(next_number_, *n + 1);
    }
  }
  // Temporary files of saves that were killed (Note [Checkpoint commit]).
  auto names = internal::value_or_throw(fs.list_dir(directory_));
  for (const std::string& file : names) {
    if (absl::StartsWith(file, name_ + "-") && absl::StrContains(file, ".tmp.")) {
      internal::throw_if_error(fs.remove(absl::StrCat(directory_, "/", file)));
    }
  }
}

std::string CheckpointManager::save(std::optional<int64_t> checkpoint_number, bool async) {
  int64_t n = checkpoint_number.value_or(next_number_);
  next_number_ = n + 1;
  std::string path = absl::StrCat(name_, "-", n);
  std::erase(kept_, path);
  kept_.push_back(path);
  std::vector<std::string> dropped;
  while (max_to_keep_ > 0 && kept_.size() > static_cast<size_t>(max_to_keep_)) {
    dropped.push_back(kept_.front());
    kept_.erase(kept_.begin());
  }
  // Recorded once whole, and only then are the old ones deleted (Note [Checkpoint commit]).
  auto record = [fs = &checkpoint_->file_system(), dir = directory_, path, kept = kept_,
                 dropped]() -> absl::Status {
    if (absl::Status s = internal::write_checkpoint_state(*fs, dir, {path, kept}); !s.ok())
      return s;
    for (const std::string& old : dropped) {
      if (absl::Status s = internal::remove_checkpoint(*fs, absl::StrCat(dir, "/", old)); !s.ok())
        return s;
    }
    return absl::OkStatus();
  };
  std::string prefix = absl::StrCat(directory_, "/", path);
  if (async) {
    checkpoint_->write_async(prefix, std::move(record));
  } else {
    checkpoint_->write(prefix);
    internal::throw_if_error(record());
  }
  return prefix;
}

std::optional<std::string> CheckpointManager::latest_checkpoint() const {
  if (kept_.empty()) return std::nullopt;
  return absl::StrCat(directory_, "/", kept_.back());
}

std::vector<std::string> CheckpointManager::checkpoints() const {
  std::vector<std::string> out;
  for (const std::string& path : kept_) out.push_back(absl::StrCat(directory_, "/", path));
  return out;
}

}  // namespace mt::train
