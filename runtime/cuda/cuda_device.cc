#include "runtime/cuda/cuda_device.h"

#include <cstring>

#include "allocator/pools.h"
#include "core/fault_injection.h"
#include "core/status.h"
#include "kernels/cuda/index_fault.h"
#include "runtime/cuda/capture_handles.h"

namespace mt::internal {
namespace {

using cuda::cuda_check;

// Returns cudaMemcpyAsync's result, or cudaErrorInvalidValue without copying when a test
// injects a fault (core/fault_injection.h).
cudaError_t memcpy_async(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                         cudaStream_t stream) {
  if (should_fail(FaultSite::kCudaCopy)) return cudaErrorInvalidValue;
  return cudaMemcpyAsync(dst, src, bytes, kind, stream);
}

// Note [Pinned staging]
// A copy from pageable host memory makes CUDA synchronise the stream first. Copies up to
// kMaxStagedBytes therefore go through a process-wide pool of pinned memory: the bytes are
// copied into a pinned block, the block is copied to the GPU asynchronously, and the block
// returns to the pool once an event after the copy has completed. Larger copies, or a full
// staging pool, fall back to a direct copy.
constexpr size_t kMaxStagedBytes = size_t{64} << 20;
constexpr int64_t kStagingLimitBytes = int64_t{1} << 30;

Allocator* pinned_staging() {
  static Allocator* pool = [] {
    absl::StatusOr<std::unique_ptr<Allocator>> made = make_pinned_pool(kStagingLimitBytes);
    return made.ok() ? made->release() : nullptr;  // process lifetime: copies may outlive main
  }();
  return pool;
}

// Returns a PendingUse that completes with everything enqueued on `stream` so far. When no
// event can be recorded, waits for the stream instead and returns an empty use.
absl::StatusOr<PendingUse> use_after(cudaStream_t stream) {
  absl::StatusOr<cuda::Event> event = cuda::Event::create(cudaEventDisableTiming);
  absl::Status status = event.status();
  if (status.ok()) status = cuda_check("cudaEventRecord", cudaEventRecord(event->get(), stream));
  if (!status.ok()) {
    MT_RETURN_IF_ERROR(cuda_check("cudaStreamSynchronize", cudaStreamSynchronize(stream)));
    return PendingUse{};
  }
  return PendingUse{
      event->release(),
      [](void* e) { return cudaEventQuery(static_cast<cudaEvent_t>(e)) != cudaErrorNotReady; },
      [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); }};
}

// Makes `waiter` wait for everything enqueued on `stream` (of `device`) so far.
absl::Status stream_wait(cudaStream_t waiter, int device, cudaStream_t stream) {
  cuda::ScopedDevice scoped(device);
  MT_RETURN_IF_ERROR(scoped.status());
  MT_ASSIGN_OR_RETURN(cuda::Event event, cuda::Event::create(cudaEventDisableTiming));
  MT_RETURN_IF_ERROR(cuda_check("cudaEventRecord", cudaEventRecord(event.get(), stream)));
  return cuda_check("cudaStreamWaitEvent", cudaStreamWaitEvent(waiter, event.get(), 0));
}

}  // namespace

CudaDevice::CudaDevice(const GpuDeviceOptions& options, std::unique_ptr<Allocator> pool,
                       Handles handles)
    : Device(DeviceType::kGPU, options.logical_id, options.name, std::move(pool)),
      handles_(std::move(handles)) {
  state_.physical_device = options.physical_id;
  state_.stream = handles_.stream.get();
  state_.cublas = handles_.cublas.get();
  state_.blas = &blas_;
  state_.num_sms = handles_.num_sms;
  state_.cudnn = handles_.cudnn.get();
  state_.scratch = handles_.scratch.get();
  if (state_.scratch != nullptr) {
    state_.scratch_bytes = cuda::kScratchBytes;
    state_.scratch_mu = &scratch_mu_;
    state_.reduce_tickets =
        reinterpret_cast<unsigned*>(static_cast<char*>(state_.scratch) + cuda::kScratchBytes);
    if (handles_.index_fault.get() != nullptr) {
      state_.index_fault = static_cast<cuda::IndexFault*>(handles_.index_fault.get());
      state_.index_fault_claim = reinterpret_cast<unsigned long long*>(
          static_cast<char*>(state_.scratch) + cuda::kScratchBytes + cuda::kFaultClaimOffset);
    }
  }
}

absl::Status CudaDevice::take_index_fault() {
  if (__builtin_expect(state_.index_fault == nullptr || !cuda::fault_pending(*state_.index_fault),
                       1)) {
    return absl::OkStatus();
  }
  MutexLock lock(&fault_mu_);
  return cuda::take_index_fault(*state_.index_fault, name());
}

absl::Status CudaDevice::make_current() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == state_.physical_device) {
    return absl::OkStatus();
  }
  return cuda_check("cudaSetDevice", cudaSetDevice(state_.physical_device));
}

absl::Status CudaDevice::copy_from_host(void* dst, const void* src, size_t bytes) {
  cuda::ScopedDevice scoped(state_.physical_device);
  MT_RETURN_IF_ERROR(scoped.status());
  Allocator* staging = bytes <= kMaxStagedBytes ? pinned_staging() : nullptr;
  void* block = staging != nullptr ? staging->allocate(bytes) : nullptr;
  if (block == nullptr) {
    return cuda_check("cudaMemcpyAsync",
                      memcpy_async(dst, src, bytes, cudaMemcpyHostToDevice, stream()));
  }
  std::memcpy(block, src, bytes);
  absl::Status status = cuda_check(
      "cudaMemcpyAsync", memcpy_async(dst, block, bytes, cudaMemcpyHostToDevice, stream()));
  absl::StatusOr<PendingUse> use =
      status.ok() ? use_after(stream()) : absl::StatusOr<PendingUse>(status);
  if (!use.ok() || use->handle == nullptr) {
    staging->deallocate(block);
    return use.status();
  }
  staging->deallocate_after(block, *use);
  return absl::OkStatus();
}

