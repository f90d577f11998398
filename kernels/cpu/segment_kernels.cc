// CPU kernel of UnsortedSegmentSum: out[ids[i]] += data[i] row by row, in order (one thread:
// the sums come out the same on every run). A negative id drops its row, as in TensorFlow;
// an id at or past num_segments is InvalidArgument (the GPU drops it too and reports it at
// the next synchronisation: Note [GPU index faults] in kernels/cuda/index_fault.h).
#include <cstring>

#include "kernels/cpu/cpu_kernels.h"

namespace mt::cpu {
namespace {

template <typename T>
T add_value(T a, T b) {
  if constexpr (kIsHalf<T>) {
    return T(static_cast<float>(a) + static_cast<float>(b));  // each sum rounded once
  } else {
    return add_op(a, b);
  }
}

template <typename T, typename Id>
absl::Status segment_sum(const KernelContext& ctx) {
  const int64_t rows = ctx.inputs[1].shape->num_elements();
  const int64_t segments = ctx.attrs->depth;
  const int64_t inner = rows == 0 ? 0 : ctx.inputs[0].shape->num_elements() / rows;
  const Id* ids = input_data<Id>(ctx, 1);
  for (int64_t i = 0; i < rows; ++i) {
    if (ids[i] >= segments) {
      return internal::op_error(OpId::kUnsortedSegmentSum, "segment_ids[", i, "] = ", ids[i],
                                " is out of range [0, ", segments, ")");
    }
  }
  const T* data = input_data<T>(ctx, 0);
  T* out = output_data<T>(ctx);
  const int64_t n = ctx.output.shape->num_elements();
  if (n > 0) std::memset(static_cast<void*>(out), 0, n * sizeof(T));
  for (int64_t i = 0; i < rows; ++i) {
    if (ids[i] < 0) continue;
    T* o = out + ids[i] * inner;
    const T* d = data + i * inner;
    for (int64_t j = 0; j < inner; ++j) o[j] = add_value(o[j], d[j]);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status segment_kernel(const KernelContext& ctx) {
  if (ctx.inputs[1].dtype == DType::kInt32) return segment_sum<T, int32_t>(ctx);
  return segment_sum<T, int64_t>(ctx);
}

}  // namespace

MT_OP_KERNELS(UnsortedSegmentSum) {
  return add_kernels(registry, OpId::kUnsortedSegmentSum, NumericTypes{}, [](auto tag) -> KernelFn {
    return &segment_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
