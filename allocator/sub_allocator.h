#pragma once
// SubAllocator: where a pool's regions come from (the "driver"): aligned host memory,
// cudaMalloc on one GPU, or pinned host memory for staging copies. A pool calls it only to
// add or return a whole region, never for a single tensor.
//
//   std::unique_ptr<SubAllocator> host = make_host_sub_allocator();
//   void* region = host->alloc(2 << 20);  // nullptr when the system says no
//   host->free(region, 2 << 20);
//
// The CUDA factories are built from allocator/cuda/, or from allocator/no_cuda/ when
// minitensor is built without CUDA, where they fail with FailedPrecondition. This header
// names no CUDA type.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

namespace mt {

// A source of large memory regions. Implementations are thread-safe.
class SubAllocator {
 public:
  virtual ~SubAllocator() = default;

  // Returns `bytes` of memory aligned to at least 256 bytes, or nullptr on failure.
  virtual void* alloc(size_t bytes) = 0;

  // Returns `ptr`, obtained from alloc(bytes), to the system.
  virtual void free(void* ptr, size_t bytes) = 0;
};

// Free and total memory of one GPU, as the driver reports them.
struct GpuMemoryInfo {
  int64_t free_bytes = 0;
  int64_t total_bytes = 0;
};

// Returns a sub-allocator of 256-byte-aligned host memory (aligned_alloc).
std::unique_ptr<SubAllocator> make_host_sub_allocator();

// Returns a sub-allocator of cudaMalloc memory on `physical_gpu`; each call makes that GPU
// current for its duration. Fails with NotFound for a GPU the driver does not list and
// FailedPrecondition when CUDA is unusable (no driver, no device, built without CUDA).
absl::StatusOr<std::unique_ptr<SubAllocator>> make_cuda_sub_allocator(int physical_gpu);

// Returns a sub-allocator of pinned (page-locked, portable) host memory from cudaHostAlloc,
// for staging copies. Fails with FailedPrecondition when CUDA is unusable.
absl::StatusOr<std::unique_ptr<SubAllocator>> make_pinned_host_sub_allocator();

// Returns the free and total memory of `physical_gpu` (cudaMemGetInfo; creates the CUDA
// context on that GPU if there is none). Fails as make_cuda_sub_allocator does, and with
// ResourceExhausted when the card has too little memory left to create that context.
absl::StatusOr<GpuMemoryInfo> query_gpu_memory(int physical_gpu);

}  // namespace mt
