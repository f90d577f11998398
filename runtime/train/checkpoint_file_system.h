#pragma once
// FileSystem: the file operations a checkpoint makes, as an interface so that a test can
// record their order (writes, fsyncs, renames) or fail one of them. posix_file_system() is
// the real one: open(2), write(2), fsync(2), rename(2), and fsync of the folder.
//
//   FileSystem& fs = posix_file_system();
//   auto file = fs.open_for_write("/ckpt/x.tmp");     // created or truncated
//   (*file)->append(bytes); (*file)->sync(); (*file)->close();
//   fs.rename("/ckpt/x.tmp", "/ckpt/x"); fs.sync_dir("/ckpt");
//
// Errors are absl statuses naming the path and errno's text (NotFound for a missing file,
// else Internal / DataLoss for short reads). Implementations are thread-safe; an open
// WritableFile is used by one thread at a time, a ReadableFile's read_at by several at once
// (a restore's readers: Note [Parallel restore] in checkpoint_reader.cc).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mt::internal {

class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual absl::Status append(absl::string_view data) = 0;
  // Flushes the file's data to the disk (fsync).
  virtual absl::Status sync() = 0;
  virtual absl::Status close() = 0;
};

class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  virtual uint64_t size() const = 0;
  // Reads `size` bytes at `offset` into `dst`; DataLoss when the file is shorter.
  virtual absl::Status read_at(uint64_t offset, uint64_t size, char* dst) const = 0;
  // Hints that `size` bytes at `offset` will be read soon: the POSIX file starts reading
  // them into the page cache in the background (posix_fadvise WILLNEED). Never fails.
  virtual void will_need(uint64_t /*offset*/, uint64_t /*size*/) const {}
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> open_for_write(const std::string& path) = 0;
  virtual absl::StatusOr<std::unique_ptr<ReadableFile>> open_for_read(const std::string& path) = 0;
  // Renames `from` to `to`, replacing `to` atomically when it exists.
  virtual absl::Status rename(const std::string& from, const std::string& to) = 0;
  // Makes the folder's entries (renames, removals) durable (fsync of the folder).
  virtual absl::Status sync_dir(const std::string& dir) = 0;
  // Removes a file; OK when it does not exist.
  virtual absl::Status remove(const std::string& path) = 0;
  virtual bool exists(const std::string& path) = 0;
  virtual absl::Status make_dirs(const std::string& dir) = 0;
  // Returns the names (not paths) of the folder's entries.
  virtual absl::StatusOr<std::vector<std::string>> list_dir(const std::string& dir) = 0;
};

// Returns the process's POSIX file system.
FileSystem& posix_file_system();

// Reads the whole file at `path`.
absl::StatusOr<std::string> read_whole_file(FileSystem& fs, const std::string& path);

// Writes `data` to `path` whole or not at all: a temporary file beside it, fsync, rename,
// fsync of the folder.
absl::Status write_file_atomically(FileSystem& fs, const std::string& path, absl::string_view data);

// Returns the folder part of `path` ("." when it has none).
std::string dir_of(const std::string& path);

}  // namespace mt::internal
