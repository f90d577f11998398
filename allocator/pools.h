#pragma once
// The pools the runtime creates: one BFCAllocator per logical device, named as TensorFlow
// names them in OOM messages.
//
//   std::unique_ptr<Allocator> cpu = make_cpu_pool(0, std::nullopt);  // "CPU_0_bfc"
//   MT_ASSIGN_OR_RETURN(std::unique_ptr<Allocator> gpu,
//                       make_gpu_pool({.logical_index = 1, .physical_gpu = 0,
//                                      .limit_bytes = int64_t{4} << 30}));  // "GPU_1_bfc"
//   MT_ASSIGN_OR_RETURN(std::unique_ptr<Allocator> staging, make_pinned_pool(int64_t{1} << 30));
//
// A GPU pool hands a block out again as soon as it is freed: blocks are reused in the order
// of the device's stream. A block last used on another stream must come back through
// Allocator::deallocate_after with an event on that stream.

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "allocator/allocator.h"

namespace mt {

// Returns the pool of logical CPU device `index`: "CPU_<index>_bfc" over aligned host
// memory, in growth mode (2 MiB, then doubling), limited to `limit_bytes` (> 0) when set and
// unlimited otherwise (stats().bytes_limit is then INT64_MAX). With `pinned`, the regions
// are pinned host memory (cudaHostAlloc) so that GPUs can copy from them by DMA; when
// pinned memory is unavailable (no CUDA), the pool falls back to ordinary host memory and
// `*pinned` is set to false.
std::unique_ptr<Allocator> make_cpu_pool(int index, std::optional<int64_t> limit_bytes,
                                         bool* pinned = nullptr);

struct GpuPoolOptions {
  int logical_index = 0;      // n in "GPU_<n>_bfc"
  int physical_gpu = 0;       // the CUDA device ordinal
  int64_t limit_bytes = 0;    // > 0: the pool never reserves more
  bool allow_growth = false;  // false: the first allocation reserves the whole limit
};

// Returns the pool of a logical GPU device over cudaMalloc on `options.physical_gpu`.
// Reserves nothing until its first allocation. Fails with InvalidArgument for a limit <= 0,
// and as make_cuda_sub_allocator does (NotFound, FailedPrecondition).
absl::StatusOr<std::unique_ptr<Allocator>> make_gpu_pool(const GpuPoolOptions& options);

// Returns the process's pool of pinned host memory for staging copies: "cuda_host_bfc" over
// cudaHostAlloc, in growth mode, never holding more than `limit_bytes`. Fails with
// InvalidArgument for a limit <= 0, and as make_pinned_host_sub_allocator does.
absl::StatusOr<std::unique_ptr<Allocator>> make_pinned_pool(int64_t limit_bytes);

}  // namespace mt
