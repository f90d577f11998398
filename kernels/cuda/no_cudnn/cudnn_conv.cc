// cudnn_conv.h for a build whose CUDA toolkit has no cudnn.h: cuDNN never takes a
// convolution, and the direct kernels of conv_kernels.cu run every one.
#include "kernels/cuda/cudnn/cudnn_conv.h"

#include <atomic>

namespace mt::cuda {

class CudnnState {};

void CudnnStateDeleter::operator()(CudnnState* state) const { delete state; }

CudnnStatePtr make_cudnn_state(int, cudaStream_t, void*) { return CudnnStatePtr(new CudnnState); }

void prepare_cudnn_state(CudnnState*) {}

absl::StatusOr<bool> cudnn_conv(ConvPass, const GpuState&, const internal::ConvGeometry&, DType,
                                const void*, const void*, void*) {
  return false;
}

bool cudnn_enabled() { return false; }
void set_cudnn_enabled(bool) {}
int last_cudnn_algorithm(ConvPass) { return -1; }

}  // namespace mt::cuda
