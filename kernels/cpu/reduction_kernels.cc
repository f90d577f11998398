// CPU kernels of the reductions Sum, Mean, Max, Min, Prod, Any and All.
//
// Note [Reduction layout]: the input is viewed with its size-1 dimensions dropped and
// neighbouring dimensions merged when both are kept or both reduced, so dimensions
// alternate between kept and reduced runs. The output starts at the reducer's identity;
// each innermost row of the input is then either reduced to one value (innermost run
// reduced) or combined element-wise into a row of the output (innermost run kept).
//
// Note [Reduction order]: a run of at least 2 * kBlock reduced elements is summed as
// kBlock-element partial sums (in parallel), then the partials in order; shorter runs are
// summed by one call of the ISA level's loop. The order depends on the shape and the ISA
// level only, never on the thread count, so results are the same at any thread count.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/widened_kernel.h"

namespace mt::cpu {
namespace {

constexpr int64_t kBlock = 65536;  // elements per partial result of a long run
constexpr int64_t kGrain = 32768;  // elements per thread below which splitting costs more

struct Layout {
  Shape::Dims dims;            // merged dimensions, outermost first
  internal::AxisMask reduced;  // whether each merged dimension is reduced
};

Layout merge_dims(const Shape& shape, const internal::AxisMask& mask) {
  Layout layout;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape.dim(i) == 1) continue;
    if (!layout.dims.empty() && layout.reduced.back() == mask[i]) {
      layout.dims.back() *= shape.dim(i);
    } else {
      layout.dims.push_back(shape.dim(i));
      layout.reduced.push_back(mask[i]);
    }
  }
  return layout;
}

// The loops of one (reducer, dtype) and the identity they start from. The accumulators are
// of the input's type, or float32 for bfloat16 and float16 (Note [Half reductions]).
struct Reducer {
  ReduceLoop reduce;          // a run of inputs into an accumulator
  AccumulateLoop accumulate;  // a row of inputs into a row of accumulators
  ReduceLoop combine;         // a run of accumulators (the partials) into an accumulator
  size_t in_elem, elem;       // bytes per input, per accumulator
  const void* identity;
};

// Combines the run in[0 .. n) into *out (Note [Reduction order]).
void reduce_run(const Reducer& r, const char* in, int64_t n, char* out) {
  if (n < 2 * kBlock) {
    r.reduce(in, n, out);
    return;
  }
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<char> partials(blocks * r.elem);
  for (int64_t b = 0; b < blocks; ++b) std::memcpy(&partials[b * r.elem], r.identity, r.elem);
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      r.reduce(in + b * kBlock * r.in_elem, std::min(kBlock, n - b * kBlock),
               &partials[b * r.elem]);
    }
  });
  r.combine(partials.data(), blocks, out);
}

// Reduces `in` into `out` serially, following Note [Reduction layout].
void reduce_serial(const Reducer& r, const Layout& layout, int first, const char* in, char* out) {
  const int rank = static_cast<int>(layout.dims.size());
  const int last = rank - 1;
  const int64_t inner = layout.dims[last];
  Shape::Dims out_stride(rank), index(rank);
  int64_t stride = 1, rows = 1;
  for (int k = last; k >= first; --k) {
    out_stride[k] = layout.reduced[k] ? 0 : stride;
    if (!layout.reduced[k]) stride *= layout.dims[k];
    if (k < last) rows *= layout.dims[k];
  }
  int64_t o = 0;
  for (int64_t row = 0; row < rows; ++row) {
    const char* src = in + row * inner * r.in_elem;
    if (layout.reduced[last]) {
      r.reduce(src, inner, out + o * r.elem);
    } else {
      r.accumulate(src, out + o * r.elem, inner);
    }
    for (int k = last - 1; k >= first; --k) {
      o += out_stride[k];
      if (++index[k] < layout.dims[k]) break;
      o -= out_stride[k] * layout.dims[k];
      index[k] = 0;
    }
  }
}

// Reduces `in` into `out`, split across threads where the layout allows.
void reduce_into(const Reducer& r, const Layout& layout, const char* in, char* out) {
  const int rank = static_cast<int>(layout.dims.size());
  if (rank == 0) return r.reduce(in, 1, out);
  const int64_t d0 = layout.dims[0];
  if (rank == 1 && layout.reduced[0]) return reduce_run(r, in, d0, out);
  int64_t rest = 1;  // elements under one index of the outermost dimension
  for (int k = 1; k < rank; ++k) rest *= layout.dims[k];
  if (rank == 1) {  // [K]: nothing reduced, each element combines into its own output
    return parallel_for(d0, kGrain, [&](int64_t begin, int64_t end) {
      r.accumulate(in + begin * r.in_elem, out + begin * r.elem, end - begin);
    });
  }
  if (!layout.reduced[0]) {  // [K, ...]: each outer index has its own output slice
    int64_t out_rest = 1;
    for (int k = 1; k < rank; ++k) out_rest *= layout.reduced[k] ? 1 : layout.dims[k];
    if (rank == 2 && rest >= 2 * kBlock) {  // few long runs: split each run instead
      for (int64_t i = 0; i < d0; ++i)
        reduce_run(r, in + i * rest * r.in_elem, rest, out + i * r.elem);
      return;
    }
    parallel_for(d0, (kGrain + rest - 1) / rest, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        reduce_serial(r, layout, 1, in + i * rest * r.in_elem, out + i * out_rest * r.elem);
      }
    });
  } else if (rank == 2) {  // [R, K]: split the kept columns; each thread walks every row
    const int64_t cols = layout.dims[1];
    parallel_for(cols, std::max<int64_t>(64, kGrain / d0), [&](int64_t begin, int64_t end) {
      for (int64_t i = 0; i < d0; ++i) {
        r.accumulate(in + (i * cols + begin) * r.in_elem, out + begin * r.elem, end - begin);
      }
    });
  } else {
    reduce_serial(r, layout, 0, in, out);
  }
}

