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
// A restore that knows the variables which will take the tensors passes their devices
// (RestorePlacement): each tensor is then made where its variable lives, and a GPU's is read
// through small host buffers straight into device memory (Note [Restoring onto devices] in
// checkpoint_reader.cc), so that a restore neither holds the model twice in host memory nor
// grows the CPU's pinned pool by the model's size.
//
// read_checkpoint checks everything before it returns any tensor: NotFound when there is no
// manifest, DataLoss naming the file (and tensor) for a missing data file, a size,
// header, offset or checksum that does not match, Unimplemented for a dtype minitensor
// does not hold. Neither function is safe to call for one prefix from two threads at once.

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/eager/tensor.h"
#include "runtime/train/checkpoint_file_system.h"
#include "runtime/train/variable.h"

namespace mt::internal {

class Device;

struct NamedTensor {
  std::string name;
  Tensor value;
};

inline constexpr char kManifestSuffix[] = ".manifest";
inline constexpr char kDataSuffix[] = ".safetensors";

// Writes `tensors` as checkpoint `prefix`, replacing one there (which stops existing first).
absl::Status write_checkpoint(FileSystem& fs, const std::string& prefix,
                              const std::vector<NamedTensor>& tensors);

// Where read_checkpoint makes each tensor: the device of the variable that will take it.
// A name not added falls back to its part before the last '/' (an optimizer's slot
// "<optimizer>/slots/<variable>/<i>" to "<optimizer>/slots/<variable>"), then to CPU:0.
class RestorePlacement {
 public:
  // Records that `name` goes to `variable`'s device (nothing for a variable without one
  // value, such as a mirrored variable).
  void add(std::string name, const Variable& variable);
  // Returns the device recorded for `name` or its fallback, or nullptr (CPU:0).
  Device* find(absl::string_view name) const;

 private:
  absl::flat_hash_map<std::string, Device*> devices_;
};

// Reads and checks checkpoint `prefix` whole; its tensors are made on the devices
// `placement` gives (on CPU:0 without one, and always for bools and remote devices).
absl::StatusOr<absl::flat_hash_map<std::string, Tensor>> read_checkpoint(
    FileSystem& fs, const std::string& prefix, const RestorePlacement* placement = nullptr);

// Assigns a tensor read_checkpoint made to `variable` (same dtype and shape): a plain
// variable on the tensor's device takes the tensor's buffer as its own, without a copy (Note
// [Checkpoint speed] in checkpoint_reader.cc); any other variable assigns it.
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
