#pragma once
// Internal to kernels/cuda/ (.cu files only): how every kernel of this folder is launched.
// A launch enqueues on the op's stream and is checked at once with cudaGetLastError.
//
//   const unsigned grid = grid_for(n, kThreads);
//   MT_RETURN_IF_ERROR(launch(OpId::kNeg, state, grid, kThreads, &map_kernel<Fn, T, 1>, args));

#include <algorithm>
#include <cstdint>

#include "core/fault_injection.h"
#include "kernels/cuda/cuda_kernels.h"

namespace mt::cuda {

// Threads per block of the element-wise, AddN and reduction kernels.
inline constexpr int kThreads = 256;

// The most blocks a 1-D grid is given; kernels loop (grid-stride) over any work beyond it.
inline constexpr int64_t kMaxGridBlocks = int64_t{1} << 20;

// Returns enough blocks of `block` threads to give each of `work` items its own thread,
// at least 1 and at most kMaxGridBlocks.
inline unsigned grid_for(int64_t work, int block) {
  return static_cast<unsigned>(std::clamp<int64_t>((work + block - 1) / block, 1, kMaxGridBlocks));
}

// Returns the multiprocessor count of `state`'s GPU (132 when the state leaves it unset).
inline int sm_count(const GpuState& state) { return state.num_sms > 0 ? state.num_sms : 132; }

// Launches kernel<<<grid, block, 0, state.stream>>>(args...) and checks the launch.
template <typename... Params, typename... Args>
absl::Status launch(OpId op, const GpuState& state, dim3 grid, dim3 block,
                    void (*kernel)(Params...), Args&&... args) {
  if (internal::should_fail(internal::FaultSite::kKernelLaunch)) {  // tests only
    return cuda_status(op, "cudaLaunchKernel", cudaErrorLaunchOutOfResources);
  }
  kernel<<<grid, block, 0, state.stream>>>(static_cast<Args&&>(args)...);
  return check_launch(op);
}

}  // namespace mt::cuda