template <typename T>
T sum_identity() {
  return T(0);
}

template <typename T>
T max_identity() {
  if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::lowest();
}

template <typename T>
T min_identity() {
  if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::max();
}

// Returns the value a reduction starts from (Note [Reductions] in op_def.h).
template <OpId kOp, typename T>
T identity_of() {
  if constexpr (kOp == OpId::kMax) return max_identity<T>();
  if constexpr (kOp == OpId::kMin) return min_identity<T>();
  if constexpr (kOp == OpId::kProd) return T(1);
  if constexpr (kOp == OpId::kAll) return T(true);
  return sum_identity<T>();  // Sum, Mean, Any (false)
}

// Mean: divides each sum by the count of reduced elements (Note [Reductions] in op_def.h).
template <typename T>
void divide_by_count(T* out, int64_t n, int64_t count) {
  if constexpr (std::is_integral_v<T>) {
    if (count == 0) return;  // the sums are 0
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(int64_t{out[i]} / count);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] /= static_cast<T>(count);
  }
}

// Reduces input 0 of ctx into out, the output's n elements as accumulators of type Acc.
template <OpId kOp, typename T, typename Acc>
void reduce(const KernelContext& ctx, Acc* out) {
  constexpr int kReduce = static_cast<int>(kOp == OpId::kMean ? OpId::kSum : kOp);
  static const Acc identity = identity_of<kOp, Acc>();
  const int d = static_cast<int>(dtype_of<T>()), a = static_cast<int>(dtype_of<Acc>());
  const Reducer r{cpu_loops().reduce[kReduce][d],
                  cpu_loops().accumulate[kReduce][d],
                  cpu_loops().reduce[kReduce][a],
                  sizeof(T),
                  sizeof(Acc),
                  &identity};
  const Shape& in_shape = *ctx.inputs[0].shape;
  const int64_t n = ctx.output.shape->num_elements();
  for (int64_t i = 0; i < n; ++i) out[i] = identity;
  if (n == 0) return;
  internal::AxisMask mask;
  MT_CHECK(internal::reduction_mask(kOp, in_shape, *ctx.attrs, &mask).ok());
  if (in_shape.num_elements() != 0) {
    reduce_into(r, merge_dims(in_shape, mask), static_cast<const char*>(ctx.inputs[0].data),
                reinterpret_cast<char*>(out));
  }
  if constexpr (kOp == OpId::kMean) {
    // The product of some dimensions of a valid shape fits, unless another one is 0: then
    // nothing is reduced and the count is 0.
    int64_t count = in_shape.num_elements() == 0 ? 0 : 1;
    for (int i = 0; i < in_shape.rank() && count != 0; ++i) {
      count *= mask[i] ? in_shape.dim(i) : 1;
    }
    divide_by_count(out, n, count);
  }
}

// Note [Half reductions]: bfloat16 and float16 accumulate in float32 (a float32 buffer of the
// output's size) and round once at the end. Their loops (isa/half_loops.cc) widen each run
// and call the level's float32 loop on it, so the result is the float32 kernel's on the
// widened tensor, rounded once (Note [Half kernels on the CPU] in widened_kernel.h).
template <OpId kOp, typename T>
absl::Status reduction_kernel(const KernelContext& ctx) {
  if constexpr (kIsHalf<T>) {
    const int64_t n = ctx.output.shape->num_elements();
    WideBuffer acc = wide_buffer(n);
    reduce<kOp, T>(ctx, acc.get());
    convert(DType::kFloat32, acc.get(), dtype_of<T>(), ctx.output.data, n);
  } else {
    reduce<kOp, T>(ctx, output_data<T>(ctx));
  }
  return absl::OkStatus();
}

// Registers reduction_kernel<kOp, T> for every T of `types` (the op's row).
template <OpId kOp, typename Types = NumericTypes>
absl::Status add_reduction(KernelRegistry& registry) {
  return add_kernels(registry, kOp, Types{}, [](auto tag) -> KernelFn {
    return &reduction_kernel<kOp, typename decltype(tag)::type>;
  });
}

}  // namespace

MT_OP_KERNELS(Sum) { return add_reduction<OpId::kSum>(registry); }
MT_OP_KERNELS(Mean) { return add_reduction<OpId::kMean>(registry); }
MT_OP_KERNELS(Max) { return add_reduction<OpId::kMax>(registry); }
MT_OP_KERNELS(Min) { return add_reduction<OpId::kMin>(registry); }
MT_OP_KERNELS(Prod) { return add_reduction<OpId::kProd>(registry); }
MT_OP_KERNELS(Any) { return add_reduction<OpId::kAny, TypeList<bool>>(registry); }
MT_OP_KERNELS(All) { return add_reduction<OpId::kAll, TypeList<bool>>(registry); }

}  // namespace mt::cpu
