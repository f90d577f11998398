#pragma once
// RAII owners of CUDA handles (a stream, an event, a cuBLAS handle, a device buffer, a
// mapped host buffer, the current device) and the one conversion of a cudaError_t into an
// absl::Status, for every
// */cuda/ folder. Each handle is move-only, releases itself in the destructor (ignoring
// the result: there is no one to report it to), and is made by a `create` on the current
// device that returns the failure as a status naming the call. Host code only.
//
//   cuda::ScopedDevice on(1);
//   MT_RETURN_IF_ERROR(on.status());
//   MT_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::create());
//   MT_ASSIGN_OR_RETURN(cuda::CublasHandle blas, cuda::CublasHandle::create(stream.get()));
//   MT_RETURN_IF_ERROR(cuda::cuda_check("cudaStreamSynchronize",
//   cudaStreamSynchronize(stream.get())));

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace mt::cuda {

// Returns OK, or the failure of `call` with CUDA's message: ResourceExhausted for
// cudaErrorMemoryAllocation, Internal otherwise. Clears a non-sticky error.
inline absl::Status cuda_check(const char* call, cudaError_t error) {
  if (error == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();
  std::string message = absl::StrCat(call, " failed: ", cudaGetErrorString(error));
  if (error == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

// Makes `device` current for the scope and restores the previous one after.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device)
      : previous_(current()),
        status_(previous_ == device ? absl::OkStatus()
                                    : cuda_check("cudaSetDevice", cudaSetDevice(device))) {}
  ~ScopedDevice() {
    if (previous_ >= 0) static_cast<void>(cudaSetDevice(previous_));
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

  // Returns whether `device` became current.
  const absl::Status& status() const { return status_; }

 private:
  static int current() {
    int device = -1;
    return cudaGetDevice(&device) == cudaSuccess ? device : -1;
  }

  int previous_;
  absl::Status status_;
};

// Owns one handle of type H, released by Destroy. Holds nullptr when empty (moved from).
template <typename H, auto Destroy>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(H h) : h_(h) {}
  UniqueHandle(UniqueHandle&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = std::exchange(other.h_, nullptr);
    }
    return *this;
  }
  ~UniqueHandle() { reset(); }

  H get() const { return h_; }
  // Gives up ownership and returns the handle.
  H release() { return std::exchange(h_, nullptr); }
  void reset() {
    if (h_ != nullptr) static_cast<void>(Destroy(std::exchange(h_, nullptr)));
  }

 private:
  H h_ = nullptr;
};

// Returns "<call> failed: <message>": ResourceExhausted when the call ran out of memory
// (a card another process fills, say), Internal otherwise.
inline absl::Status handle_error(const char* call, const char* message,
                                 bool out_of_memory = false) {
  std::string text = absl::StrCat(call, " failed: ", message);
  if (out_of_memory) return absl::ResourceExhaustedError(text);
  return absl::InternalError(text);
}

class Stream : public UniqueHandle<cudaStream_t, cudaStreamDestroy> {
 public:
  using UniqueHandle::UniqueHandle;
  // Creates a stream on the current device; non-blocking (no implicit sync with stream 0).
  static absl::StatusOr<Stream> create(unsigned flags = cudaStreamNonBlocking) {
    cudaStream_t s = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&s, flags);
    if (e != cudaSuccess) {
      return handle_error("cudaStreamCreateWithFlags", cudaGetErrorString(e),
                          e == cudaErrorMemoryAllocation);
    }
    return Stream(s);
  }
};

class Event : public UniqueHandle<cudaEvent_t, cudaEventDestroy> {
 public:
  using UniqueHandle::UniqueHandle;
  // Creates an event on the current device (cudaEventDisableTiming for sync-only events).
  static absl::StatusOr<Event> create(unsigned flags = cudaEventDefault) {
    cudaEvent_t e = nullptr;
    cudaError_t err = cudaEventCreateWithFlags(&e, flags);
    if (err != cudaSuccess)
      return handle_error("cudaEventCreateWithFlags", cudaGetErrorString(err));
    return Event(e);
  }
};

class CublasHandle : public UniqueHandle<cublasHandle_t, cublasDestroy> {
 public:
  using UniqueHandle::UniqueHandle;
  // Creates a cuBLAS handle on the current device, bound to `stream`.
  static absl::StatusOr<CublasHandle> create(cudaStream_t stream) {
    cublasHandle_t h = nullptr;
    cublasStatus_t s = cublasCreate(&h);
    if (s != CUBLAS_STATUS_SUCCESS) {
      return handle_error("cublasCreate", cublasGetStatusString(s),
                          s == CUBLAS_STATUS_ALLOC_FAILED);
    }
    CublasHandle handle(h);
    s = cublasSetStream(h, stream);
    if (s != CUBLAS_STATUS_SUCCESS)
      return handle_error("cublasSetStream", cublasGetStatusString(s));
    return handle;
  }
};

// Device memory from cudaMalloc (at least 256-byte aligned), freed with cudaFree.
class DeviceBuffer : public UniqueHandle<void*, cudaFree> {
 public:
  using UniqueHandle::UniqueHandle;
  // Allocates `bytes` on the current device; an empty buffer for 0 bytes.
  static absl::StatusOr<DeviceBuffer> create(size_t bytes) {
    if (bytes == 0) return DeviceBuffer();
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      cudaGetLastError();  // an out-of-memory error is not sticky; clear it
      return handle_error("cudaMalloc", cudaGetErrorString(e), e == cudaErrorMemoryAllocation);
    }
    return DeviceBuffer(p);
  }
};

// Zeroed pinned host memory that kernels can address (cudaHostAllocMapped, portable to
// every device), freed with cudaFreeHost. With unified addressing, get() is also the
// address kernels use.
class MappedHostBuffer : public UniqueHandle<void*, cudaFreeHost> {
 public:
  using UniqueHandle::UniqueHandle;
  // Allocates `bytes` (> 0) and zeroes them.
  static absl::StatusOr<MappedHostBuffer> create(size_t bytes) {
    void* p = nullptr;
    cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return handle_error("cudaHostAlloc", cudaGetErrorString(e), e == cudaErrorMemoryAllocation);
    }
    std::memset(p, 0, bytes);
    return MappedHostBuffer(p);
  }
};

}  // namespace mt::cuda
