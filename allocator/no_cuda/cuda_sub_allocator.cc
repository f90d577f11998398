// The CUDA sub-allocators of a build without CUDA: every factory fails.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "allocator/sub_allocator.h"

namespace mt {
namespace {

absl::Status built_without_cuda(const char* op) {
  return absl::FailedPreconditionError(
      absl::StrCat("[", op, "] minitensor was built without CUDA"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SubAllocator>> make_cuda_sub_allocator(int /*physical_gpu*/) {
  return built_without_cuda("make_cuda_sub_allocator");
}

absl::StatusOr<std::unique_ptr<SubAllocator>> make_pinned_host_sub_allocator() {
  return built_without_cuda("make_pinned_host_sub_allocator");
}

absl::StatusOr<GpuMemoryInfo> query_gpu_memory(int /*physical_gpu*/) {
  return built_without_cuda("query_gpu_memory");
}

}  // namespace mt
