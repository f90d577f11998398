// GPU kernel of UnsortedSegmentSum: the output zeroed, then one thread per data element adds
// it into its segment's row with atomicAdd (the order of the additions varies between runs,
// as in TensorFlow's GPU kernel). A negative id drops its row, as on the CPU; an id at or
// past num_segments drops it too and is reported as the CPU's InvalidArgument at the next
// synchronisation (Note [GPU index faults] in index_fault.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/report_index.h"

namespace mt::cuda {
namespace {

template <typename T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, bfloat16>) {
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(p), __ushort_as_bfloat16(v.bits));
  } else if constexpr (std::is_same_v<T, float16>) {
    atomicAdd(reinterpret_cast<__half*>(p), __ushort_as_half(v.bits));
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    atomicAdd(p, v);  // float, double, int32
  }
}

template <typename T, typename Id>
__global__ void __launch_bounds__(kThreads)
    segment_sum(const T* __restrict__ data, const Id* __restrict__ ids, T* out, int64_t n,
                IndexDivider inner, int64_t segments, IndexReport report) {
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * kThreads) {
    const int64_t row = static_cast<int64_t>(inner.div(i));
    const int64_t col = i - row * static_cast<int64_t>(inner.d);
    const int64_t id = static_cast<int64_t>(ids[row]);
    if (id >= 0 && id < segments) {
      atomic_add(out + id * static_cast<int64_t>(inner.d) + col, data[i]);
    } else if (id >= segments && col == 0) {
      report_bad_index(report, row, id, segments);
    }
  }
}

template <typename T>
absl::Status run_segment_sum(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kUnsortedSegmentSum;
  const GpuState& state = gpu_state(ctx);
  const IndexReport report = index_report(kOp, state, nullptr);  // the CPU names a flat offset
  const int64_t out_n = ctx.output.shape->num_elements();
  const int64_t n = ctx.inputs[0].shape->num_elements();
  if (out_n > 0) {
    MT_RETURN_IF_ERROR(
        cuda_status(kOp, "cudaMemsetAsync",
                    cudaMemsetAsync(ctx.output.data, 0, out_n * sizeof(T), state.stream)));
  }
  if (out_n == 0 || n == 0) {  // nothing to add, but the CPU still checks the ids
    return launch_index_check(kOp, state, ctx.inputs[1], ctx.attrs->depth, true, report);
  }
  const int64_t rows = ctx.inputs[1].shape->num_elements();
  const IndexDivider inner = IndexDivider::make(n / rows, n);
  const T* data = static_cast<const T*>(ctx.inputs[0].data);
  T* out = static_cast<T*>(ctx.output.data);
  const unsigned grid = std::min<int64_t>(grid_for(n, kThreads), int64_t{sm_count(state)} * 32);
  if (ctx.inputs[1].dtype == DType::kInt32) {
    return launch(kOp, state, grid, kThreads, &segment_sum<T, int32_t>, data,
                  static_cast<const int32_t*>(ctx.inputs[1].data), out, n, inner, ctx.attrs->depth,
                  report);
  }
  return launch(kOp, state, grid, kThreads, &segment_sum<T, int64_t>, data,
                static_cast<const int64_t*>(ctx.inputs[1].data), out, n, inner, ctx.attrs->depth,
                report);
}

}  // namespace

MT_OP_KERNELS(UnsortedSegmentSum) {
  return add_gpu_kernels(
      registry, OpId::kUnsortedSegmentSum, NumericTypes{},
      [](auto tag) -> KernelFn { return &run_segment_sum<typename decltype(tag)::type>; });
}

}  // namespace mt::cuda
