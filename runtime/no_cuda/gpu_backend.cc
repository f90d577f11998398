// Built when the CUDA backend is off: the machine has no GPU as far as minitensor knows.
#include "runtime/eager/gpu_backend.h"

namespace mt::internal {

std::vector<GpuInfo> discover_gpus() { return {}; }

absl::StatusOr<std::unique_ptr<Device>> make_gpu_device(const GpuDeviceOptions&) {
  return absl::FailedPreconditionError("minitensor was built without CUDA");
}

}  // namespace mt::internal
