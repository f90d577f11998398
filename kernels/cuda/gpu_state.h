#pragma once
// GpuState: what a CUDA kernel receives as KernelContext::device_state. The runtime's GPU
// device (runtime/cuda/) owns one per logical GPU; kernels only read it.
//
// Every kernel enqueues its work on `stream` and returns at once; it never synchronises.
// A launch error is reported from the kernel (cudaGetLastError after the launch) as an
// Internal status naming the call.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/mutex.h"

namespace mt::cuda {

struct IndexFault;  // kernels/cuda/index_fault.h
class CudnnState;   // kernels/cuda/cudnn/cudnn_conv.h

// The cuBLAS handle's lock and the math mode last set on it. cuBLAS forbids using one
// handle from two host threads at once, and ops on one device may come from any thread.
struct BlasLock {
  internal::Mutex mu;
  cublasMath_t math_mode ABSL_GUARDED_BY(mu) = CUBLAS_DEFAULT_MATH;
};

struct GpuState {
  int physical_device = 0;          // the CUDA ordinal (current device during kernel calls)
  cudaStream_t stream = nullptr;    // the logical device's non-blocking stream
  cublasHandle_t cublas = nullptr;  // bound to `stream`; use it under *blas
  BlasLock* blas = nullptr;
  int num_sms = 0;  // multiprocessor count, for grid sizing
  // Device memory that kernels use for temporaries within one op (reduction partials). Ops
  // on `stream` run one after another, but ops come from any host thread: an op that
  // enqueues more than one kernel over the scratch (a two-pass reduction) holds
  // *scratch_mu from its first launch to its last, and so does every op that writes the
  // scratch, so that no other op's kernel lands between them (Note [Scratch between
  // launches] in reduction_kernels.cu). 1 MiB covers every kernel in kernels/cuda/ on GPUs
  // of up to about 500 SMs; with less (or none), large reductions to few outputs run
  // correctly but on fewer blocks, hence slower.
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
  internal::Mutex* scratch_mu = nullptr;  // set whenever scratch is
  // A counter in device memory that is zero between kernels: the one-pass reductions take
  // tickets from it and the last block puts it back to zero (Note [One-pass full reduction]
  // in reduce_all.h). Null when the device has no scratch; those reductions then take two
  // passes.
  unsigned* reduce_tickets = nullptr;
  // Where a kernel reports an index out of range (Note [GPU index faults] in
  // index_fault.h): the logical device's record in mapped pinned host memory (its device
  // address), and the claim word in device memory beside reduce_tickets. Null: kernels
  // write zeros for a bad index and report nothing.
  IndexFault* index_fault = nullptr;
  unsigned long long* index_fault_claim = nullptr;
  // cuDNN on `stream`, loaded at the first convolution (Note [When cuDNN runs a convolution]
  // in kernels/cuda/cudnn/cudnn_conv.cc). Null: convolutions run the direct kernels.
  CudnnState* cudnn = nullptr;
};

// The scratch each logical GPU allocates, and the zeroed bytes after it that hold
// reduce_tickets (at 0) and index_fault_claim (at kFaultClaimOffset).
inline constexpr size_t kScratchBytes = size_t{1} << 20;
inline constexpr size_t kTicketBytes = 256;
inline constexpr size_t kFaultClaimOffset = 128;

}  // namespace mt::cuda
