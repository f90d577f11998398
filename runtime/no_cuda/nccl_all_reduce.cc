// A build without CUDA has no NCCL: MirroredStrategy reduces to one device instead.
#include "runtime/strategy/cross_device_ops.h"

namespace mt::internal {

absl::StatusOr<std::unique_ptr<CrossDeviceOps>> make_nccl_all_reduce(const std::vector<Device*>&,
                                                                     int64_t) {
  return absl::UnimplementedError("this build of minitensor has no CUDA backend, so no NCCL");
}

}  // namespace mt::internal
