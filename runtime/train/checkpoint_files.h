#pragma once
// The files of one checkpoint and the two functions that write and read them whole
// (docs/checkpoints.md). Checkpoint `prefix` is
//   <prefix>.safetensors   every tensor, in the safetensors format (safetensors.h)
//   <prefix>.manifest      JSON: the data file's name and size, the CRC32C of its header and
//                          of each tensor; then a line "crc32c <hex>" of the JSON itself
// and exists exactly when the manifest does: it is written last (Note [Checkpoint commit]).
//
//   write_checkpoint(posix_file_system(), "/ckpt/ckpt-3", {{"model/w", w.read_value()}});
//   auto tensors = read_checkpoint(posix_file_system(), "/ckpt/ckpt-3");   // name -> Tensor
//
// read_checkpoint checks everything before it returns any tensor: NotFound when there is no
// manifest, DataLoss naming the file (and tensor) for a missing data file, a size,
// header, offset or checksum that does not match, Unimplemented for a dtype minitensor
// does not hold. Neither function is safe to call for one prefix from two threads at once.

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "runtime/eager/tensor.h"
#include "runtime/train/checkpoint_file_system.h"
#include "runtime/train/variable.h"

namespace mt::internal {

struct NamedTensor {
  std::string name;
  Tensor value;
};

inline constexpr char kManifestSuffix[] = ".manifest";
inline constexpr char kDataSuffix[] = ".safetensors";

// Writes `tensors` as checkpoint `prefix`, replacing one there (which stops existing first).
absl::Status write_checkpoint(FileSystem& fs, const std::string& prefix,
                              const std::vector<NamedTensor>& tensors);

// Reads and checks checkpoint `prefix` whole; its tensors are made on the CPU (CPU:0).
absl::StatusOr<absl::flat_hash_map<std::string, Tensor>> read_checkpoint(FileSystem& fs,
                                                                         const std::string& prefix);

// Assigns a tensor read_checkpoint made to `variable` (same dtype and shape): a plain
// variable on the CPU takes the tensor's buffer as its own, without a copy (Note [Checkpoint
// speed] in checkpoint_reader.cc); any other variable assigns it.
void assign_restored(Variable variable, const Tensor& value);

// Removes checkpoint `prefix`: the manifest first, so that a crash leaves it absent.
absl::Status remove_checkpoint(FileSystem& fs, const std::string& prefix);

// A manifest's contents. parse_manifest checks its text (for read_checkpoint and the
// fuzzer): DataLoss naming `file` when the text or its checksum is broken.
struct Manifest {
  std::string data_file;  // a name in the manifest's folder
  uint64_t data_bytes = 0;
  uint32_t header_crc32c = 0;
  struct Entry {
    std::string name;
    uint32_t crc32c = 0;
  };
  std::vector<Entry> tensors;
};
absl::StatusOr<Manifest> parse_manifest(absl::string_view text, absl::string_view file);
// Returns the manifest's text: the JSON, then its checksum line.
std::string encode_manifest(const Manifest& manifest);

}  // namespace mt::internal
