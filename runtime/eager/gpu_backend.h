#pragma once
// The runtime's view of the CUDA backend (internal). runtime/cuda/ implements it over
// cudart; runtime/no_cuda/ reports no GPU, so the rest of the runtime carries no #ifdef.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/eager/device.h"

namespace mt::internal {

// One physical GPU in CUDA's visible order (CUDA_VISIBLE_DEVICES applies).
struct GpuInfo {
  int physical_id = 0;
  std::string name;          // "NVIDIA H200"
  int64_t total_memory = 0;  // bytes
  int cc_major = 0;
  int cc_minor = 0;
};

// Lists the GPUs. No GPU or no driver gives an empty list, never an error, and the first
// time in the process one line on stderr (no_gpu_message).
std::vector<GpuInfo> discover_gpus();

// Returns the line discover_gpus prints when it finds no GPU (CUDA builds only):
// `driver_version` as cudaDriverGetVersion reports it (0: no driver installed), `error`
// cudaGetDeviceCount's failure or nullptr when it found no device.
std::string no_gpu_message(int driver_version, const char* error);

struct GpuDeviceOptions {
  int logical_id = 0;  // GPU:<logical_id>
  int physical_id = 0;
  std::string name;                    // canonical device name
  std::optional<int64_t> limit_bytes;  // unset: the card's free memory minus a reserve
  bool allow_growth = false;
};

// Creates a logical GPU: its pool, stream and cuBLAS handle. Fails with ResourceExhausted
// naming the device and the card's free bytes when the card (filled by another process,
// say) has too little memory for them (Note [A card filled by another process]).
absl::StatusOr<std::unique_ptr<Device>> make_gpu_device(const GpuDeviceOptions& options);

}  // namespace mt::internal
