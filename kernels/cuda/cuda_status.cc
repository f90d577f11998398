// The status helpers of kernels/cuda/: one message format for every failed CUDA call.
#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_kernels.h"

namespace mt::cuda {

absl::Status cuda_status(OpId op, const char* call, cudaError_t error) {
  if (__builtin_expect(error == cudaSuccess, 1)) return absl::OkStatus();
  std::string message =
      absl::StrCat("[", op_name(op), "] ", call, " failed: ", cudaGetErrorString(error));
  if (error == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

absl::Status check_launch(OpId op) {
  return cuda_status(op, "cudaLaunchKernel", cudaGetLastError());
}

absl::Status cublas_status(OpId op, const char* call, cublasStatus_t status) {
  if (__builtin_expect(status == CUBLAS_STATUS_SUCCESS, 1)) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("[", op_name(op), "] ", call, " failed: ", cublasGetStatusString(status)));
}

}  // namespace mt::cuda
