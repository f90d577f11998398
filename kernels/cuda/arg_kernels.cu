// GPU kernels of ArgMax and ArgMin, the input seen as (outer, axis, inner), with the CPU's
// rule (kernels/cpu/arg_kernels.cc): the first index of the strictly largest (smallest)
// value, starting from the type's lowest (highest) value, so a NaN never wins.
//
// Note [Arg reduction layout]: with inner == 1 (the last axis: a classifier's scores) a warp
// scans one row, its lanes reading neighbouring elements, and combines (value, index) pairs
// with shuffles, the lower index winning ties; otherwise each thread scans one output
// element's axis, neighbouring threads reading neighbouring elements of each slice.
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

template <typename T>
using Wide = Compute<T>;  // float32 for the 2-byte floats

// The start value of the scan: nothing beats it but a strictly better element.
template <bool kMax, typename C>
__device__ __forceinline__ C start_value() {
  if constexpr (std::is_floating_point_v<C>) {
    if constexpr (std::is_same_v<C, float>) return kMax ? -FLT_MAX : FLT_MAX;
    return kMax ? -DBL_MAX : DBL_MAX;
  } else {
    // numeric_limits is host-only without --expt-relaxed-constexpr; the integers are 32 or 64 bits
    if constexpr (sizeof(C) == 4) {
      return kMax ? INT32_MIN : INT32_MAX;
    } else {
      return kMax ? INT64_MIN : INT64_MAX;
    }
  }
}

template <bool kMax, typename C>
__device__ __forceinline__ bool better(C v, C best) {
  return kMax ? v > best : v < best;
}

// Note [Arg reduction layout], inner == 1: one warp per row.
template <bool kMax, typename T, typename Index>
__global__ void __launch_bounds__(kThreads)
    arg_rows(const T* __restrict__ in, Index* __restrict__ out, int64_t rows, int64_t len) {
  using C = Wide<T>;
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (kThreads / 32);
  for (int64_t row = int64_t{blockIdx.x} * (kThreads / 32) + threadIdx.x / 32; row < rows;
       row += warps) {
    const T* x = in + row * len;
    C best = start_value<kMax, C>();
    int64_t arg = 0;
    for (int64_t k = lane; k < len; k += 32) {
      const C v = to_compute(x[k]);
      if (better<kMax>(v, best)) {
        best = v;
        arg = k;
      }
    }
    // A lane that never improved on the start value keeps index 0 and the start value.
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      const C other = __shfl_xor_sync(0xffffffffu, best, offset);
      const int64_t other_arg = __shfl_xor_sync(0xffffffffu, arg, offset);
      if (better<kMax>(other, best) || (!better<kMax>(best, other) && other_arg < arg)) {
        best = other;
        arg = other_arg;
      }
    }
    if (lane == 0) out[row] = static_cast<Index>(arg);
  }
}

// inner > 1: one thread per output element.
template <bool kMax, typename T, typename Index>
__global__ void __launch_bounds__(kThreads)
    arg_columns(const T* __restrict__ in, Index* __restrict__ out, int64_t n, int64_t len,
                IndexDivider inner) {
  using C = Wide<T>;
  for (int64_t o = int64_t{blockIdx.x} * kThreads + threadIdx.x; o < n;
       o += int64_t{gridDim.x} * kThreads) {
    const int64_t outer = static_cast<int64_t>(inner.div(o));
    const int64_t i = o - outer * static_cast<int64_t>(inner.d);
    const T* x = in + outer * len * static_cast<int64_t>(inner.d) + i;
    C best = start_value<kMax, C>();
    int64_t arg = 0;
    for (int64_t k = 0; k < len; ++k) {
      const C v = to_compute(x[k * static_cast<int64_t>(inner.d)]);
      if (better<kMax>(v, best)) {
        best = v;
        arg = k;
      }
    }
    out[o] = static_cast<Index>(arg);
  }
}

template <bool kMax, typename T, typename Index>
absl::Status launch_arg(const KernelContext& ctx, int64_t len, int64_t inner) {
  const OpId op = kMax ? OpId::kArgMax : OpId::kArgMin;
  const GpuState& state = gpu_state(ctx);
  const int64_t n = ctx.output.shape->num_elements();
  const T* in = static_cast<const T*>(ctx.inputs[0].data);
  Index* out = static_cast<Index*>(ctx.output.data);
  const int64_t cap = int64_t{sm_count(state)} * 16;
  if (inner == 1) {
    const unsigned grid = std::min<int64_t>(grid_for(n, kThreads / 32), cap);
    return launch(op, state, grid, kThreads, &arg_rows<kMax, T, Index>, in, out, n, len);
  }
  const unsigned grid = std::min<int64_t>(grid_for(n, kThreads), cap);
  return launch(op, state, grid, kThreads, &arg_columns<kMax, T, Index>, in, out, n, len,
                IndexDivider::make(inner, n));
}

template <bool kMax, typename T>
absl::Status run_arg(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int rank = shape.rank();
  const int axis = static_cast<int>(ctx.attrs->axis < 0 ? ctx.attrs->axis + rank : ctx.attrs->axis);
  // An output with no element first: the dimensions beside its 0 may multiply past int64.
  if (ctx.output.shape->num_elements() == 0) return absl::OkStatus();
  int64_t inner = 1;
  for (int d = axis + 1; d < rank; ++d) inner *= shape.dim(d);
  if (ctx.output.dtype == DType::kInt32) {
    return launch_arg<kMax, T, int32_t>(ctx, shape.dim(axis), inner);
  }
  return launch_arg<kMax, T, int64_t>(ctx, shape.dim(axis), inner);
}

template <bool kMax>
absl::Status add_arg(KernelRegistry& registry, OpId op) {
  return add_gpu_kernels(registry, op, NumericTypes{}, [](auto tag) -> KernelFn {
    return &run_arg<kMax, typename decltype(tag)::type>;
  });
}

}  // namespace

MT_OP_KERNELS(ArgMax) { return add_arg<true>(registry, OpId::kArgMax); }
MT_OP_KERNELS(ArgMin) { return add_arg<false>(registry, OpId::kArgMin); }

}  // namespace mt::cuda
