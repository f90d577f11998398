// The safetensors header: writing it, and reading it back with every check (safetensors.h).
#include "runtime/train/safetensors.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "runtime/train/json_value.h"

namespace mt::internal {
namespace {

struct DTypeName {
  DType dtype;
  const char* name;
};
// safetensors' names of the dtypes minitensor holds.
constexpr DTypeName kDTypeNames[] = {
    {DType::kFloat32, "F32"}, {DType::kFloat64, "F64"}, {DType::kInt32, "I32"},
    {DType::kInt64, "I64"},   {DType::kBool, "BOOL"},   {DType::kBFloat16, "BF16"},
    {DType::kFloat16, "F16"},
};
// safetensors' names of dtypes minitensor does not hold (Unimplemented, not DataLoss).
constexpr const char* kOtherDTypeNames[] = {"I8",      "I16",     "U8",      "U16",     "U32",
                                            "U64",     "F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3",
                                            "F6_E3M2", "F4",      "C64"};

absl::Status data_loss(absl::string_view file, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("[safetensors] ", file, ": ", what));
}

absl::Status tensor_loss(absl::string_view file, absl::string_view tensor, absl::string_view what) {
  return data_loss(file, absl::StrCat("tensor '", tensor, "': ", what));
}

absl::Status parse_dtype(const JsonValue* value, absl::string_view file, absl::string_view name,
                         DType& out) {
  if (value == nullptr || value->kind != JsonValue::Kind::kString) {
    return tensor_loss(file, name, "no \"dtype\" string");
  }
  for (const DTypeName& d : kDTypeNames) {
    if (value->text == d.name) {
      out = d.dtype;
      return absl::OkStatus();
    }
  }
  for (const char* other : kOtherDTypeNames) {
    if (value->text == other) {
      return absl::UnimplementedError(absl::StrCat("[safetensors] ", file, ": tensor '", name,
                                                   "': minitensor holds no dtype ", other));
    }
  }
  return tensor_loss(file, name, absl::StrCat("unknown dtype '", value->text, "'"));
}

// Reads the shape and returns the tensor's byte count, failing on overflow past `limit`.
absl::Status parse_shape(const JsonValue* value, absl::string_view file, absl::string_view name,
                         DType dtype, uint64_t limit, std::vector<int64_t>& shape,
                         uint64_t& bytes) {
  if (value == nullptr || value->kind != JsonValue::Kind::kArray) {
    return tensor_loss(file, name, "no \"shape\" array");
  }
  if (value->items.size() > 32) return tensor_loss(file, name, "a shape of more than 32 dims");
  for (const JsonValue& dim : value->items) {
    std::optional<uint64_t> d = dim.as_uint64();
    if (!d.has_value() || *d > static_cast<uint64_t>(INT64_MAX)) {
      return tensor_loss(file, name, "a dimension that is not a non-negative integer");
    }
    shape.push_back(static_cast<int64_t>(*d));
  }
  bytes = dtype_size(dtype);
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) bytes = 0;
  for (int64_t d : shape) {
    if (bytes == 0) break;
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) || bytes > limit) {
      return tensor_loss(file, name, "its shape holds more bytes than the file's data");
    }
  }
  return absl::OkStatus();
}

absl::Status parse_tensor(const std::string& name, const JsonValue& entry, absl::string_view file,
                          uint64_t data_size, SafetensorsTensor& out) {
  if (entry.kind != JsonValue::Kind::kObject) return tensor_loss(file, name, "not an object");
  out.name = name;
  if (absl::Status s = parse_dtype(entry.find("dtype"), file, name, out.dtype); !s.ok()) return s;
  uint64_t bytes = 0;
  if (absl::Status s =
          parse_shape(entry.find("shape"), file, name, out.dtype, data_size, out.shape, bytes);
      !s.ok()) {
    return s;
  }
  const JsonValue* offsets = entry.find("data_offsets");
  if (offsets == nullptr || offsets->kind != JsonValue::Kind::kArray ||
      offsets->items.size() != 2 || !offsets->items[0].as_uint64() ||
      !offsets->items[1].as_uint64()) {
    return tensor_loss(file, name, "no \"data_offsets\" pair of integers");
  }
  out.begin = *offsets->items[0].as_uint64();
  out.end = *offsets->items[1].as_uint64();
  if (out.begin > out.end || out.end > data_size) {
    return tensor_loss(file, name,
                       absl::StrCat("data_offsets [", out.begin, ", ", out.end,
                                    "] lie outside the data's ", data_size, " bytes"));
  }
  if (out.end - out.begin != bytes) {
    return tensor_loss(file, name,
                       absl::StrCat("data_offsets [", out.begin, ", ", out.end, "] hold ",
                                    out.end - out.begin, " bytes, its dtype and shape ", bytes));
  }
  return absl::OkStatus();
}

