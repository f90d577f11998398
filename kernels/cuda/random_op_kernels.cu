// GPU kernels of the random ops (Note [Random ops] in kernels/random_shape.cc): the fill of
// cuda/random_kernels.h, then, for float outputs whose parameters change a bit, the multiply
// and add of kernels/random_ops.h in a second pass, each rounded (__fmul_rn, __fadd_rn: nvcc
// would otherwise fuse them), so that the bits are the CPU kernels' and TensorFlow's.
#include <type_traits>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/half_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/random_kernels.h"
#include "kernels/random_ops.h"

namespace mt::cuda {
namespace {

__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

// Scales and shifts out[0, n) in place, each step rounded to T.
template <typename T>
__global__ void affine_kernel(T* out, int64_t n, Compute<T> scale, Compute<T> shift, bool multiply,
                              bool add) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    T v = out[i];
    if (multiply) v = from_compute<T>(mul_rn(to_compute(v), scale));
    if (add) v = from_compute<T>(add_rn(to_compute(v), shift));
    out[i] = v;
  }
}

// Returns the fill's error as the op's ("[<op>] cudaLaunchKernel failed: ...").
absl::Status op_status(OpId op, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("[", op_name(op), "]", status.message().substr(13)));
}

template <OpId kOp, typename T>
absl::Status run_random_float(const KernelContext& ctx) {
  const GpuState& state = gpu_state(ctx);
  const int64_t n = ctx.output.shape->num_elements();
  MT_RETURN_IF_ERROR(
      op_status(kOp, launch_random_fill(internal::random_op_distribution(kOp), dtype_of<T>(),
                                        ctx.attrs->philox, ctx.output.data, n, state.stream)));
  const internal::RandomAffine a = internal::random_affine<T>(kOp, *ctx.attrs);
  if (n == 0 || !(a.multiply || a.add)) return absl::OkStatus();
  return launch(kOp, state, grid_for(n, kThreads), kThreads, &affine_kernel<T>,
                static_cast<T*>(ctx.output.data), n, static_cast<Compute<T>>(a.scale),
                static_cast<Compute<T>>(a.shift), a.multiply, a.add);
}

template <OpId kOp>
absl::Status run_random_int(const KernelContext& ctx) {
  const OpAttrs& attrs = *ctx.attrs;
  const auto range = static_cast<uint64_t>(attrs.maxval.i) - static_cast<uint64_t>(attrs.minval.i);
  return op_status(kOp, launch_random_fill_uniform_int(
                            ctx.output.dtype, attrs.philox, attrs.minval.i, range, ctx.output.data,
                            ctx.output.shape->num_elements(), gpu_state(ctx).stream));
}

// The kernels of a random row: its dtypes, float or integer, pick the kernel.
template <OpId kOp>
absl::Status add_random(KernelRegistry& registry) {
  if constexpr (op_dtypes(kOp) == kRandomIntDTypes) {
    return add_gpu_kernels(registry, kOp, TypesIn<kRandomIntDTypes>{},
                           [](auto) -> KernelFn { return &run_random_int<kOp>; });
  } else {
    return add_gpu_kernels(registry, kOp, FloatTypes{}, [](auto tag) -> KernelFn {
      return &run_random_float<kOp, typename decltype(tag)::type>;
    });
  }
}

}  // namespace

#define MT_RANDOM_KERNELS(Name, ...) \
  MT_OP_KERNELS(Name) { return add_random<OpId::k##Name>(registry); }
MT_RANDOM_OPS(MT_RANDOM_KERNELS)
#undef MT_RANDOM_KERNELS

}  // namespace mt::cuda
