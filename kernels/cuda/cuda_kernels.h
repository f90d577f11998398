#pragma once
// Internal to kernels/cuda/: the registration function of each GPU op family, the helper
// that registers one kernel template for a list of element types, and the status helpers
// every CUDA and cuBLAS call goes through.
//
//   MT_RETURN_IF_ERROR(cuda_status(OpId::kIdentity, "cudaMemcpyAsync",
//                                  cudaMemcpyAsync(dst, src, bytes, kind, state.stream)));
//   return add_gpu_kernels(registry, OpId::kNeg, NumericTypes{}, [](auto tag) -> KernelFn {
//     return &run_unary<NegFn, typename decltype(tag)::type>;
//   });

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "absl/status/status.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/status.h"
#include "kernels/cuda/gpu_state.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernels.h"
#include "kernels/shape_fns.h"
#include "kernels/type_list.h"

namespace mt::cuda {

// Registers make(DTypeTag<T>{}) as the GPU kernel of `op` for every T in the list, which
// must be exactly op_gpu_dtypes(op) (checked).
template <typename... Ts, typename Make>
absl::Status add_gpu_kernels(KernelRegistry& registry, OpId op, TypeList<Ts...>, Make make) {
  MT_CHECK(((dtype_bit(dtype_of<Ts>()) | ...)) == op_gpu_dtypes(op));
  const struct {
    DType dtype;
    KernelFn fn;
  } entries[] = {{dtype_of<Ts>(), make(DTypeTag<Ts>{})}...};
  for (const auto& entry : entries) {
    MT_RETURN_IF_ERROR(registry.add(op, DeviceType::kGPU, entry.dtype, entry.fn));
  }
  return absl::OkStatus();
}

// Returns the GpuState of the op's device.
inline const GpuState& gpu_state(const KernelContext& ctx) {
  MT_CHECK(ctx.device_state != nullptr);
  return *static_cast<const GpuState*>(ctx.device_state);
}

// Returns OK for cudaSuccess, else "[<op>] <call> failed: <cudaGetErrorString>": Internal,
// or ResourceExhausted for cudaErrorMemoryAllocation.
absl::Status cuda_status(OpId op, const char* call, cudaError_t error);

// Checks the launch just made with <<<>>> (cudaGetLastError), naming cudaLaunchKernel.
absl::Status check_launch(OpId op);

// Returns OK for CUBLAS_STATUS_SUCCESS, else Internal "[<op>] <call> failed: <status>".
absl::Status cublas_status(OpId op, const char* call, cublasStatus_t status);

// The GPU kernels of each row, defined by its family's file (Note [Registering kernels] in
// kernels/op_kernels.h).
template <OpId kOp>
absl::Status add_op_kernels(KernelRegistry& registry);
MT_OP_TABLE(MT_DECLARE_OP_KERNELS)

}  // namespace mt::cuda
