#pragma once
// cuDNN's entry points, loaded at run time (internal to kernels/cuda/cudnn/). The runtime
// opens `libcudnn.so.9` (or the file MT_CUDNN_LIBRARY names) with dlopen on the first
// convolution; cuDNN 9's front library exports every legacy call and loads its engines
// itself. The types are cudnn.h's, which a build with this folder has.

#include <cudnn.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mt::cuda {

struct CudnnLibrary {
  size_t version = 0;  // cudnnGetVersion: 91900 is 9.19.0
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) set_tensor_4d = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) set_filter_4d = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_conv = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) set_conv_2d = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_math_type = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) forward_algorithms = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) backward_data_algorithms = nullptr;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) backward_filter_algorithms = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;
  decltype(&cudnnConvolutionBackwardData) backward_data = nullptr;
  decltype(&cudnnConvolutionBackwardFilter) backward_filter = nullptr;

  // Returns OK, or `call`'s failure with cuDNN's message (Internal; ResourceExhausted for
  // CUDNN_STATUS_ALLOC_FAILED).
  absl::Status check(const char* call, cudnnStatus_t status) const;
};

// Returns cuDNN, loading it on the first call (once per process). FailedPrecondition naming
// the file and dlopen's or dlsym's message when it cannot be loaded, or when it is older
// than 9.0.
absl::StatusOr<const CudnnLibrary*> cudnn_library();

// Returns cuDNN if an earlier call loaded it, else null; never loads.
const CudnnLibrary* loaded_cudnn_library();

}  // namespace mt::cuda
