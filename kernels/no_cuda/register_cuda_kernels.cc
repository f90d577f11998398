// Built when the CUDA backend is off: there are no GPU kernels to register.
#include "kernels/kernel_registry.h"

namespace mt {

absl::Status register_cuda_kernels(KernelRegistry&) { return absl::OkStatus(); }

}  // namespace mt
