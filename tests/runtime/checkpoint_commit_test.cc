// The order of a checkpoint's writes, fsyncs and renames (Note [Checkpoint commit]), by a
// file system that records every operation; and a failing operation leaves no checkpoint.
#include "runtime/ops/constant.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/checkpoint_file_system.h"
#include "runtime/train/checkpoint_manager.h"
#include "tests/runtime/checkpoint_fixture.h"

namespace mt::testing {
namespace {

using internal::FileSystem;
using internal::ReadableFile;
using internal::WritableFile;

// Passes every operation to the POSIX file system and records it as "op name", with
// names relative to the folder; fails the operation `fail_at` (when set).
class RecordingFileSystem : public FileSystem {
 public:
  explicit RecordingFileSystem(std::string dir) : dir_(std::move(dir) + "/") {}
  std::vector<std::string> ops;
  std::string fail_at;

  absl::StatusOr<std::unique_ptr<WritableFile>> open_for_write(const std::string& path) override {
    if (absl::Status s = note("create", short_name(path)); !s.ok()) return s;
    auto file = real().open_for_write(path);
    if (!file.ok()) return file.status();
    return std::unique_ptr<WritableFile>(new File(this, short_name(path), *std::move(file)));
  }
  absl::StatusOr<std::unique_ptr<ReadableFile>> open_for_read(const std::string& path) override {
    return real().open_for_read(path);
  }
  absl::Status rename(const std::string& from, const std::string& to) override {
    if (absl::Status s = note("rename", short_name(from) + " -> " + short_name(to)); !s.ok())
      return s;
    return real().rename(from, to);
  }
  absl::Status sync_dir(const std::string& dir) override {
    if (absl::Status s = note("syncdir", dir); !s.ok()) return s;
    return real().sync_dir(dir);
  }
  absl::Status remove(const std::string& path) override {
    if (absl::Status s = note("remove", short_name(path)); !s.ok()) return s;
    return real().remove(path);
  }
  bool exists(const std::string& path) override { return real().exists(path); }
  absl::Status make_dirs(const std::string& dir) override { return real().make_dirs(dir); }
  absl::StatusOr<std::vector<std::string>> list_dir(const std::string& dir) override {
    return real().list_dir(dir);
  }

 private:
  class File : public WritableFile {
   public:
    File(RecordingFileSystem* fs, std::string name, std::unique_ptr<WritableFile> file)
        : fs_(fs), name_(std::move(name)), file_(std::move(file)) {}
    absl::Status append(absl::string_view data) override {
      if (absl::Status s = fs_->note("write", name_); !s.ok()) return s;
      return file_->append(data);
    }
    absl::Status sync() override {
      if (absl::Status s = fs_->note("fsync", name_); !s.ok()) return s;
      return file_->sync();
    }
    absl::Status close() override { return file_->close(); }

   private:
    RecordingFileSystem* fs_;
    std::string name_;
    std::unique_ptr<WritableFile> file_;
  };

  static FileSystem& real() { return internal::posix_file_system(); }
  std::string short_name(const std::string& path) const {
    std::string name = path.rfind(dir_, 0) == 0 ? path.substr(dir_.size()) : path;
    size_t tmp = name.find(".tmp.");
    return tmp == std::string::npos ? name : name.substr(0, tmp) + ".tmp";
  }
  absl::Status note(const std::string& op, const std::string& what) {
    std::string entry = op + " " + what;
    if (ops.empty() || ops.back() != entry) ops.push_back(entry);  // writes of one file: one
    if (entry == fail_at) return absl::InternalError("injected failure at " + entry);
    return absl::OkStatus();
  }
  std::string dir_;
};

class CheckpointCommitTest : public CheckpointTestBase {};

TEST_F(CheckpointCommitTest, DataIsDurableBeforeTheManifestIsRenamedIntoPlace) {
  RecordingFileSystem fs(dir_);
  Variable w(constant({1.f, 2.f}), true, "w");
  train::Checkpoint ckpt(fs);
  ckpt.track("w", w);
  ckpt.write(dir_ + "/a");
  std::string syncdir = "syncdir " + dir_;
  EXPECT_EQ(fs.ops, (std::vector<std::string>{
                        "create a.safetensors.tmp", "write a.safetensors.tmp",
                        "fsync a.safetensors.tmp", "rename a.safetensors.tmp -> a.safetensors",
                        syncdir, "create a.manifest.tmp", "write a.manifest.tmp",
                        "fsync a.manifest.tmp", "rename a.manifest.tmp -> a.manifest", syncdir}));
  // Writing over it un-commits the old checkpoint first.
  fs.ops.clear();
  ckpt.write(dir_ + "/a");
  ASSERT_GE(fs.ops.size(), 3u);
  EXPECT_EQ(fs.ops[0], "remove a.manifest");
  EXPECT_EQ(fs.ops[1], syncdir);
  EXPECT_EQ(fs.ops[2], "create a.safetensors.tmp");
}

TEST_F(CheckpointCommitTest, ManagerRecordsBeforeItDeletes) {
  RecordingFileSystem fs(dir_);
  Variable w(constant({1.f, 2.f}), true, "w");
  train::Checkpoint ckpt(fs);
  ckpt.track("w", w);
  train::CheckpointManager manager(ckpt, dir_, /*max_to_keep=*/1);
  manager.save();
  fs.ops.clear();
  manager.save();
  std::vector<std::string> tail(fs.ops.end() - 8, fs.ops.end());
  std::string syncdir = "syncdir " + dir_;
  EXPECT_EQ(tail, (std::vector<std::string>{
                      "create checkpoint.tmp", "write checkpoint.tmp", "fsync checkpoint.tmp",
                      "rename checkpoint.tmp -> checkpoint", syncdir, "remove ckpt-1.manifest",
                      syncdir, "remove ckpt-1.safetensors"}));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/ckpt-1.safetensors"));
}

TEST_F(CheckpointCommitTest, AFailedStepLeavesNoCheckpoint) {
  for (std::string step : {"write a.safetensors.tmp", "fsync a.safetensors.tmp",
                           "rename a.manifest.tmp -> a.manifest", "fsync a.manifest.tmp"}) {
    RecordingFileSystem fs(dir_);
    fs.fail_at = step;
    Variable w(constant({1.f, 2.f}), true, "w");
    train::Checkpoint ckpt(fs);
    ckpt.track("w", w);
    expect_error([&] { ckpt.write(dir_ + "/a"); }, absl::StatusCode::kInternal,
                 "injected failure at " + step);
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/a.manifest")) << step;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
    }
  }
}

}  // namespace
}  // namespace mt::testing
