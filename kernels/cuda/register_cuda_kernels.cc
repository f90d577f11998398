// register_cuda_kernels: the one place that lists the GPU op families.
#include "core/status.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/kernel_registry.h"

namespace mt {

absl::Status register_cuda_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR(cuda::register_data_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_cast_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_matmul_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_add_n_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_binary_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_unary_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_reduction_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_array_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_random_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_nn_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_select_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_arg_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_xent_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_segment_kernels(registry));
  MT_RETURN_IF_ERROR(cuda::register_optimizer_kernels(registry));
  return absl::OkStatus();
}

}  // namespace mt
