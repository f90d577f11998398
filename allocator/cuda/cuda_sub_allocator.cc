// The CUDA sub-allocators: cudaMalloc on one GPU, and pinned host memory (cudaHostAlloc).

#include <cuda_runtime.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "allocator/sub_allocator.h"
#include "core/fault_injection.h"
#include "core/status.h"

namespace mt {
namespace {

// Makes `device` current for its scope, then restores the previous device.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ != device) ok_ = cudaSetDevice(device) == cudaSuccess;
  }
  ~ScopedDevice() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

  // Returns whether `device` is current.
  bool ok() const { return ok_; }

 private:
  int previous_ = -1;
  bool ok_ = true;
};

// Returns the number of GPUs the driver lists, failing when CUDA is unusable, for `op`.
absl::StatusOr<int> device_count(const char* op) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();  // clears the error so that later calls do not report it
    return absl::FailedPreconditionError(absl::StrCat(
        "[", op,
        "] CUDA is unusable: ", err != cudaSuccess ? cudaGetErrorString(err) : "no CUDA device"));
  }
  return count;
}

// Checks that CUDA works and that `gpu` exists, for `op`.
absl::Status check_gpu(const char* op, int gpu) {
  MT_ASSIGN_OR_RETURN(const int count, device_count(op));
  if (gpu < 0 || gpu >= count) {
    return absl::NotFoundError(
        absl::StrCat("[", op, "] no GPU ", gpu, ": the driver lists ", count));
  }
  return absl::OkStatus();
}

class CudaSubAllocator final : public SubAllocator {
 public:
  explicit CudaSubAllocator(int gpu) : gpu_(gpu) {}

  void* alloc(size_t bytes) override {
    ScopedDevice device(gpu_);
    void* ptr = nullptr;
    if (internal::should_fail(internal::FaultSite::kCudaMalloc)) return nullptr;  // tests only
    if (!device.ok() || cudaMalloc(&ptr, bytes) != cudaSuccess) {
      cudaGetLastError();  // an out-of-memory error is not sticky; clear it
      return nullptr;
    }
    return ptr;
  }

  void free(void* ptr, size_t /*bytes*/) override {
    ScopedDevice device(gpu_);
    cudaFree(ptr);
  }

 private:
  const int gpu_;
};

class PinnedHostSubAllocator final : public SubAllocator {
 public:
  void* alloc(size_t bytes) override {
    void* ptr = nullptr;
    if (internal::should_fail(internal::FaultSite::kPinnedAlloc)) return nullptr;  // tests only
    if (cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return ptr;
  }

  void free(void* ptr, size_t /*bytes*/) override { cudaFreeHost(ptr); }
};

}  // namespace

absl::StatusOr<std::unique_ptr<SubAllocator>> make_cuda_sub_allocator(int physical_gpu) {
  MT_RETURN_IF_ERROR(check_gpu("make_cuda_sub_allocator", physical_gpu));
  return std::unique_ptr<SubAllocator>(std::make_unique<CudaSubAllocator>(physical_gpu));
}

absl::StatusOr<std::unique_ptr<SubAllocator>> make_pinned_host_sub_allocator() {
  MT_RETURN_IF_ERROR(device_count("make_pinned_host_sub_allocator").status());
  return std::unique_ptr<SubAllocator>(std::make_unique<PinnedHostSubAllocator>());
}

absl::StatusOr<GpuMemoryInfo> query_gpu_memory(int physical_gpu) {
  MT_RETURN_IF_ERROR(check_gpu("query_gpu_memory", physical_gpu));
  ScopedDevice device(physical_gpu);
  size_t free_bytes = 0, total_bytes = 0;
  const cudaError_t err =
      device.ok() ? cudaMemGetInfo(&free_bytes, &total_bytes) : cudaErrorInvalidDevice;
  if (err != cudaSuccess) {
    cudaGetLastError();
    std::string message =
        absl::StrCat("[query_gpu_memory] GPU ", physical_gpu, ": ", cudaGetErrorString(err));
    // A card full enough that the CUDA context cannot be created (another process's).
    if (err == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
    return absl::FailedPreconditionError(message);
  }
  return GpuMemoryInfo{static_cast<int64_t>(free_bytes), static_cast<int64_t>(total_bytes)};
}

}  // namespace mt
