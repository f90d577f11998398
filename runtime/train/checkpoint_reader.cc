// read_checkpoint and parse_manifest (checkpoint_files.h): every check before any tensor.
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/eager/error.h"
#include "runtime/ops/constant.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/crc32c.h"
#include "runtime/train/json_value.h"
#include "runtime/train/safetensors.h"

namespace mt::internal {
namespace {

absl::Status loss(absl::string_view file, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("[checkpoint] ", file, ": ", what));
}

std::optional<uint32_t> as_uint32(const JsonValue* value) {
  if (value == nullptr) return std::nullopt;
  std::optional<uint64_t> v = value->as_uint64();
  if (!v.has_value() || *v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

absl::Status parse_entries(const JsonValue* tensors, absl::string_view file, Manifest& out) {
  if (tensors == nullptr || tensors->kind != JsonValue::Kind::kArray) {
    return loss(file, "no \"tensors\" list");
  }
  for (const JsonValue& entry : tensors->items) {
    const JsonValue* name = entry.find("name");
    std::optional<uint32_t> crc = as_uint32(entry.find("crc32c"));
    if (name == nullptr || name->kind != JsonValue::Kind::kString || !crc.has_value()) {
      return loss(file, "a tensor entry without a name and crc32c");
    }
    out.tensors.push_back({name->text, *crc});
  }
  return absl::OkStatus();
}

std::string hex32(uint32_t v) { return absl::StrCat("0x", absl::Hex(v, absl::kZeroPad8)); }

// Reads, checks and makes one tensor of the data file.
absl::StatusOr<Tensor> read_tensor(const ReadableFile& data, absl::string_view file,
                                   uint64_t data_start, const SafetensorsTensor& t,
                                   uint32_t expected_crc, std::string& buffer) {
  buffer.resize(t.bytes());
  if (absl::Status s = data.read_at(data_start + t.begin, t.bytes(), buffer.data()); !s.ok())
    return s;
  uint32_t crc = crc32c(buffer.data(), buffer.size());
  if (crc != expected_crc) {
    return loss(file, absl::StrCat("tensor '", t.name, "': checksum mismatch (manifest ",
                                   hex32(expected_crc), ", data ", hex32(crc), ")"));
  }
  if (t.dtype == DType::kBool) {
    for (char c : buffer) {
      if (c != 0 && c != 1) return loss(file, absl::StrCat("tensor '", t.name, "': a bool not 0/1"));
    }
  }
  size_t count = t.bytes() / dtype_size(t.dtype);
  try {
    return make_constant(t.dtype, buffer.data(), count, t.shape);
  } catch (const Error& e) {
    return absl::Status(e.code(), absl::StrCat("[checkpoint] ", file, ": tensor '", t.name,
                                               "': ", e.what()));
  }
}

}  // namespace

absl::StatusOr<Manifest> parse_manifest(absl::string_view text, absl::string_view file) {
  size_t tail = text.rfind("crc32c ");
  uint32_t stored = 0;
  if (tail == absl::string_view::npos || tail == 0 || text[tail - 1] != '\n' ||
      text.size() != tail + 16 || text.back() != '\n' ||
      !absl::SimpleHexAtoi(text.substr(tail + 7, 8), &stored)) {
    return loss(file, "the manifest is cut short (no checksum line)");
  }
  uint32_t computed = crc32c(text.data(), tail);
  if (computed != stored) {
    return loss(file, absl::StrCat("the manifest's checksum does not match (stored ",
                                   hex32(stored), ", computed ", hex32(computed), ")"));
  }
  absl::StatusOr<JsonValue> json = parse_json(text.substr(0, tail));
  if (!json.ok()) return loss(file, json.status().message());
  const JsonValue* format = json->find("format");
  const JsonValue* version = json->find("version");
  if (format == nullptr || format->text != "minitensor.checkpoint" || version == nullptr ||
      version->as_uint64() != 1u) {
    return loss(file, "not a version 1 minitensor checkpoint manifest");
  }
  Manifest out;
  const JsonValue* data_file = json->find("data_file");
  const JsonValue* data_bytes = json->find("data_bytes");
  std::optional<uint32_t> header_crc = as_uint32(json->find("header_crc32c"));
  if (data_file == nullptr || data_file->kind != JsonValue::Kind::kString ||
      data_file->text.empty() || data_file->text.find('/') != std::string::npos ||
      data_bytes == nullptr || !data_bytes->as_uint64() || !header_crc) {
    return loss(file, "no data_file, data_bytes and header_crc32c");
  }
  out.data_file = data_file->text;
  out.data_bytes = *data_bytes->as_uint64();
  out.header_crc32c = *header_crc;
  if (absl::Status s = parse_entries(json->find("tensors"), file, out); !s.ok()) return s;
  return out;
}

absl::StatusOr<absl::flat_hash_map<std::string, Tensor>> read_checkpoint(
    FileSystem& fs, const std::string& prefix) {
  const std::string manifest_path = prefix + kManifestSuffix;
  absl::StatusOr<std::string> text = read_whole_file(fs, manifest_path);
  if (!text.ok() && absl::IsNotFound(text.status())) {
    return absl::NotFoundError(absl::StrCat("[checkpoint] no checkpoint at ", prefix, " (",
                                            manifest_path, " does not exist)"));
  }
  if (!text.ok()) return text.status();
  absl::StatusOr<Manifest> manifest = parse_manifest(*text, manifest_path);
  if (!manifest.ok()) return manifest.status();
  const std::string path = dir_of(prefix) + "/" + manifest->data_file;
  absl::StatusOr<std::unique_ptr<ReadableFile>> data = fs.open_for_read(path);
  if (!data.ok()) {
    return loss(manifest_path, absl::StrCat("its data file ", path, " cannot be opened: ",
                                            data.status().message()));
  }
  const ReadableFile& file = **data;
  if (file.size() != manifest->data_bytes) {
    return loss(path, absl::StrCat(file.size(), " bytes, the manifest says ",
                                   manifest->data_bytes));
  }
  std::string head(std::min<uint64_t>(8, file.size()), '\0');
  if (absl::Status s = file.read_at(0, head.size(), head.data()); !s.ok()) return s;
  absl::StatusOr<uint64_t> data_start = safetensors_data_start(head, file.size(), path);
  if (!data_start.ok()) return data_start.status();
  head.resize(*data_start);
  if (absl::Status s = file.read_at(8, *data_start - 8, head.data() + 8); !s.ok()) return s;
  if (uint32_t crc = crc32c(head.data(), head.size()); crc != manifest->header_crc32c) {
    return loss(path, absl::StrCat("the header's checksum does not match (manifest ",
                                   hex32(manifest->header_crc32c), ", data ", hex32(crc), ")"));
  }
  absl::StatusOr<SafetensorsLayout> layout = parse_safetensors(head, file.size(), path);
  if (!layout.ok()) return layout.status();
  absl::flat_hash_map<std::string, const SafetensorsTensor*> by_name;
  for (const SafetensorsTensor& t : layout->tensors) by_name[t.name] = &t;
  if (by_name.size() != manifest->tensors.size()) {
    return loss(path, absl::StrCat(by_name.size(), " tensors, the manifest names ",
                                   manifest->tensors.size()));
  }
  absl::flat_hash_map<std::string, Tensor> out;
  std::string buffer;
  for (const Manifest::Entry& entry : manifest->tensors) {
    auto found = by_name.find(entry.name);
    if (found == by_name.end()) {
      return loss(path, absl::StrCat("tensor '", entry.name, "' of the manifest is missing"));
    }
    absl::StatusOr<Tensor> t =
        read_tensor(file, path, *data_start, *found->second, entry.crc32c, buffer);
    if (!t.ok()) return t.status();
    out[entry.name] = *std::move(t);
  }
  return out;
}

}  // namespace mt::internal
