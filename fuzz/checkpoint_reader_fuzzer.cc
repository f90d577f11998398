// Fuzzes the checkpoint reader's parsers with hostile bytes: the first byte picks the
// safetensors header parser (runtime/train/safetensors.h) or the manifest parser
// (runtime/train/checkpoint_files.h). Each input parses or fails with DataLoss (or
// Unimplemented for a dtype minitensor does not hold) and a message naming the file; a
// parsed header's tensors tile the data exactly and survive a write-and-read round trip;
// a parsed manifest encodes back to text that parses to the same contents.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/safetensors.h"

namespace {

using namespace mt::internal;  // NOLINT: the fuzzer names many of the reader's functions

void check_error(const absl::Status& s, bool unimplemented_allowed) {
  FUZZ_CHECK_MSG(s.code() == absl::StatusCode::kDataLoss ||
                     (unimplemented_allowed && s.code() == absl::StatusCode::kUnimplemented),
                 s.ToString());
  FUZZ_CHECK_MSG(s.message().find(" f: ") != absl::string_view::npos, s.ToString());
}

void fuzz_header(const std::string& file) {
  absl::StatusOr<SafetensorsLayout> layout = parse_safetensors(file, file.size(), "f");
  if (!layout.ok()) return check_error(layout.status(), true);
  uint64_t at = 0;
  for (const SafetensorsTensor& t : layout->tensors) {
    FUZZ_CHECK(t.begin == at && t.end >= t.begin);
    uint64_t bytes = mt::dtype_size(t.dtype);
    for (int64_t d : t.shape) bytes *= static_cast<uint64_t>(d);
    FUZZ_CHECK(bytes == t.bytes());
    at = t.end;
  }
  FUZZ_CHECK(at == file.size() - layout->data_start);
  std::vector<SafetensorsTensor> again = layout->tensors;
  std::string head = encode_safetensors_header(again, layout->metadata);
  std::string rewritten = head + file.substr(layout->data_start);
  absl::StatusOr<SafetensorsLayout> reread = parse_safetensors(rewritten, rewritten.size(), "f");
  FUZZ_CHECK_MSG(reread.ok(), reread.status().ToString());
  FUZZ_CHECK(reread->tensors.size() == layout->tensors.size());
  for (size_t i = 0; i < again.size(); ++i) {
    FUZZ_CHECK(reread->tensors[i].name == again[i].name);
    FUZZ_CHECK(reread->tensors[i].shape == again[i].shape);
    FUZZ_CHECK(reread->tensors[i].begin == again[i].begin);
  }
  FUZZ_CHECK(reread->metadata == layout->metadata);
}

void fuzz_manifest(const std::string& text) {
  absl::StatusOr<Manifest> manifest = parse_manifest(text, "f");
  if (!manifest.ok()) return check_error(manifest.status(), false);
  absl::StatusOr<Manifest> again = parse_manifest(encode_manifest(*manifest), "f");
  FUZZ_CHECK_MSG(again.ok(), again.status().ToString());
  FUZZ_CHECK(again->data_file == manifest->data_file);
  FUZZ_CHECK(again->data_bytes == manifest->data_bytes);
  FUZZ_CHECK(again->header_crc32c == manifest->header_crc32c);
  FUZZ_CHECK(again->tensors.size() == manifest->tensors.size());
  for (size_t i = 0; i < again->tensors.size(); ++i) {
    FUZZ_CHECK(again->tensors[i].name == manifest->tensors[i].name);
    FUZZ_CHECK(again->tensors[i].crc32c == manifest->tensors[i].crc32c);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    fuzz_manifest(rest);
  } else {
    fuzz_header(rest);
  }
  return 0;
}
