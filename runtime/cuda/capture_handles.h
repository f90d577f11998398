#pragma once
// Its code: cuda_device.cc and cuda_graph.cc.
// CudaDevice::CaptureHandles (internal): what a graph capture on one GPU enqueues through
// (Note [Graph capture] in cuda_graph.cc): a stream, a cuBLAS handle bound to it with a
// fixed workspace (cuDNN's too), and the kernel state that names them.

#include "core/cuda/cuda_handles.h"
#include "runtime/cuda/cuda_device.h"

namespace mt::internal {

struct CudaDevice::CaptureHandles {
  cuda::Stream stream;
  cuda::CublasHandle cublas;
  cuda::DeviceBuffer workspace;
  cuda::BlasLock blas;
  cuda::CudnnStatePtr cudnn;  // works in `workspace` too: the stream orders the two libraries
  cuda::GpuState state;
};

}  // namespace mt::internal
