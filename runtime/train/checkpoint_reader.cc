// read_checkpoint and parse_manifest (checkpoint_files.h): every check before any tensor.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "runtime/eager/error.h"
#include "runtime/ops/constant.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/crc32c.h"
#include "runtime/train/safetensors.h"

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

// Reads a tensor's bytes in 8 MiB pieces, each checksummed while it is in the cache.
absl::StatusOr<uint32_t> read_and_checksum(const ReadableFile& data, uint64_t offset, uint64_t size,
                                           char* dst) {
  constexpr uint64_t kPiece = 8 << 20;
  uint32_t crc = 0;
  for (uint64_t done = 0; done < size; done += kPiece) {
    uint64_t n = std::min(kPiece, size - done);
    if (absl::Status s = data.read_at(offset + done, n, dst + done); !s.ok()) return s;
    crc = crc32c_extend(crc, dst + done, n);
  }
  return crc;
}

absl::StatusOr<Tensor> read_tensor(const ReadableFile& data, absl::string_view file,
                                   uint64_t data_start, const SafetensorsTensor& t,
                                   uint32_t expected_crc, Buffer& buffer) {
  char* bytes = buffer.get(t.bytes());
  absl::StatusOr<uint32_t> read = read_and_checksum(data, data_start + t.begin, t.bytes(), bytes);
  if (!read.ok()) return read.status();
  uint32_t crc = *read;
  if (crc != expected_crc) {
    return loss(file, absl::StrCat("tensor '", t.name, "': checksum mismatch (manifest ",
                                   hex32(expected_crc), ", data ", hex32(crc), ")"));
  }
  if (t.dtype == DType::kBool) {
    for (const char* c = bytes; c != bytes + t.bytes(); ++c) {
      if (*c != 0 && *c != 1)
        return loss(file, absl::StrCat("tensor '", t.name, "': a bool not 0/1"));
    }
  }
  size_t count = t.bytes() / dtype_size(t.dtype);
  try {
    return make_constant(t.dtype, bytes, count, t.shape);
  } catch (const Error& e) {
    return absl::Status(e.code(),
                        absl::StrCat("[checkpoint] ", file, ": tensor '", t.name, "': ", e.what()));
  }
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
  absl::flat_hash_map<std::string, Tensor> out;
  Buffer buffer;
  for (const Manifest::Entry& entry : manifest->tensors) {
    auto found = by_name.find(entry.name);
    if (found == by_name.end()) {
      return loss(path, absl::StrCat("tensor '", entry.name, "' of the manifest is missing"));
    }
    absl::StatusOr<Tensor> t =
        read_tensor(**data, path, layout->data_start, *found->second, entry.crc32c, buffer);
    if (!t.ok()) return t.status();
    out[entry.name] = *std::move(t);
  }
  return out;
}

}  // namespace mt::internal
