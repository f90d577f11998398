#pragma once
// Conv2D and its two backprops through cuDNN (internal to kernels/cuda/ and runtime/cuda/).
// cuDNN is optional, as NCCL is: it is opened with dlopen at the first convolution
// (`libcudnn.so.9`, or the file MT_CUDNN_LIBRARY names; cudnn_library.h), a build needs only
// its headers (without them kernels/cuda/no_cudnn/ compiles instead), and wherever cuDNN
// cannot take a call the direct kernels of conv_kernels.cu run it (Note [When cuDNN runs a
// convolution] in cudnn_conv.cc).
//
// One CudnnState per stream that kernels enqueue on (a logical GPU's, and its graph
// captures'): the cuDNN handle bound to that stream, the workspace and the plans (the
// descriptors and the algorithm cuDNN's heuristics chose) cached per shape.

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "kernels/conv_geometry.h"

namespace mt::cuda {

struct GpuState;
class CudnnState;
struct CudnnStateDeleter {
  void operator()(CudnnState* state) const;
};
using CudnnStatePtr = std::unique_ptr<CudnnState, CudnnStateDeleter>;

// The most workspace one convolution takes (its filter in cuDNN's layout included), eager or
// in a graph capture alike, so that both choose the same algorithm and a replay gives what
// the eager run gives, bit for bit.
inline constexpr size_t kCudnnWorkspaceBytes = size_t{32} << 20;

// Returns a state for kernels enqueued on `stream` of CUDA device `physical_device`. With a
// `workspace` (of at least kCudnnWorkspaceBytes), cuDNN works in that fixed buffer (a graph
// capture's, where nothing may be allocated); without, the state allocates its own as
// shapes need, up to kCudnnWorkspaceBytes (outside the pool, within the reserve of Note
// [Default GPU pool size]). Nothing is loaded yet.
CudnnStatePtr make_cudnn_state(int physical_device, cudaStream_t stream, void* workspace = nullptr);

// Creates `state`'s cuDNN handle now if this process has loaded cuDNN already: a graph
// capture calls it before capturing, where creating one is not allowed. Loads nothing.
void prepare_cudnn_state(CudnnState* state);

enum class ConvPass { kForward, kBackwardInput, kBackwardFilter };

// Enqueues one pass of the convolution of geometry `g` through cuDNN on `state`'s stream:
//   kForward:        a = input,  b = filter (HWIO), out = output
//   kBackwardInput:  a = filter, b = out_backprop,  out = input gradient
//   kBackwardFilter: a = input,  b = out_backprop,  out = filter gradient (HWIO)
// Returns true when it did; false, having enqueued nothing, when cuDNN cannot take the call
// (not loaded or switched off, padding it cannot express, no algorithm within the
// workspace), for the caller's own kernel; an error when a cuDNN call failed.
absl::StatusOr<bool> cudnn_conv(ConvPass pass, const GpuState& state,
                                const internal::ConvGeometry& g, DType dtype, const void* a,
                                const void* b, void* out);

// Whether convolutions may use cuDNN: on unless MT_CUDNN=0 is set (tests switch it to run
// the direct kernels on the same shapes).
bool cudnn_enabled();
void set_cudnn_enabled(bool enable);

// The algorithm cuDNN's heuristics chose for the last plan made for a pass, or -1 (for
// benchmarks that time raw cuDNN with the same algorithm).
int last_cudnn_algorithm(ConvPass pass);

}  // namespace mt::cuda
