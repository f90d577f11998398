#pragma once
// The safetensors file format (Hugging Face's): an 8-byte little-endian header length N, a
// JSON header of N bytes (name -> {"dtype", "shape", "data_offsets": [begin, end]}, and an
// optional "__metadata__" of string -> string), then the tensors' bytes, row-major, back to
// back with no hole or overlap. Offsets count from the end of the header; the header is
// padded with spaces so that the data starts 8-aligned.
//
//   std::vector<SafetensorsTensor> tensors = {{"w", DType::kFloat32, {2, 3}}};
//   std::string head = encode_safetensors_header(tensors, {});  // fills begin/end
//   ... write head, then each tensor's bytes in order ...
//   absl::StatusOr<SafetensorsLayout> layout = parse_safetensors(file_bytes_head, size, path);
//
// The reader checks everything a malformed or hostile file could break: the length against
// the file, the JSON, every dtype, shape (no overflow) and offset pair, and that the ranges
// tile the data exactly; every failure is DataLoss naming the file (and the tensor), except
// a dtype safetensors knows but minitensor does not hold, which is Unimplemented.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"

namespace mt::internal {

struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // the byte range in the data section
  uint64_t end = 0;

  uint64_t bytes() const { return end - begin; }
};

using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

struct SafetensorsLayout {
  std::vector<SafetensorsTensor> tensors;  // in data order
  SafetensorsMetadata metadata;
  uint64_t data_start = 0;  // 8 + the header length
};

// The largest header a reader accepts, as safetensors' own (100 MB).
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

// Returns safetensors' name of `dtype` ("F32", "BF16", ...).
const char* safetensors_dtype_name(DType dtype);

// Lays `tensors` out back to back in their order (setting begin and end from their dtypes
// and shapes) and returns the file's first bytes: the length, then the padded header.
std::string encode_safetensors_header(std::vector<SafetensorsTensor>& tensors,
                                      const SafetensorsMetadata& metadata);

// Reads the header length from the first 8 bytes of a file of `file_size` bytes and checks
// it against the file; returns data_start (8 + the length).
absl::StatusOr<uint64_t> safetensors_data_start(absl::string_view first_bytes, uint64_t file_size,
                                                absl::string_view file);

// Parses and checks the header of a file of `file_size` bytes, given its first
// `data_start` bytes (from safetensors_data_start). `file` names it in errors.
absl::StatusOr<SafetensorsLayout> parse_safetensors(absl::string_view head, uint64_t file_size,
                                                    absl::string_view file);

}  // namespace mt::internal
