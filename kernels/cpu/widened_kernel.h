#pragma once
// widened_kernel: a CPU kernel of bfloat16 or float16 made from the float32 one by widening
// whole tensors (MatMul's), and the float32 buffers and conversions the others share.
//
// Note [Half kernels on the CPU]: a kernel for a 2-byte float dtype H gives the bits of the
// float32 kernel of the op run on its inputs widened to float32 (exactly), rounded to H
// (nearest even) once. So every op computes in float32 and reductions, AddN and MatMul
// accumulate in float32, as TensorFlow's CPU kernels do for these dtypes; the result of AddV2,
// Sub, Mul and RealDiv is the correctly rounded H result (float32 has more than twice H's
// significand bits plus two); only where two NaNs meet in AddN may the payload be the other
// NaN's. MatMul does it literally (widened_kernel: two extra passes over
// memory); the element-wise ops, AddN and the reductions widen a block at a time on the stack
// and run the float32 loops there (Note [Half loops] in isa/half_loops.cc, Note [Half
// reductions] in reduction_kernels.cc), vectorised (Note [Vector half conversions] in
// isa/half_convert.h).
//
//   return &widened_kernel<bfloat16, &matmul_kernel<float>>;

#include <algorithm>
#include <memory>
#include <new>

#include "absl/container/inlined_vector.h"
#include "core/status.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {

// Converts n elements from `from` to `to` with the ISA level's cast loop, split across threads.
inline void convert(DType from, const void* in, DType to, void* out, int64_t n) {
  const CastLoop loop = cpu_loops().cast[static_cast<int>(from)][static_cast<int>(to)];
  const size_t in_size = dtype_size(from), out_size = dtype_size(to);
  parallel_for(n, 32768, [&](int64_t begin, int64_t end) {
    loop(static_cast<const char*>(in) + begin * in_size, static_cast<char*>(out) + begin * out_size,
         end - begin);
  });
}

// A float32 buffer aligned to 256 bytes as tensor buffers are, so that a float32 kernel takes
// the same vector paths (and gives the same bits) whatever the allocator returns: Eigen
// treats the unaligned head of a buffer element by element.
struct WideDelete {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t{256}); }
};
using WideBuffer = std::unique_ptr<float[], WideDelete>;
inline WideBuffer wide_buffer(int64_t n) {
  const size_t bytes = std::max<int64_t>(n, 1) * sizeof(float);
  return WideBuffer(static_cast<float*>(::operator new[](bytes, std::align_val_t{256})));
}

// Runs kFloatKernel on ctx with every H input and the output widened to float32
// (Note [Half kernels on the CPU]).
template <typename H, KernelFn kFloatKernel>
absl::Status widened_kernel(const KernelContext& ctx) {
  constexpr DType kHalf = dtype_of<H>();
  absl::InlinedVector<WideBuffer, 2> wide(ctx.inputs.size());
  absl::InlinedVector<TensorArg, 2> args(ctx.inputs.begin(), ctx.inputs.end());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype != kHalf) continue;
    const int64_t n = args[i].shape->num_elements();
    wide[i] = wide_buffer(n);
    convert(kHalf, args[i].data, DType::kFloat32, wide[i].get(), n);
    args[i].data = wide[i].get();
    args[i].dtype = DType::kFloat32;
  }
  const int64_t n = ctx.output.shape->num_elements();
  WideBuffer out = wide_buffer(n);
  const KernelContext wide_ctx{
      args, {out.get(), ctx.output.shape, DType::kFloat32}, ctx.attrs, ctx.device_state};
  MT_RETURN_IF_ERROR(kFloatKernel(wide_ctx));
  convert(DType::kFloat32, out.get(), kHalf, ctx.output.data, n);
  return absl::OkStatus();
}

}  // namespace mt::cpu
