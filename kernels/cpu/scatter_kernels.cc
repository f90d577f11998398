// CPU kernels of ScatterNd, TensorScatterUpdate and TensorScatterAdd (Note [Scatter] in
// kernels/scatter.h): every index row is checked first; then the output starts as zeros or
// the tensor's copy and the updates go in one after another, in order, so that duplicates
// add (and the last one wins for TensorScatterUpdate) the same way on every run. Threads
// split the slices' columns: each owns its columns through all the updates. Integers wrap;
// the 2-byte floats add in float32 and round each sum.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/scatter.h"

namespace mt::cpu {
namespace {

template <typename I>
absl::Status check_rows(OpId op, const ScatterLayout& l, const I* idx, const Shape& out,
                        int64_t* offsets) {
  for (int64_t n = 0; n < l.num_updates; ++n) {
    offsets[n] = scatter_offset(l, idx + n * l.depth);
    if (offsets[n] >= 0) continue;
    int64_t row[kMaxScatterDepth];
    for (int k = 0; k < l.depth; ++k) row[k] = static_cast<int64_t>(idx[n * l.depth + k]);
    return internal::scatter_index_error(op, n, row, l.depth, out);
  }
  return absl::OkStatus();
}

template <OpId kOp, typename T, typename I>
absl::Status scatter_as(const KernelContext& ctx) {
  constexpr bool kNd = kOp == OpId::kScatterNd;
  const TensorArg& indices = ctx.inputs[kNd ? 0 : 1];
  const TensorArg& updates = ctx.inputs[kNd ? 1 : 2];
  const Shape& shape = *ctx.output.shape;
  const ScatterLayout l = make_scatter_layout(shape, *indices.shape);
  std::vector<int64_t> offsets(static_cast<size_t>(l.num_updates));
  MT_RETURN_IF_ERROR(
      check_rows(kOp, l, static_cast<const I*>(indices.data), shape, offsets.data()));
  T* out = output_data<T>(ctx);
  const int64_t total = shape.num_elements();
  if (total == 0) return absl::OkStatus();
  if (kNd) {
    std::fill(out, out + total, T(0));
  } else {
    std::memcpy(out, ctx.inputs[0].data, static_cast<size_t>(total) * sizeof(T));
  }
  const T* upd = static_cast<const T*>(updates.data);
  const int64_t slice = l.slice;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(l.num_updates, 1));
  parallel_for(slice, grain, [&](int64_t begin, int64_t end) {
    for (int64_t n = 0; n < l.num_updates; ++n) {
      T* dst = out + offsets[n] * slice;
      const T* src = upd + n * slice;
      for (int64_t j = begin; j < end; ++j) {
        if constexpr (kOp == OpId::kTensorScatterUpdate) {
          dst[j] = src[j];
        } else if constexpr (kIsHalf<T>) {
          dst[j] = static_cast<T>(static_cast<float>(dst[j]) + static_cast<float>(src[j]));
        } else {
          dst[j] = add_op(dst[j], src[j]);
        }
      }
    }
  });
  return absl::OkStatus();
}

template <OpId kOp, typename T>
absl::Status scatter_kernel(const KernelContext& ctx) {
  const DType index = ctx.inputs[kOp == OpId::kScatterNd ? 0 : 1].dtype;
  return index == DType::kInt32 ? scatter_as<kOp, T, int32_t>(ctx)
                                : scatter_as<kOp, T, int64_t>(ctx);
}

template <OpId kOp, typename Types>
absl::Status add_scatter(KernelRegistry& registry) {
  return add_kernels(registry, kOp, Types{}, [](auto tag) -> KernelFn {
    return &scatter_kernel<kOp, typename decltype(tag)::type>;
  });
}

}  // namespace

MT_OP_KERNELS(ScatterNd) { return add_scatter<OpId::kScatterNd, NumericTypes>(registry); }
MT_OP_KERNELS(TensorScatterUpdate) {
  return add_scatter<OpId::kTensorScatterUpdate, AllTypes>(registry);
}
MT_OP_KERNELS(TensorScatterAdd) {
  return add_scatter<OpId::kTensorScatterAdd, NumericTypes>(registry);
}

}  // namespace mt::cpu
