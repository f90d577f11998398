// The checkpoint manifest: encode_manifest and parse_manifest (checkpoint_files.h).
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/crc32c.h"
#include "runtime/train/json_value.h"

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

std::string hex32(uint32_t value) {
  char buf[9];
  std::snprintf(buf, sizeof(buf), "%08x", value);
  return buf;
}

}  // namespace

std::string encode_manifest(const Manifest& manifest) {
  std::string json = "{\"format\":\"minitensor.checkpoint\",\"version\":1,\"data_file\":";
  append_json_quoted(json, manifest.data_file);
  absl::StrAppend(&json, ",\"data_bytes\":", manifest.data_bytes,
                  ",\"header_crc32c\":", manifest.header_crc32c, ",\"tensors\":[");
  for (size_t i = 0; i < manifest.tensors.size(); ++i) {
    json += i ? ",\n{\"name\":" : "\n{\"name\":";
    append_json_quoted(json, manifest.tensors[i].name);
    absl::StrAppend(&json, ",\"crc32c\":", manifest.tensors[i].crc32c, "}");
  }
  json += "]}\n";
  return absl::StrCat(json, "crc32c ", hex32(crc32c(json.data(), json.size())), "\n");
}

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
    return loss(file, absl::StrCat("the manifest's checksum does not match (stored ", "0x",
                                   hex32(stored), ", computed 0x", hex32(computed), ")"));
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

}  // namespace mt::internal
