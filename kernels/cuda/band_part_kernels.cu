// GPU kernel of MatrixBandPart: a thread per element, kept or zeroed by its row and column,
// copied by width (every dtype's zero is all zero bits).
#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

template <typename W>
__global__ void __launch_bounds__(kThreads)
    band_part(const W* __restrict__ in, W* __restrict__ out, int64_t n, int64_t rows, int64_t cols,
              int64_t lower, int64_t upper) {
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * kThreads) {
    const int64_t r = i % (rows * cols) / cols, c = i % cols;
    const bool keep = (lower < 0 || r - c <= lower) && (upper < 0 || c - r <= upper);
    out[i] = keep ? in[i] : W{0};
  }
}

template <typename W>
absl::Status run_band_part(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int64_t n = shape.num_elements();
  if (n == 0) return absl::OkStatus();
  const int64_t rows = shape.dim(shape.rank() - 2), cols = shape.dim(shape.rank() - 1);
  return launch(OpId::kMatrixBandPart, gpu_state(ctx), grid_for(n, kThreads), kThreads,
                &band_part<W>, static_cast<const W*>(ctx.inputs[0].data),
                static_cast<W*>(ctx.output.data), n, rows, cols, ctx.attrs->dims[0],
                ctx.attrs->dims[1]);
}

}  // namespace

MT_OP_KERNELS(MatrixBandPart) {
  return add_gpu_kernels(registry, OpId::kMatrixBandPart, AllTypes{}, [](auto tag) -> KernelFn {
    switch (sizeof(typename decltype(tag)::type)) {
      case 1:
        return &run_band_part<uint8_t>;
      case 2:
        return &run_band_part<uint16_t>;
      case 4:
        return &run_band_part<uint32_t>;
      default:
        return &run_band_part<uint64_t>;
    }
  });
}

}  // namespace mt::cuda
