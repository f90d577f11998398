// write_checkpoint and remove_checkpoint (checkpoint_files.h).
#include <unistd.h>

#include <algorithm>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/check.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/crc32c.h"
#include "runtime/train/safetensors.h"

namespace mt::internal {

// Note [Checkpoint commit]: a checkpoint exists exactly when its manifest does, and a
// manifest is only ever renamed into place after everything it names is durable:
//   0. an older manifest of the same prefix is removed and the folder fsynced (the old
//      checkpoint stops existing before its data file is replaced);
//   1. the data goes to "<prefix>.safetensors.tmp.<pid>", fsync, close, rename to its
//      name, fsync of the folder;
//   2. the manifest likewise, renamed last, then the folder fsynced again.
// A crash at any point leaves either the whole new checkpoint or no manifest (stray
// temporary files, which CheckpointManager removes). A restore checks the manifest's own
// checksum, the data file's size and every tensor's CRC32C, so a torn or flipped file is
// DataLoss, never a half-restored model. tests/runtime/checkpoint_commit_test.cc checks
// this order of operations; checkpoint_crash_test.cc kills writers at random moments.

namespace {

std::string file_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Note [Overlapped device pieces]
// A local GPU tensor reaches the file through 16 MiB host pieces (no second full copy of a
// large tensor in host memory). While one piece is checksummed and written, a helper
// thread copies the next one, of this tensor or of the next GPU tensor, into the other of
// two buffers, so the device-to-host copies hide behind the disk.
class DevicePieces {
 public:
  // Lists the pieces of `tensors`' local GPU tensors in write order.
  explicit DevicePieces(const std::vector<NamedTensor>& tensors) {
    for (const NamedTensor& t : tensors) {
      const TensorImpl& impl = *t.value.impl();
      if (!is_local_device(impl)) continue;
      for (size_t at = 0; at < impl.bytes(); at += kPiece) {
        pieces_.push_back({&impl, at, std::min(kPiece, impl.bytes() - at)});
      }
    }
  }
  static bool is_local_device(const TensorImpl& impl) {
    return impl.device->type() != DeviceType::kCPU && impl.device->remote() == nullptr;
  }
  static constexpr size_t kPiece = size_t{16} << 20;

  // Returns the next piece's bytes, valid until the call after next; starts the next copy.
  absl::StatusOr<absl::string_view> next() {
    MT_CHECK(next_ < pieces_.size() && "no more device pieces than listed are taken");
    if (next_ == 0) start(0);
    absl::Status s = copying_.get();
    const size_t k = next_++;
    if (s.ok() && next_ < pieces_.size()) start(next_);
    if (!s.ok()) return s;
    return absl::string_view(buffers_[k % 2].data(), pieces_[k].size);
  }

