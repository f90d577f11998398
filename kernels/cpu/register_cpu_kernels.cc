// register_cpu_kernels: the one place that lists the CPU op families.
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel_registry.h"

namespace mt {

absl::Status register_cpu_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR(cpu::register_data_kernels(registry));
  MT_RETURN_IF_ERROR(cpu::register_matmul_kernels(registry));
  MT_RETURN_IF_ERROR(cpu::register_add_n_kernels(registry));
  MT_RETURN_IF_ERROR(cpu::register_binary_kernels(registry));
  MT_RETURN_IF_ERROR(cpu::register_unary_kernels(registry));
  MT_RETURN_IF_ERROR(cpu::register_reduction_kernels(registry));
  return absl::OkStatus();
}

}  // namespace mt
