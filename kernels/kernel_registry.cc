#include "kernels/kernel_registry.h"

#include "absl/strings/str_cat.h"

namespace mt {

absl::Status KernelRegistry::add(OpId op, DeviceType device, DType dtype, KernelFn fn) {
  KernelFn& slot = table_[static_cast<int>(op)][static_cast<int>(device)][static_cast<int>(dtype)];
  if (slot != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat("[", op_name(op), "] a ", device_type_name(device),
                                                 " kernel for ", dtype_name(dtype),
                                                 " is already registered"));
  }
  slot = fn;
  return absl::OkStatus();
}

}  // namespace mt
