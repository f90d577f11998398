// CPU kernel of TopKV2 (Note [Pads and top k] in kernels/pad_shape.cc), in kernels/top_k.h's
// order: for a small k one pass over each last-axis row keeping the best k, else the row's
// indices partially sorted; the first k written out with their values. Rows split across
// threads.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/top_k.h"

namespace mt::cpu {
namespace {

constexpr int64_t kSmallK = 16;

// A row's top k for k <= kSmallK: one pass keeping the best k in order, each new element
// inserted after those it does not rank before (a later index loses a tie).
template <typename C, typename T>
void small_top_k(const T* row, int64_t cols, int64_t k, T* values, int32_t* indices) {
  C best[kSmallK];
  int32_t at[kSmallK];
  int64_t count = 0;
  for (int64_t c = 0; c < cols; ++c) {
    const C v = static_cast<C>(row[c]);
    if (count == k && !internal::ranks_before(v, c, best[k - 1], int64_t{at[k - 1]})) continue;
    int64_t p = count < k ? count++ : k - 1;
    for (; p > 0 && internal::ranks_before(v, c, best[p - 1], int64_t{at[p - 1]}); --p) {
      best[p] = best[p - 1];
      at[p] = at[p - 1];
    }
    best[p] = v;
    at[p] = static_cast<int32_t>(c);
  }
  for (int64_t j = 0; j < k; ++j) {
    values[j] = row[at[j]];
    indices[j] = at[j];
  }
}

template <typename T>
absl::Status top_k_kernel(const KernelContext& ctx) {
  using C = std::conditional_t<kIsHalf<T>, float, T>;
  const Shape& shape = *ctx.inputs[0].shape;
  const int64_t cols = shape.dim(shape.rank() - 1), k = ctx.attrs->k;
  if (k == 0 || cols == 0) return absl::OkStatus();
  const int64_t rows = shape.num_elements() / cols;
  const T* in = input_data<T>(ctx, 0);
  T* values = output_data<T>(ctx);
  int32_t* indices = static_cast<int32_t*>(ctx.outputs[1].data);
  parallel_for(rows, std::max<int64_t>(1, 16384 / cols), [&](int64_t begin, int64_t end) {
    std::vector<int32_t> order(static_cast<size_t>(cols));
    for (int64_t r = begin; r < end; ++r) {
      const T* row = in + r * cols;
      if (k <= kSmallK) {
        small_top_k<C>(row, cols, k, values + r * k, indices + r * k);
        continue;
      }
      std::iota(order.begin(), order.end(), 0);
      const auto before = [row](int32_t a, int32_t b) {
        return internal::ranks_before(static_cast<C>(row[a]), a, static_cast<C>(row[b]), b);
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        values[r * k + j] = row[order[j]];
        indices[r * k + j] = order[j];
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(TopKV2) {
  return add_kernels(registry, OpId::kTopKV2, NumericTypes{}, [](auto tag) -> KernelFn {
    return &top_k_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
