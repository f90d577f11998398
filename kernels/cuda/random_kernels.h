#pragma once
// Fills a GPU buffer with random numbers: the CUDA side of random.uniform, random.normal,
// random.truncated_normal and their stateless forms. Gives the same bits as the CPU fill
// (kernels/cpu/random_fill.h) for the same seed, dtype and length: both compute element i
// from group i / G of Note [TensorFlow's random bits] in kernels/random_distributions.h.
//
//   MT_RETURN_IF_ERROR(cuda::launch_random_fill(RandomDistribution::kUniform, DType::kFloat32,
//                                               stateless_philox_seed(1, 2), out, n, stream));
//
// Each thread computes whole groups (one Philox block of 4 outputs for float32, bfloat16 and
// float16 uniform and normal values, 2 for float64) and stores each as one vector (16 bytes,
// 8 for the 2-byte types) when `out` is aligned to it; grid-stride beyond the largest grid.

#include <cuda_runtime.h>

#include <cstdint>

#include "absl/status/status.h"
#include "core/dtype.h"
#include "kernels/philox.h"
#include "kernels/random_distributions.h"

namespace mt::cuda {

// Enqueues on `stream` the writing of n values of `dist` as `dtype` to the device buffer
// `out` (n elements), from the stream that starts at `seed`, and returns without waiting.
// `dtype` is one cpu::random_fill_supports takes (checked). Returns Internal
// "[random_fill] cudaLaunchKernel failed: <error>" when the launch fails (also when the
// test-only FaultSite::kKernelLaunch fires); n == 0 launches nothing.
absl::Status launch_random_fill(RandomDistribution dist, DType dtype, const PhiloxSeed& seed,
                                void* out, int64_t n, cudaStream_t stream);

// Enqueues on `stream` the writing of n uniform integers of `dtype` (int32 or int64) to the
// device buffer `out`, as cpu::random_fill_uniform_int does (same arguments, same checks,
// same bits). Errors as launch_random_fill's.
absl::Status launch_random_fill_uniform_int(DType dtype, const PhiloxSeed& seed, int64_t minval,
                                            uint64_t range, void* out, int64_t n,
                                            cudaStream_t stream);

}  // namespace mt::cuda
