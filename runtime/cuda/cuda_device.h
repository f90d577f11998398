#pragma once
// CudaDevice: one logical GPU (internal). It owns a pool over cudaMalloc, a non-blocking
// stream and a cuBLAS handle bound to it; kernels receive its GpuState.
//
// Note [Stream order]
// Everything that touches this device's memory runs on this device's stream: its kernels,
// copies in from the host, copies out to the host, and copies out to other GPUs (a copy
// to another GPU runs on the source's stream after waiting for the destination's stream,
// and the destination then waits for the copy). So a freed block can be reused at once by
// the next allocation: whatever used it before is earlier on the same stream.
//
// copy_to_host and synchronize, the waits for the device, return a bad index a kernel met
// since the last such wait as InvalidArgument (Note [GPU index faults] in
// kernels/cuda/index_fault.h).

#include <functional>
#include <memory>

#include "core/cuda/cuda_handles.h"
#include "kernels/cuda/cudnn/cudnn_conv.h"
#include "kernels/cuda/gpu_state.h"
#include "runtime/eager/device.h"
#include "runtime/eager/gpu_backend.h"

namespace mt::internal {

class CudaDevice final : public Device {
 public:
  // What a logical GPU owns besides its pool.
  struct Handles {
    cuda::Stream stream;
    cuda::CublasHandle cublas;           // bound to `stream`
    cuda::DeviceBuffer scratch;          // kernel temporaries (GpuState::scratch)
    cuda::MappedHostBuffer index_fault;  // a cuda::IndexFault (GpuState::index_fault)
    cuda::CudnnStatePtr cudnn;           // cuDNN on `stream` (GpuState::cudnn)
    int num_sms = 0;
  };

  CudaDevice(const GpuDeviceOptions& options, std::unique_ptr<Allocator> pool, Handles handles);
  ~CudaDevice() override;

  void* kernel_state() override { return &state_; }
  absl::Status make_current() override;
  int physical_id() const { return state_.physical_device; }
  cudaStream_t stream() const { return state_.stream; }

  absl::Status copy_from_host(void* dst, const void* src, size_t bytes) override;
  absl::Status copy_to_host(void* dst, const void* src, size_t bytes) override;
  absl::StatusOr<PendingUse> copy_from_device(void* dst, Device& from, const void* src,
                                              size_t bytes) override;
  absl::Status synchronize() override;
  absl::Status wait_idle() override;
  int hardware_ordinal() const override { return physical_id(); }
  uintptr_t stream_handle() const override { return reinterpret_cast<uintptr_t>(stream()); }
  bool idle() const override;
  void* record_mark() override;
  double mark_elapsed_ms(void* from, void* to) override;
  void release_mark(void* mark) override;
  std::optional<double> try_mark_elapsed_ms(void* from, void* to) override;
  absl::StatusOr<void*> capture_graph(
      absl::Span<Device* const> others,
      const std::function<absl::Status(GraphCapture&)>& body) override;
  absl::Status launch_graph(void* graph) override;
  void release_graph(void* graph) override;

 private:
  // Returns the waiting report of a bad index, taken, as InvalidArgument; OK when none
  // waits, after one load (Note [GPU index faults]). Call after waiting for the stream.
  absl::Status take_index_fault();

  // Copies to `dst` on `to` from this device's `src`, ordered as Note [Stream order] says.
  absl::Status copy_to_gpu(CudaDevice& to, void* dst, const void* src, size_t bytes);

  // What a graph capture launches through (capture_graph, cuda_graph.cc): a stream and a
  // cuBLAS handle of its own, made on first use, with capture_mu_ held.
  struct CaptureHandles;
  friend class CudaGraphCapture;
  absl::StatusOr<CaptureHandles*> capture_handles() ABSL_EXCLUSIVE_LOCKS_REQUIRED(capture_mu_);

  Handles handles_;
  cuda::BlasLock blas_;
  internal::Mutex scratch_mu_;  // GpuState::scratch_mu
  internal::Mutex fault_mu_;    // serialises the taking of index-fault reports
  cuda::GpuState state_;
  internal::Mutex capture_mu_;  // one capture at a time: they share capture_
  std::unique_ptr<CaptureHandles> capture_ ABSL_GUARDED_BY(capture_mu_);
};

}  // namespace mt::internal