absl::Status parse_metadata(const JsonValue& value, absl::string_view file,
                            SafetensorsMetadata& out) {
  if (value.kind != JsonValue::Kind::kObject) return data_loss(file, "__metadata__ not an object");
  for (size_t i = 0; i < value.names.size(); ++i) {
    const std::string& key = value.names[i];
    const JsonValue& entry = value.items[i];
    if (entry.kind != JsonValue::Kind::kString) {
      return data_loss(file, absl::StrCat("__metadata__ '", key, "' is not a string"));
    }
    out.emplace_back(key, entry.text);
  }
  return absl::OkStatus();
}

// Checks that the tensors' ranges, sorted, tile [0, data_size) with no hole or overlap.
absl::Status check_tiling(std::vector<SafetensorsTensor>& tensors, uint64_t data_size,
                          absl::string_view file) {
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const SafetensorsTensor& t : tensors) {
    if (t.begin < at) return tensor_loss(file, t.name, "its data overlaps another tensor's");
    if (t.begin > at) return tensor_loss(file, t.name, "a hole in the data before it");
    at = t.end;
  }
  if (at != data_size) {
    return data_loss(file,
                     absl::StrCat("the tensors hold ", at, " bytes, the data section ", data_size));
  }
  return absl::OkStatus();
}

}  // namespace

const char* safetensors_dtype_name(DType dtype) {
  for (const DTypeName& d : kDTypeNames) {
    if (d.dtype == dtype) return d.name;
  }
  MT_CHECK(false && "every dtype of the table has a safetensors name");
  return "";
}

std::string encode_safetensors_header(std::vector<SafetensorsTensor>& tensors,
                                      const SafetensorsMetadata& metadata) {
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    for (size_t i = 0; i < metadata.size(); ++i) {
      if (i > 0) json += ',';
      append_json_quoted(json, metadata[i].first);
      json += ':';
      append_json_quoted(json, metadata[i].second);
    }
    json += '}';
  }
  uint64_t at = 0;
  for (SafetensorsTensor& t : tensors) {
    uint64_t bytes = dtype_size(t.dtype);
    for (int64_t d : t.shape) bytes *= static_cast<uint64_t>(d);
    t.begin = at;
    t.end = at += bytes;
    if (json.size() > 1) json += ',';
    append_json_quoted(json, t.name);
    absl::StrAppend(&json, ":{\"dtype\":\"", safetensors_dtype_name(t.dtype), "\",\"shape\":[");
    for (size_t i = 0; i < t.shape.size(); ++i) absl::StrAppend(&json, i ? "," : "", t.shape[i]);
    absl::StrAppend(&json, "],\"data_offsets\":[", t.begin, ",", t.end, "]}");
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');
  uint64_t length = json.size();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((length >> (8 * i)) & 0xFF);
  return out + json;
}

absl::StatusOr<uint64_t> safetensors_data_start(absl::string_view first_bytes, uint64_t file_size,
                                                absl::string_view file) {
  if (file_size < 8 || first_bytes.size() < 8) {
    return data_loss(file, absl::StrCat("the file's ", file_size,
                                        " bytes are shorter than the 8-byte header length"));
  }
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= uint64_t{static_cast<unsigned char>(first_bytes[i])} << (8 * i);
  if (length > kMaxSafetensorsHeader) {
    return data_loss(file, absl::StrCat("a header length of ", length, " bytes (at most ",
                                        kMaxSafetensorsHeader, ")"));
  }
  if (length > file_size - 8) {
    return data_loss(file, absl::StrCat("a header length of ", length,
                                        " bytes past the end of the file's ", file_size));
  }
  return 8 + length;
}

absl::StatusOr<SafetensorsLayout> parse_safetensors(absl::string_view head, uint64_t file_size,
                                                    absl::string_view file) {
  absl::StatusOr<uint64_t> data_start = safetensors_data_start(head, file_size, file);
  if (!data_start.ok()) return data_start.status();
  if (head.size() < *data_start) return data_loss(file, "the header was cut short");
  absl::string_view header = head.substr(8, *data_start - 8);
  if (header.empty() || header[0] != '{') return data_loss(file, "the header is not a JSON object");
  absl::StatusOr<JsonValue> json = parse_json(header);
  if (!json.ok()) return data_loss(file, absl::StrCat("the header: ", json.status().message()));
  if (json->kind != JsonValue::Kind::kObject) return data_loss(file, "the header is not an object");
  SafetensorsLayout layout;
  layout.data_start = *data_start;
  uint64_t data_size = file_size - *data_start;
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < json->names.size(); ++i) {
    const std::string& name = json->names[i];
    const JsonValue& entry = json->items[i];
    if (!names.insert(name).second) return tensor_loss(file, name, "named twice");
    if (name == "__metadata__") {
      if (absl::Status s = parse_metadata(entry, file, layout.metadata); !s.ok()) return s;
      continue;
    }
    SafetensorsTensor& t = layout.tensors.emplace_back();
    if (absl::Status s = parse_tensor(name, entry, file, data_size, t); !s.ok()) return s;
  }
  if (absl::Status s = check_tiling(layout.tensors, data_size, file); !s.ok()) return s;
  return layout;
}

}  // namespace mt::internal
