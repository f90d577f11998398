#include "kernels/cuda/cudnn/filter_layout.h"
#include "kernels/cuda/launch.h"

namespace mt::cuda {
namespace {

template <typename E>
__global__ void reverse_axes_kernel(const E* in, E* out, int64_t a, int64_t b, int64_t c,
                                    int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ia = i % a, rest = i / a, ib = rest % b, ic = rest / b;
    out[i] = in[(ia * b + ib) * c + ic];
  }
}

template <typename E>
absl::Status run(OpId op, const GpuState& state, const void* in, void* out, int64_t a, int64_t b,
                 int64_t c) {
  const int64_t count = a * b * c;
  if (count == 0) return absl::OkStatus();
  return launch(op, state, grid_for(count, kThreads), kThreads, &reverse_axes_kernel<E>,
                static_cast<const E*>(in), static_cast<E*>(out), a, b, c, count);
}

}  // namespace

absl::Status reverse_axes(OpId op, const GpuState& state, int element_bytes, const void* in,
                          void* out, int64_t a, int64_t b, int64_t c) {
  switch (element_bytes) {
    case 2:
      return run<uint16_t>(op, state, in, out, a, b, c);
    case 4:
      return run<uint32_t>(op, state, in, out, a, b, c);
    default:
      return run<uint64_t>(op, state, in, out, a, b, c);
  }
}

}  // namespace mt::cuda
