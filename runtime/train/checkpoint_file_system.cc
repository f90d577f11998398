// The POSIX file system of the checkpoints (checkpoint_file_system.h).
#include "runtime/train/checkpoint_file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace mt::internal {
namespace {

absl::Status errno_status(absl::string_view what, const std::string& path) {
  int e = errno;
  std::string message = absl::StrCat("[checkpoint] ", what, " ", path, ": ", std::strerror(e));
  return e == ENOENT ? absl::NotFoundError(message) : absl::InternalError(message);
}

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  absl::Status append(absl::string_view data) override {
    const off_t start = written_;
    const size_t size = data.size();
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno_status("cannot write", path_);
      data.remove_prefix(static_cast<size_t>(n));
    }
    written_ += static_cast<off_t>(size);
    // A large piece starts going to the disk now, while the caller makes the next one, so
    // that sync() finds little left to write (Note [Checkpoint speed] in checkpoint_reader.cc).
    if (size >= kWritebackBytes)
      ::sync_file_range(fd_, start, static_cast<off_t>(size), SYNC_FILE_RANGE_WRITE);
    return absl::OkStatus();
  }
  absl::Status sync() override {
    return ::fsync(fd_) == 0 ? absl::OkStatus() : errno_status("cannot fsync", path_);
  }
  absl::Status close() override {
    int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0 ? absl::OkStatus() : errno_status("cannot close", path_);
  }

 private:
  static constexpr size_t kWritebackBytes = size_t{1} << 20;
  int fd_;
  std::string path_;
  off_t written_ = 0;
};

class PosixReadableFile : public ReadableFile {
 public:
  PosixReadableFile(int fd, uint64_t size, std::string path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  ~PosixReadableFile() override { ::close(fd_); }
  uint64_t size() const override { return size_; }
  absl::Status read_at(uint64_t offset, uint64_t size, char* dst) const override {
    while (size > 0) {
      ssize_t n = ::pread(fd_, dst, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno_status("cannot read", path_);
      if (n == 0) return absl::DataLossError(absl::StrCat("[checkpoint] ", path_, ": cut short"));
      dst += n;
      offset += static_cast<uint64_t>(n);
      size -= static_cast<uint64_t>(n);
    }
    return absl::OkStatus();
  }
  void will_need(uint64_t offset, uint64_t size) const override {
    ::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(size), POSIX_FADV_WILLNEED);
  }

 private:
  int fd_;
  uint64_t size_;
  std::string path_;
};

class PosixFileSystem : public FileSystem {
 public:
  absl::StatusOr<std::unique_ptr<WritableFile>> open_for_write(const std::string& path) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno_status("cannot create", path);
    return std::make_unique<PosixWritableFile>(fd, path);
  }
  absl::StatusOr<std::unique_ptr<ReadableFile>> open_for_read(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status("cannot open", path);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      absl::Status s = errno_status("cannot stat", path);
      ::close(fd);
      return s;
    }
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // a checkpoint is read front to back
    return std::make_unique<PosixReadableFile>(fd, static_cast<uint64_t>(st.st_size), path);
  }
  absl::Status rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) == 0) return absl::OkStatus();
    return errno_status(absl::StrCat("cannot rename to ", to, ":"), from);
  }
  absl::Status sync_dir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno_status("cannot open folder", dir);
    int rc = ::fsync(fd);
    ::close(fd);
    return rc == 0 ? absl::OkStatus() : errno_status("cannot fsync folder", dir);
  }
  absl::Status remove(const std::string& path) override {
    if (::unlink(path.c_str()) == 0 || errno == ENOENT) return absl::OkStatus();
    return errno_status("cannot remove", path);
  }
  bool exists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }
  absl::Status make_dirs(const std::string& dir) override {
    for (size_t at = 1; at <= dir.size(); ++at) {
      if (at != dir.size() && dir[at] != '/') continue;
      std::string part = dir.substr(0, at);
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
        return errno_status("cannot make folder", part);
      }
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::string>> list_dir(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return errno_status("cannot list", dir);
    std::vector<std::string> names;
    while (struct dirent* entry = ::readdir(d)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(d);
    return names;
  }
};

}  // namespace

FileSystem& posix_file_system() {
  static PosixFileSystem* fs = new PosixFileSystem();
  return *fs;
}

absl::StatusOr<std::string> read_whole_file(FileSystem& fs, const std::string& path) {
  absl::StatusOr<std::unique_ptr<ReadableFile>> file = fs.open_for_read(path);
  if (!file.ok()) return file.status();
  std::string data((*file)->size(), '\0');
  if (absl::Status s = (*file)->read_at(0, data.size(), data.data()); !s.ok()) return s;
  return data;
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::Status write_file_atomically(FileSystem& fs, const std::string& path,
                                   absl::string_view data) {
  std::string temp = absl::StrCat(path, ".tmp.", ::getpid());
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.open_for_write(temp);
  if (!file.ok()) return file.status();
  absl::Status s = (*file)->append(data);
  if (s.ok()) s = (*file)->sync();
  if (absl::Status c = (*file)->close(); s.ok()) s = c;
  if (s.ok()) s = fs.rename(temp, path);
  if (!s.ok()) {
    fs.remove(temp).IgnoreError();
    return s;
  }
  return fs.sync_dir(dir_of(path));
}

}  // namespace mt::internal
