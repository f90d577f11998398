// CPU kernel of MatrixBandPart: each element of the innermost matrices kept or zeroed, by
// its row and column; copied by width (every dtype's zero is all zero bits).
#include <cstdint>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

template <typename W>
absl::Status band_part_kernel(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int64_t rows = shape.dim(shape.rank() - 2), cols = shape.dim(shape.rank() - 1);
  const int64_t lower = ctx.attrs->dims[0], upper = ctx.attrs->dims[1];
  const W* in = input_data<W>(ctx, 0);
  W* out = output_data<W>(ctx);
  const int64_t matrix = rows * cols;
  parallel_for(shape.num_elements(), 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t r = i % matrix / cols, c = i % cols;
      const bool keep = (lower < 0 || r - c <= lower) && (upper < 0 || c - r <= upper);
      out[i] = keep ? in[i] : W{0};
    }
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(MatrixBandPart) {
  return add_kernels(registry, OpId::kMatrixBandPart, AllTypes{}, [](auto tag) -> KernelFn {
    switch (sizeof(typename decltype(tag)::type)) {
      case 1:
        return &band_part_kernel<uint8_t>;
      case 2:
        return &band_part_kernel<uint16_t>;
      case 4:
        return &band_part_kernel<uint32_t>;
      default:
        return &band_part_kernel<uint64_t>;
    }
  });
}

}  // namespace mt::cpu
