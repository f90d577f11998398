// GPU kernel of SelectV2 (mt::where): out = condition ? x : y. When no input broadcasts
// (each has the output's element count) every thread does one element of a flat map;
// otherwise each thread splits its output index into SelectPlan coordinates
// (kernels/select.h) with IndexDividers and reads each operand at the sum of coordinates
// times strides.
#include "kernels/cuda/elementwise.h"
#include "kernels/select.h"

namespace mt::cuda {
namespace {

template <typename T>
struct SelectArgs {
  const bool* c;
  const T* x;
  const T* y;
  T* out;
  int64_t n;
  int rank;
  int64_t strides[3][kMaxBroadcastRank];
  IndexDivider dims[kMaxBroadcastRank];
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    select_flat(const bool* c, const T* x, const T* y, T* out, int64_t n) {
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * kThreads) {
    out[i] = c[i] ? x[i] : y[i];
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) select_plan(SelectArgs<T> p) {
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < p.n;
       i += int64_t{gridDim.x} * kThreads) {
    uint64_t rest = static_cast<uint64_t>(i);
    int64_t oc = 0, ox = 0, oy = 0;
#pragma unroll
    for (int k = kMaxBroadcastRank - 1; k >= 0; --k) {
      if (k >= p.rank) continue;
      int64_t coord = static_cast<int64_t>(rest);
      if (k > 0) {
        const uint64_t outer = p.dims[k].div(rest);
        coord = static_cast<int64_t>(rest - outer * p.dims[k].d);
        rest = outer;
      }
      oc += coord * p.strides[0][k];
      ox += coord * p.strides[1][k];
      oy += coord * p.strides[2][k];
    }
    p.out[i] = p.c[oc] ? p.x[ox] : p.y[oy];
  }
}

template <typename T>
absl::Status run_select(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kSelectV2;
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  const bool* c = static_cast<const bool*>(ctx.inputs[0].data);
  const T* x = static_cast<const T*>(ctx.inputs[1].data);
  const T* y = static_cast<const T*>(ctx.inputs[2].data);
  T* out = static_cast<T*>(ctx.output.data);
  const GpuState& state = gpu_state(ctx);
  const unsigned grid = std::min<int64_t>(grid_for(n, kThreads), int64_t{sm_count(state)} * 32);
  bool flat = true;
  for (const TensorArg& in : ctx.inputs) flat = flat && in.shape->num_elements() == n;
  if (flat) return launch(kOp, state, grid, kThreads, &select_flat<T>, c, x, y, out, n);
  SelectPlan plan;
  MT_CHECK(make_select_plan(*ctx.inputs[0].shape, *ctx.inputs[1].shape, *ctx.inputs[2].shape,
                            *ctx.output.shape, &plan));  // by infer_select
  SelectArgs<T> p{c, x, y, out, n, plan.rank, {}, {}};
  for (int k = 0; k < plan.rank; ++k) {
    for (int o = 0; o < 3; ++o) p.strides[o][k] = plan.strides[o][k];
    p.dims[k] = IndexDivider::make(plan.dims[k], n);
  }
  return launch(kOp, state, grid, kThreads, &select_plan<T>, p);
}

}  // namespace

MT_OP_KERNELS(SelectV2) {
  return add_gpu_kernels(registry, OpId::kSelectV2, AllTypes{}, [](auto tag) -> KernelFn {
    return &run_select<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
