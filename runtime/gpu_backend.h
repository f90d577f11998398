#pragma once
// The runtime's view of the CUDA backend (internal). runtime/cuda/ implements it over
// cudart; runtime/no_cuda/ reports no GPU, so the rest of the runtime carries no #ifdef.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device.h"

namespace mt::internal {

// One physical GPU in CUDA's visible order (CUDA_VISIBLE_DEVICES applies).
struct GpuInfo {
  int physical_id = 0;
  std::string name;          // "NVIDIA H200"
  int64_t total_memory = 0;  // bytes
  int cc_major = 0;
  int cc_minor = 0;
};

// Lists the GPUs. No GPU or no driver gives an empty list and one informational line on
// stderr, never an error.
std::vector<GpuInfo> discover_gpus();

struct GpuDeviceOptions {
  int logical_id = 0;  // GPU:<logical_id>
  int physical_id = 0;
  std::string name;                    // canonical device name
  std::optional<int64_t> limit_bytes;  // unset: the card's free memory minus a reserve
  bool allow_growth = false;
};

// Creates a logical GPU: its pool, stream and cuBLAS handle.
absl::StatusOr<std::unique_ptr<Device>> make_gpu_device(const GpuDeviceOptions& options);

}  // namespace mt::internal
