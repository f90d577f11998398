#pragma once
// Test-only fault injection: makes the Nth call at a named site fail, so that tests can
// check that every failure of the driver surfaces as a clear mt::Error, leaves every pool's
// accounting exact and the next op working.
//
//   internal::inject_fault(internal::FaultSite::kHostAlloc, /*nth=*/2);  // the 2nd call fails
//   ...                                                                   // run ops
//   internal::faults_injected(internal::FaultSite::kHostAlloc);           // 1
//   internal::clear_faults();
//
// Sites, each checked by the code that makes the call:
// - kHostAlloc: the host sub-allocator's aligned_alloc (returns nullptr)
// - kCudaMalloc, kPinnedAlloc: cudaMalloc and cudaHostAlloc in the CUDA sub-allocators
// - kCudaCopy: the runtime's copies to and from a GPU (runtime/cuda/cuda_device.cc), which
//   then fail with cudaErrorInvalidValue
// - kKernelLaunch: every kernel launch in kernels/cuda (cudaErrorLaunchOutOfResources)
// When no fault was ever armed, should_fail costs one relaxed atomic load. Thread-safe.

#include <cstdint>

namespace mt::internal {

enum class FaultSite : int { kHostAlloc, kCudaMalloc, kPinnedAlloc, kCudaCopy, kKernelLaunch };
inline constexpr int kNumFaultSites = 5;

// Makes calls nth to nth + count - 1 at `site`, counted from now (1: the next call), fail.
// Replaces what was armed at `site` before.
void inject_fault(FaultSite site, int64_t nth, int64_t count = 1);

// Disarms every site and zeroes the counts of injected faults.
void clear_faults();

// Counts a call at `site` and returns true when it must fail.
bool should_fail(FaultSite site);

// Returns the faults injected at `site` since the last clear_faults().
int64_t faults_injected(FaultSite site);

}  // namespace mt::internal
