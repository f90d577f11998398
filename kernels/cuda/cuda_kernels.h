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
#include "kernels/shape_fns.h"
#include "kernels/type_list.h"

namespace mt::cuda {

// Returns the dtypes the GPU implements for `op`: what the op accepts (op_dtypes), except
// integer MatMul and BatchMatMulV2 (no cuBLAS kernel), which fall back to the CPU.
constexpr DTypeSet gpu_dtypes(OpId op) {
  if (op == OpId::kMatMul || op == OpId::kBatchMatMulV2) return kFloatDTypes;
  return op_dtypes(op);
}

// Registers make(DTypeTag<T>{}) as the GPU kernel of `op` for every T in the list, which
// must be exactly gpu_dtypes(op) (checked).
template <typename... Ts, typename Make>
absl::Status add_gpu_kernels(KernelRegistry& registry, OpId op, TypeList<Ts...>, Make make) {
  MT_CHECK(((dtype_bit(dtype_of<Ts>()) | ...)) == gpu_dtypes(op));
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

// One registration function per op family (one .cu file each).
absl::Status register_data_kernels(KernelRegistry& registry);
absl::Status register_cast_kernels(KernelRegistry& registry);
absl::Status register_matmul_kernels(KernelRegistry& registry);
absl::Status register_add_n_kernels(KernelRegistry& registry);
absl::Status register_binary_kernels(KernelRegistry& registry);
absl::Status register_unary_kernels(KernelRegistry& registry);
absl::Status register_reduction_kernels(KernelRegistry& registry);
// The array ops: array_kernels.cu registers its own and calls register_combine_kernels
// (combine_kernels.cu) for ConcatV2, Pack, SplitV, GatherV2 and OneHot.
absl::Status register_array_kernels(KernelRegistry& registry);
absl::Status register_combine_kernels(KernelRegistry& registry);
absl::Status register_random_kernels(KernelRegistry& registry);
absl::Status register_nn_kernels(KernelRegistry& registry);
absl::Status register_select_kernels(KernelRegistry& registry);  // SelectV2
absl::Status register_arg_kernels(KernelRegistry& registry);     // ArgMax, ArgMin
// SparseSoftmaxCrossEntropyWithLogits (BiasAdd is registered with the binary ops).
absl::Status register_xent_kernels(KernelRegistry& registry);
absl::Status register_segment_kernels(KernelRegistry& registry);    // UnsortedSegmentSum
absl::Status register_optimizer_kernels(KernelRegistry& registry);  // ResourceApplyAdam

}  // namespace mt::cuda