absl::Status CudaDevice::copy_to_host(void* dst, const void* src, size_t bytes) {
  cuda::ScopedDevice scoped(state_.physical_device);
  MT_RETURN_IF_ERROR(scoped.status());
  MT_RETURN_IF_ERROR(cuda_check("cudaMemcpyAsync",
                                memcpy_async(dst, src, bytes, cudaMemcpyDeviceToHost, stream())));
  // Wait for exactly this copy (and what precedes it), not for work enqueued after it.
  MT_ASSIGN_OR_RETURN(cuda::Event done, cuda::Event::create(cudaEventDisableTiming));
  MT_RETURN_IF_ERROR(cuda_check("cudaEventRecord", cudaEventRecord(done.get(), stream())));
  MT_RETURN_IF_ERROR(cuda_check("cudaEventSynchronize", cudaEventSynchronize(done.get())));
  return take_index_fault();
}

// Note [Pinned host tensors]
// When a GPU is visible, the CPU pools draw from pinned memory, so a CPU tensor's buffer
// can be copied to a GPU by DMA without staging and without blocking the host. The copy
// then still reads the buffer after copy_from_device returns: it returns a PendingUse (an
// event after the copy) that the tensor keeps, and its buffer goes back to the CPU pool
// through deallocate_after, once the copy has completed.
absl::StatusOr<PendingUse> CudaDevice::copy_from_device(void* dst, Device& from, const void* src,
                                                        size_t bytes) {
  if (from.type() == DeviceType::kGPU) {
    MT_RETURN_IF_ERROR(static_cast<CudaDevice&>(from).copy_to_gpu(*this, dst, src, bytes));
    return PendingUse{};
  }
  if (!from.pinned_host_memory()) {
    MT_RETURN_IF_ERROR(copy_from_host(dst, src, bytes));
    return PendingUse{};
  }
  cuda::ScopedDevice scoped(state_.physical_device);
  MT_RETURN_IF_ERROR(scoped.status());
  MT_RETURN_IF_ERROR(cuda_check("cudaMemcpyAsync",
                                memcpy_async(dst, src, bytes, cudaMemcpyHostToDevice, stream())));
  return use_after(stream());
}

absl::Status CudaDevice::copy_to_gpu(CudaDevice& to, void* dst, const void* src, size_t bytes) {
  if (&to != this) {
    // `dst` may have been in use on `to`'s stream until just now.
    MT_RETURN_IF_ERROR(stream_wait(stream(), to.physical_id(), to.stream()));
  }
  cuda::ScopedDevice scoped(state_.physical_device);
  MT_RETURN_IF_ERROR(scoped.status());
  if (to.physical_id() == physical_id()) {
    MT_RETURN_IF_ERROR(cuda_check(
        "cudaMemcpyAsync", memcpy_async(dst, src, bytes, cudaMemcpyDeviceToDevice, stream())));
  } else {
    MT_RETURN_IF_ERROR(cuda_check(
        "cudaMemcpyPeerAsync",
        cudaMemcpyPeerAsync(dst, to.physical_id(), src, physical_id(), bytes, stream())));
  }
  if (&to == this) return absl::OkStatus();
  return stream_wait(to.stream(), physical_id(), stream());
}

absl::Status CudaDevice::synchronize() {
  MT_RETURN_IF_ERROR(wait_idle());
  return take_index_fault();
}

absl::Status CudaDevice::wait_idle() {
  cuda::ScopedDevice scoped(state_.physical_device);
  MT_RETURN_IF_ERROR(scoped.status());
  return cuda_check("cudaStreamSynchronize", cudaStreamSynchronize(stream()));
}

void* CudaDevice::record_mark() {
  cuda::ScopedDevice scoped(state_.physical_device);
  if (!scoped.status().ok()) return nullptr;
  cudaEvent_t event = nullptr;
  if (cudaEventCreate(&event) != cudaSuccess) return nullptr;
  if (cudaEventRecord(event, stream()) != cudaSuccess) {
    cudaEventDestroy(event);
    return nullptr;
  }
  return event;
}

double CudaDevice::mark_elapsed_ms(void* from, void* to) {
  auto a = static_cast<cudaEvent_t>(from);
  auto b = static_cast<cudaEvent_t>(to);
  cuda::ScopedDevice scoped(state_.physical_device);
  float ms = 0;
  if (!scoped.status().ok() || a == nullptr || b == nullptr ||
      cudaEventSynchronize(b) != cudaSuccess || cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
    return -1;
  }
  return ms;
}

// Reads two marks with cudaEventQuery, which never waits: the cost policy polls its
// pending timings from the op path (Note [GPU timings without waiting] in cost_policy.cc).
std::optional<double> CudaDevice::try_mark_elapsed_ms(void* from, void* to) {
  auto a = static_cast<cudaEvent_t>(from);
  auto b = static_cast<cudaEvent_t>(to);
  if (a == nullptr || b == nullptr) return -1;
  cudaError_t ready = cudaEventQuery(b);
  if (ready == cudaErrorNotReady) return std::nullopt;
  float ms = 0;
  if (ready != cudaSuccess || cudaEventElapsedTime(&ms, a, b) != cudaSuccess) return -1;
  return ms;
}

bool CudaDevice::idle() const { return cudaStreamQuery(stream()) == cudaSuccess; }

void CudaDevice::release_mark(void* mark) {
  if (mark != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(mark));
}

CudaDevice::~CudaDevice() = default;

}  // namespace mt::internal
