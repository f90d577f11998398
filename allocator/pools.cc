#include "allocator/pools.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "allocator/bfc_allocator.h"
#include "allocator/sub_allocator.h"
#include "core/check.h"
#include "core/status.h"

namespace mt {

std::unique_ptr<Allocator> make_cpu_pool(int index, std::optional<int64_t> limit_bytes,
                                         bool* pinned) {
  MT_CHECK(!limit_bytes || *limit_bytes > 0);
  std::unique_ptr<SubAllocator> sub;
  if (pinned != nullptr && *pinned) {
    absl::StatusOr<std::unique_ptr<SubAllocator>> made = make_pinned_host_sub_allocator();
    if (made.ok()) sub = *std::move(made);
    *pinned = sub != nullptr;
  }
  if (sub == nullptr) sub = make_host_sub_allocator();
  BFCAllocator::Options options{.name = absl::StrCat("CPU_", index, "_bfc"),
                                .limit_bytes = limit_bytes.value_or(BFCAllocator::kUnlimited),
                                .allow_growth = true};
  return std::make_unique<BFCAllocator>(std::move(options), std::move(sub));
}

absl::StatusOr<std::unique_ptr<Allocator>> make_gpu_pool(const GpuPoolOptions& options) {
  if (options.limit_bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("[make_gpu_pool] GPU_", options.logical_index,
                                                   "_bfc: limit_bytes must be positive, got ",
                                                   options.limit_bytes));
  }
  MT_ASSIGN_OR_RETURN(std::unique_ptr<SubAllocator> sub,
                      make_cuda_sub_allocator(options.physical_gpu));
  BFCAllocator::Options pool{.name = absl::StrCat("GPU_", options.logical_index, "_bfc"),
                             .limit_bytes = options.limit_bytes,
                             .allow_growth = options.allow_growth};
  return std::unique_ptr<Allocator>(
      std::make_unique<BFCAllocator>(std::move(pool), std::move(sub)));
}

absl::StatusOr<std::unique_ptr<Allocator>> make_pinned_pool(int64_t limit_bytes) {
  if (limit_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("[make_pinned_pool] limit_bytes must be positive, got ", limit_bytes));
  }
  MT_ASSIGN_OR_RETURN(std::unique_ptr<SubAllocator> sub, make_pinned_host_sub_allocator());
  BFCAllocator::Options pool{
      .name = "cuda_host_bfc", .limit_bytes = limit_bytes, .allow_growth = true};
  return std::unique_ptr<Allocator>(
      std::make_unique<BFCAllocator>(std::move(pool), std::move(sub)));
}

}  // namespace mt
