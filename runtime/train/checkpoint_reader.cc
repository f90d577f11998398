// read_checkpoint (checkpoint_files.h): every check before any tensor is handed out.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "runtime/eager/context.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/crc32c.h"
#include "runtime/train/safetensors.h"

// Note [Checkpoint speed]
// A restore's bytes are copied once: the disk's pages into a new host tensor (pread), which
// a CPU variable then takes as its buffer (assign_restored in checkpoint.cc), instead of
// being copied again into the old one. Each 8 MiB piece is checksummed right after it is
// read, while it is in the CPU's cache (CRC32C by the crc32 instruction, three streams at
// once), and before that the next piece is asked of the disk (posix_fadvise WILLNEED), so
// the disk reads while the CPU checksums. A save likewise checksums 8 MiB of a CPU tensor
// and writes it while it is in the cache, and the POSIX file starts the disk's writeback of
// each large piece at once (sync_file_range), so the final fsync finds little left to do.

namespace mt::internal {
namespace {

absl::Status loss(absl::string_view file, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("[checkpoint] ", file, ": ", what));
}

std::string hex32(uint32_t v) { return absl::StrCat("0x", absl::Hex(v, absl::kZeroPad8)); }

// Reads, checks and makes one tensor of the data file.
// A host buffer that grows without zero-filling what the file then overwrites.
class Buffer {
 public:
  char* get(size_t size) {
    if (size > capacity_) {
      data_.reset(new char[size]);
      capacity_ = size;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
};

// Reads a tensor's bytes in 8 MiB pieces, each checksummed while it is in the CPU's cache,
// the disk reading the next piece meanwhile (Note [Checkpoint speed]).
absl::StatusOr<uint32_t> read_and_checksum(const ReadableFile& data, uint64_t offset, uint64_t size,
                                           char* dst) {
  constexpr uint64_t kPiece = 8 << 20;
  uint32_t crc = 0;
  for (uint64_t done = 0; done < size; done += kPiece) {
    uint64_t n = std::min(kPiece, size - done);
    if (absl::Status s = data.read_at(offset + done, n, dst + done); !s.ok()) return s;
    data.will_need(offset + done + n, std::min(kPiece, size - done - n));
    crc = crc32c_extend(crc, dst + done, n);
  }
  return crc;
}

// Reads, checks and makes one tensor of the data file, straight into a new tensor on
// `host` (this process's CPU): read in pieces, each checksummed while it is in the cache.
absl::StatusOr<Tensor> read_tensor(const ReadableFile& data, absl::string_view file,
                                   uint64_t data_start, const SafetensorsTensor& t,
                                   uint32_t expected_crc, Device& host) {
  absl::StatusOr<Shape> shape = Shape::make(t.shape);
  if (!shape.ok()) {
    return loss(file, absl::StrCat("tensor '", t.name, "': ", shape.status().message()));
  }
  absl::StatusOr<TensorImpl*> impl = allocate_tensor(host, t.dtype, *std::move(shape));
  if (!impl.ok()) return impl.status();
  Tensor out(*impl);  // owns the buffer from here on
  char* bytes = static_cast<char*>((*impl)->data);
  absl::StatusOr<uint32_t> crc = read_and_checksum(data, data_start + t.begin, t.bytes(), bytes);
  if (!crc.ok()) return crc.status();
  if (*crc != expected_crc) {
    return loss(file, absl::StrCat("tensor '", t.name, "': checksum mismatch (manifest ",
                                   hex32(expected_crc), ", data ", hex32(*crc), ")"));
  }
  if (t.dtype == DType::kBool) {
    for (const char* c = bytes; c != bytes + t.bytes(); ++c) {
      if (*c != 0 && *c != 1) {
        return loss(file, absl::StrCat("tensor '", t.name, "': a bool that is not 0 or 1"));
      }
    }
  }
  return out;
}

// Returns this process's CPU:0, where restored tensors are made before assignment.
absl::StatusOr<Device*> host_device() {
  absl::StatusOr<Runtime*> rt = Context::get().runtime();
  if (!rt.ok()) return rt.status();
  absl::StatusOr<int> index = (*rt)->find_device("/job:localhost/replica:0/task:0/device:CPU:0");
  if (!index.ok()) return index.status();
  return &(*rt)->device(*index);
}

}  // namespace

namespace {

absl::StatusOr<Manifest> read_manifest(FileSystem& fs, const std::string& prefix) {
  const std::string path = prefix + kManifestSuffix;
  absl::StatusOr<std::string> text = read_whole_file(fs, path);
  if (!text.ok() && absl::IsNotFound(text.status())) {
    return absl::NotFoundError(
        absl::StrCat("[checkpoint] no checkpoint at ", prefix, " (", path, " does not exist)"));
  }
  if (!text.ok()) return text.status();
  return parse_manifest(*text, path);
}

// Checks the data file's size and header against the manifest, and parses the header.
absl::StatusOr<SafetensorsLayout> read_layout(const ReadableFile& file, const std::string& path,
                                              const Manifest& manifest) {
  if (file.size() != manifest.data_bytes) {
    return loss(path, absl::StrCat(file.size(), " bytes, the manifest says ", manifest.data_bytes));
  }
  std::string head(std::min<uint64_t>(8, file.size()), '\0');
  if (absl::Status s = file.read_at(0, head.size(), head.data()); !s.ok()) return s;
  absl::StatusOr<uint64_t> data_start = safetensors_data_start(head, file.size(), path);
  if (!data_start.ok()) return data_start.status();
  head.resize(*data_start);
  if (absl::Status s = file.read_at(8, *data_start - 8, head.data() + 8); !s.ok()) return s;
  if (uint32_t crc = crc32c(head.data(), head.size()); crc != manifest.header_crc32c) {
    return loss(path, absl::StrCat("the header's checksum does not match (manifest ",
                                   hex32(manifest.header_crc32c), ", data ", hex32(crc), ")"));
  }
  return parse_safetensors(head, file.size(), path);
}

}  // namespace

absl::StatusOr<absl::flat_hash_map<std::string, Tensor>> read_checkpoint(
    FileSystem& fs, const std::string& prefix) {
  absl::StatusOr<Manifest> manifest = read_manifest(fs, prefix);
  if (!manifest.ok()) return manifest.status();
  const std::string path = dir_of(prefix) + "/" + manifest->data_file;
  absl::StatusOr<std::unique_ptr<ReadableFile>> data = fs.open_for_read(path);
  if (!data.ok()) {
    return loss(
        prefix + kManifestSuffix,
        absl::StrCat("its data file ", path, " cannot be opened: ", data.status().message()));
  }
  absl::StatusOr<SafetensorsLayout> layout = read_layout(**data, path, *manifest);
  if (!layout.ok()) return layout.status();
  absl::flat_hash_map<std::string, const SafetensorsTensor*> by_name;
  for (const SafetensorsTensor& t : layout->tensors) by_name[t.name] = &t;
  if (by_name.size() != manifest->tensors.size()) {
    return loss(path, absl::StrCat(by_name.size(), " tensors, the manifest names ",
                                   manifest->tensors.size()));
  }
  absl::StatusOr<Device*> host = host_device();
  if (!host.ok()) return host.status();
  absl::flat_hash_map<std::string, Tensor> out;
  for (const Manifest::Entry& entry : manifest->tensors) {
    auto found = by_name.find(entry.name);
    if (found == by_name.end()) {
      return loss(path, absl::StrCat("tensor '", entry.name, "' of the manifest is missing"));
    }
    absl::StatusOr<Tensor> t =
        read_tensor(**data, path, layout->data_start, *found->second, entry.crc32c, **host);
    if (!t.ok()) return t.status();
    out[entry.name] = *std::move(t);
  }
  return out;
}

}  // namespace mt::internal