 private:
  struct Piece {
    const TensorImpl* impl;
    size_t at, size;
  };
  void start(size_t k) {
    copying_ = std::async(std::launch::async, [this, k] {
      const Piece& p = pieces_[k];
      std::string& buffer = buffers_[k % 2];
      if (buffer.size() < p.size) buffer.resize(p.size);
      return p.impl->device->copy_to_host(buffer.data(),
                                          static_cast<const char*>(p.impl->data) + p.at, p.size);
    });
  }
  std::vector<Piece> pieces_;
  std::string buffers_[2];
  std::future<absl::Status> copying_;  // after buffers_: its end waits for the copy in flight
  size_t next_ = 0;
};

// Appends the tensor's bytes to `file` and returns their CRC32C: a local CPU tensor's from
// its own buffer (copy_to_host would be a plain memcpy), a local GPU tensor's through
// `pieces` (Note [Overlapped device pieces]), a remote tensor's (whose `data` is a handle,
// not an address) in one piece.
absl::StatusOr<uint32_t> write_tensor(WritableFile& file, const TensorImpl& impl,
                                      DevicePieces& pieces) {
  Device& device = *impl.device;
  const size_t size = impl.bytes();
  if (size == 0) return 0u;
  uint32_t crc = 0;
  if (device.type() == DeviceType::kCPU && device.remote() == nullptr) {
    // 8 MiB at a time: checksummed, then written while still in the CPU's cache (Note
    // [Checkpoint speed] in checkpoint_reader.cc).
    constexpr size_t kCachedPiece = size_t{8} << 20;
    for (size_t at = 0; at < size; at += kCachedPiece) {
      absl::string_view bytes(static_cast<const char*>(impl.data) + at,
                              std::min(kCachedPiece, size - at));
      crc = crc32c_extend(crc, bytes.data(), bytes.size());
      if (absl::Status s = file.append(bytes); !s.ok()) return s;
    }
    return crc;
  }
  if (DevicePieces::is_local_device(impl)) {
    for (size_t at = 0; at < size; at += DevicePieces::kPiece) {
      absl::StatusOr<absl::string_view> bytes = pieces.next();
      if (!bytes.ok()) return bytes.status();
      crc = crc32c_extend(crc, bytes->data(), bytes->size());
      if (absl::Status s = file.append(*bytes); !s.ok()) return s;
    }
    return crc;
  }
  std::string host(size, '\0');
  if (absl::Status s = device.copy_to_host(host.data(), impl.data, size); !s.ok()) return s;
  crc = crc32c_extend(crc, host.data(), host.size());
  if (absl::Status s = file.append(host); !s.ok()) return s;
  return crc;
}

// Writes the data file at `temp`: the header, then each tensor in turn.
absl::Status write_data(WritableFile& file, const std::vector<NamedTensor>& tensors,
                        Manifest& manifest) {
  std::vector<SafetensorsTensor> layout;
  for (const NamedTensor& t : tensors) {
    const Shape& shape = t.value.shape();
    layout.push_back({t.name, t.value.dtype(), {shape.dims().begin(), shape.dims().end()}});
  }
  std::string head = encode_safetensors_header(layout, {{"format", "minitensor.checkpoint"}});
  manifest.header_crc32c = crc32c(head.data(), head.size());
  if (absl::Status s = file.append(head); !s.ok()) return s;
  manifest.data_bytes = head.size();
  DevicePieces pieces(tensors);
  for (const NamedTensor& t : tensors) {
    absl::StatusOr<uint32_t> crc = write_tensor(file, *t.value.impl(), pieces);
    if (!crc.ok()) return crc.status();
    manifest.tensors.push_back({t.name, *crc});
    manifest.data_bytes += t.value.impl()->bytes();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status remove_checkpoint(FileSystem& fs, const std::string& prefix) {
  if (absl::Status s = fs.remove(prefix + kManifestSuffix); !s.ok()) return s;
  if (absl::Status s = fs.sync_dir(dir_of(prefix)); !s.ok()) return s;
  return fs.remove(prefix + kDataSuffix);
}

absl::Status write_checkpoint(FileSystem& fs, const std::string& prefix,
                              const std::vector<NamedTensor>& tensors) {
  const std::string dir = dir_of(prefix);
  const std::string manifest = prefix + kManifestSuffix, data = prefix + kDataSuffix;
  if (fs.exists(manifest)) {  // step 0 of Note [Checkpoint commit]
    if (absl::Status s = fs.remove(manifest); !s.ok()) return s;
    if (absl::Status s = fs.sync_dir(dir); !s.ok()) return s;
  }
  const std::string temp = absl::StrCat(data, ".tmp.", ::getpid());
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs.open_for_write(temp);
  if (!file.ok()) return file.status();
  Manifest contents;
  contents.data_file = file_name(data);
  absl::Status s = write_data(**file, tensors, contents);
  if (s.ok()) s = (*file)->sync();
  if (absl::Status c = (*file)->close(); s.ok()) s = c;
  if (s.ok()) s = fs.rename(temp, data);
  if (!s.ok()) {
    fs.remove(temp).IgnoreError();
    return s;
  }
  if (s = fs.sync_dir(dir); !s.ok()) return s;
  return write_file_atomically(fs, manifest, encode_manifest(contents));
}

}  // namespace mt::internal
