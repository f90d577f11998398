// register_cuda_kernels: every row's GPU kernels (Note [Registering kernels] in
// kernels/op_kernels.h).
#include "core/status.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/kernel_registry.h"

namespace mt {

absl::Status register_cuda_kernels(KernelRegistry& registry) {
  using cuda::add_op_kernels;
  MT_OP_TABLE(MT_ADD_OP_KERNELS)
  return absl::OkStatus();
}

}  // namespace mt
