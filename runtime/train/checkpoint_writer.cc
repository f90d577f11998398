// write_checkpoint and remove_checkpoint (checkpoint_files.h).
#include <unistd.h>

#include "absl/strings/str_cat.h"
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

// Returns the tensor's bytes: its own buffer where that is this process's host memory (a
// local CPU's, whose copy_to_host is a plain memcpy), else a copy made in `host`.
absl::StatusOr<absl::string_view> host_bytes(const TensorImpl& impl, std::string& host) {
  Device& device = *impl.device;
  if (impl.bytes() == 0) return absl::string_view();
  if (device.type() == DeviceType::kCPU && device.remote() == nullptr) {
    return absl::string_view(static_cast<const char*>(impl.data), impl.bytes());
  }
  host.resize(impl.bytes());
  if (absl::Status s = device.copy_to_host(host.data(), impl.data, host.size()); !s.ok()) return s;
  return absl::string_view(host);
}

// Writes the data file at `temp`: the header, then each tensor copied to the host in turn.
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
  std::string host;
  for (const NamedTensor& t : tensors) {
    absl::StatusOr<absl::string_view> bytes = host_bytes(*t.value.impl(), host);
    if (!bytes.ok()) return bytes.status();
    manifest.tensors.push_back({t.name, crc32c(bytes->data(), bytes->size())});
    if (absl::Status s = file.append(*bytes); !s.ok()) return s;
    manifest.data_bytes += bytes->size();
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
