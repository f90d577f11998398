// GPU kernel of ClipByValue: as the CPU's (clip_kernels.cc), a thread per output element
// reading the bounds through the SelectPlan of their broadcast to t (kernels/select.h).
#include "kernels/cuda/elementwise.h"
#include "kernels/select.h"

namespace mt::cuda {
namespace {

template <typename T>
struct ClipArgs {
  const T* t;
  const T* lo;
  const T* hi;
  T* out;
  int64_t n;
  int rank;
  int64_t strides[3][kMaxBroadcastRank];
  IndexDivider dims[kMaxBroadcastRank];
};

template <typename T>
__device__ __forceinline__ T clip(T t, T lo, T hi) {
  const T v = to_compute(t) > to_compute(hi) ? hi : t;
  return to_compute(v) < to_compute(lo) ? lo : v;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) clip_plan(ClipArgs<T> p) {
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < p.n;
       i += int64_t{gridDim.x} * kThreads) {
    uint64_t rest = static_cast<uint64_t>(i);
    int64_t o[3] = {0, 0, 0};
#pragma unroll
    for (int k = kMaxBroadcastRank - 1; k >= 0; --k) {
      if (k >= p.rank) continue;
      int64_t coord = static_cast<int64_t>(rest);
      if (k > 0) {
        const uint64_t outer = p.dims[k].div(rest);
        coord = static_cast<int64_t>(rest - outer * p.dims[k].d);
        rest = outer;
      }
#pragma unroll
      for (int s = 0; s < 3; ++s) o[s] += coord * p.strides[s][k];
    }
    p.out[i] = clip(p.t[o[0]], p.lo[o[1]], p.hi[o[2]]);
  }
}

template <typename T>
absl::Status run_clip(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  SelectPlan plan;
  MT_CHECK(make_select_plan(*ctx.inputs[0].shape, *ctx.inputs[1].shape, *ctx.inputs[2].shape,
                            *ctx.output.shape, &plan));  // by infer_clip_by_value
  ClipArgs<T> p{static_cast<const T*>(ctx.inputs[0].data),
                static_cast<const T*>(ctx.inputs[1].data),
                static_cast<const T*>(ctx.inputs[2].data),
                static_cast<T*>(ctx.output.data),
                n,
                plan.rank,
                {},
                {}};
  for (int k = 0; k < plan.rank; ++k) {
    for (int s = 0; s < 3; ++s) p.strides[s][k] = plan.strides[s][k];
    p.dims[k] = IndexDivider::make(plan.dims[k], n);
  }
  const GpuState& state = gpu_state(ctx);
  const unsigned grid = std::min<int64_t>(grid_for(n, kThreads), int64_t{sm_count(state)} * 32);
  return launch(OpId::kClipByValue, state, grid, kThreads, &clip_plan<T>, p);
}

}  // namespace

MT_OP_KERNELS(ClipByValue) {
  return add_gpu_kernels(registry, OpId::kClipByValue, NumericTypes{}, [](auto tag) -> KernelFn {
    return &run_clip<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
