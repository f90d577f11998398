// Logical CPU devices: kernels run inline on the calling thread, so every copy is a memcpy
// and there is never anything to wait for.
#include <cstring>

#include "core/status.h"
#include "runtime/eager/device.h"

namespace mt::internal {
namespace {

class CpuDevice final : public Device {
 public:
  using Device::Device;

  absl::Status copy_from_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  absl::Status copy_to_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  absl::StatusOr<PendingUse> copy_from_device(void* dst, Device& from, const void* src,
                                              size_t bytes) override {
    // The source may live on a GPU: let its device copy it to host memory, which is ours.
    MT_RETURN_IF_ERROR(from.copy_to_host(dst, src, bytes));
    return PendingUse{};
  }
  absl::Status synchronize() override { return absl::OkStatus(); }
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(int id, std::string name,
                                        std::unique_ptr<Allocator> allocator) {
  return std::make_unique<CpuDevice>(DeviceType::kCPU, id, std::move(name), std::move(allocator));
}

}  // namespace mt::internal
