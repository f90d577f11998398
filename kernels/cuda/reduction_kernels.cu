// GPU kernels of the reductions Sum, Mean and Max, with the CPU kernels' semantics (Note
// [Reductions] in kernels/op_def.h): over zero elements Sum gives 0, Max the lowest value
// (-inf for floats) and Mean NaN for floats, 0 for integers; integer Mean truncates; Max
// propagates NaN. Integer sums wrap around and are exact in any order; float sums are
// taken in Compute<T> (T itself, float32 for bfloat16 and float16: Note [Half arithmetic
// on the GPU] in half_math.h), each thread over a strided slice of r, then as a tree across
// the block, and rounded to T once at the end. A whole contiguous input reduced to one value
// takes a single kernel instead (Note [One-pass full reduction] in reduce_all.h).
//
// Note [Vectorised reduction]: when the reduced elements of each output are one contiguous
// run (a single reduced dimension of stride 1) whose length is a multiple of kVec<T>, and
// the input is 16-byte aligned, a 2-byte T is read as Vec<T>s (8 elements per 128-bit load)
// and each chunk of r starts on a Vec; other layouts and types read element by element.
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/reduce_all.h"
#include "kernels/cuda/reducers.h"
#include "kernels/cuda/reduction_layout.h"

namespace mt::cuda {
namespace {

// One pass from In to Out, accumulating in Acc = Compute<In> (which is Compute<Out> too).
template <typename In, typename Out>
struct ReduceArgs {
  using Acc = Compute<In>;
  const In* in;
  Out* out;  // the outputs, or the partials of pass one (Note [GPU reduction grid])
  ReduceLayout layout = {};
  int64_t chunk = 0;        // elements of r per blockIdx.y
  Acc identity = Acc();     // the reducer's identity
  int64_t mean_count = 0;   // Mean's final pass: divide each output by it; else 0
  bool vectorized = false;  // Note [Vectorised reduction]
};

// Returns the input offset of index `idx` of `axes` (Note [GPU reduction layout]).
__device__ __forceinline__ int64_t offset_of(const ReduceAxes& axes, uint64_t idx) {
  int64_t offset = 0;
#pragma unroll
  for (int k = kMaxReduceRuns - 1; k >= 0; --k) {
    if (k >= axes.rank) continue;
    uint64_t coord = idx;
    if (k > 0) {
      const uint64_t outer = axes.dim[k].div(idx);
      coord = idx - outer * axes.dim[k].d;
      idx = outer;
    }
    offset += static_cast<int64_t>(coord) * axes.stride[k];
  }
  return offset;
}

// Loads each thread keeps in flight in combine_slice.
constexpr int kUnroll = 4;

// Combines in[offset(r)] for r = begin, begin + step, ... < end, kUnroll at a time into
// independent accumulators, so that kUnroll loads are in flight per thread.
template <typename R, typename T, typename Offset>
__device__ __forceinline__ Compute<T> combine_slice(const T* in, Offset offset, int64_t begin,
                                                    int64_t end, int step, Compute<T> identity) {
  Compute<T> acc[kUnroll];
#pragma unroll
  for (int j = 0; j < kUnroll; ++j) acc[j] = identity;
  int64_t r = begin;
#pragma unroll 1
  for (; r + (kUnroll - 1) * step < end; r += kUnroll * step) {
    T x[kUnroll];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) x[j] = in[offset(r + j * step)];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) acc[j] = R::combine(acc[j], to_compute(x[j]));
  }
#pragma unroll 1
  for (; r < end; r += step) acc[0] = R::combine(acc[0], to_compute(in[offset(r)]));
#pragma unroll
  for (int width = kUnroll / 2; width > 0; width /= 2) {
#pragma unroll
    for (int j = 0; j < width; ++j) acc[j] = R::combine(acc[j], acc[j + width]);
  }
  return acc[0];
}

// Combines the Vecs of `row` that hold elements [begin, end) of r (both multiples of
// kVec<T>): vector ty, ty + step, ... (Note [Vectorised reduction]), two loads in flight.
template <typename R, typename T>
__device__ __forceinline__ Compute<T> combine_vectors(const T* row, int64_t begin, int64_t end,
                                                      int ty, int step, Compute<T> identity) {
  const Vec<T>* v = reinterpret_cast<const Vec<T>*>(row);
  const int64_t stop = end / kVec<T>;
  Compute<T> acc[2] = {identity, identity};
  int64_t i = begin / kVec<T> + ty;
#pragma unroll 1
  for (; i + step < stop; i += 2 * step) {
    const Vec<T> x = v[i], y = v[i + step];
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) {
      acc[0] = R::combine(acc[0], to_compute(x.v[j]));
      acc[1] = R::combine(acc[1], to_compute(y.v[j]));
    }
  }
  if (i < stop) {
    const Vec<T> x = v[i];
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) acc[0] = R::combine(acc[0], to_compute(x.v[j]));
  }
  return R::combine(acc[0], acc[1]);
}

// Combines thread ty's share of elements [begin, end) of r for output `o`: r = begin + ty,
// begin + ty + step, ..., or whole Vecs when a.vectorized. One reduced dimension (the
// common case) needs no index arithmetic beyond a multiply.
template <typename R, typename In, typename Out>
__device__ __forceinline__ Compute<In> reduce_slice(const ReduceArgs<In, Out>& a, int64_t o,
                                                    int64_t begin, int64_t end, int ty, int step) {
  const In* in = a.in + offset_of(a.layout.kept, o);
  const ReduceAxes& red = a.layout.reduced;
  if (a.vectorized) return combine_vectors<R>(in, begin, end, ty, step, a.identity);
  if (red.rank == 1) {
    const int64_t stride = red.stride[0];
    return combine_slice<R>(
        in, [stride](int64_t r) { return r * stride; }, begin + ty, end, step, a.identity);
  }
  return combine_slice<R>(
      in, [&red](int64_t r) { return offset_of(red, r); }, begin + ty, end, step, a.identity);
}

// Combines the `by` values of each of the block's `bx` outputs in `tile`, as a tree.
template <typename R, typename T>
__device__ __forceinline__ void combine_tile(T* tile, int bx, int by, int tx, int ty) {
  for (int s = by / 2; s > 0; s /= 2) {
    if (ty < s) tile[ty * bx + tx] = R::combine(tile[ty * bx + tx], tile[(ty + s) * bx + tx]);
    __syncthreads();
  }
}

template <typename R, typename In, typename Out>
__global__ void __launch_bounds__(kThreads) reduce_kernel(ReduceArgs<In, Out> a) {
  using Acc = Compute<In>;
  __shared__ Acc tile[kThreads];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int64_t num_out = a.layout.num_out;
  const int64_t begin = int64_t{blockIdx.y} * a.chunk;
  const int64_t end = min(begin + a.chunk, a.layout.num_red);
  for (int64_t o0 = int64_t{blockIdx.x} * bx; o0 < num_out; o0 += int64_t{gridDim.x} * bx) {
    const int64_t o = o0 + tx;
    tile[ty * bx + tx] = o < num_out ? reduce_slice<R>(a, o, begin, end, ty, by) : a.identity;
    __syncthreads();
    combine_tile<R>(tile, bx, by, tx, ty);
    if (ty == 0 && o < num_out) {
      a.out[int64_t{blockIdx.y} * num_out + o] = from_compute<Out>(finish(tile[tx], a.mean_count));
    }
    __syncthreads();  // the next tile reuses `tile`
  }
}

// Note [Scratch between launches]: kernels on a logical GPU's stream run in the order they
// were enqueued, but ops are enqueued from any host thread. Were two threads to enqueue at
// once, one op's one-pass reduction (or first pass) could land between another op's first
// and second pass and overwrite the partials that second pass reads. Every op that writes
// GpuState::scratch therefore holds GpuState::scratch_mu while it enqueues its kernels
// (enqueueing only: the lock is not held while the kernels run).

// Returns whether a pass over `layout` from `in` may read Vecs (Note [Vectorised reduction]).
template <typename T>
bool can_vectorize(const ReduceLayout& layout, const T* in) {
  return kIsHalf<T> && layout.reduced.rank == 1 && layout.reduced.stride[0] == 1 &&
         layout.num_red % kVec<T> == 0 && is_vec_aligned(in);
}

// Enqueues one pass over `args.layout` on the grid `g`.
template <OpId kOp, typename R, typename In, typename Out>
absl::Status launch_pass(const GpuState& state, ReduceArgs<In, Out> args, const ReduceGrid& g) {
  args.vectorized = can_vectorize(args.layout, args.in);
  // A chunk of whole Vecs; the last chunks may then be short or empty (identity partials).
  args.chunk = args.vectorized ? (g.chunk + kVec<In> - 1) / kVec<In> * kVec<In> : g.chunk;
  const dim3 grid(static_cast<unsigned>(g.blocks_x), static_cast<unsigned>(g.splits));
  return launch(kOp, state, grid, dim3(g.bx, g.by), &reduce_kernel<R, In, Out>, args);
}

// The outputs of a reduction over zero elements (Note [Reductions] in op_def.h).
template <OpId kOp, typename R, typename T>
absl::Status fill_empty(const KernelContext& ctx, int64_t n) {
  using Acc = Compute<T>;
  Acc value = R::template identity<Acc>();
  if constexpr (kOp == OpId::kMean && std::is_floating_point_v<Acc>) {
    value = std::numeric_limits<Acc>::quiet_NaN();
  }
  MapArgs<T, 0> args;
  args.out = static_cast<T*>(ctx.output.data);
  args.n = n;
  return launch_map(kOp, ctx, args, ConstantFn<T>{T(value)});
}

// The error for a layout make_reduce_layout refuses.
absl::Status too_many_runs(OpId op, const Shape& shape) {
  return absl::UnimplementedError(absl::StrCat(
      "[", op_name(op), "] shape ", shape.to_string(), " has more than ", kMaxReduceRuns,
      " separate runs of reduced or of kept dimensions, which the GPU kernel does not support"));
}

// The combining rule of each reduction (reducers.h).
template <OpId kOp>
using ReducerOf = std::conditional_t<
    kOp == OpId::kMax, MaxReducer,
    std::conditional_t<
        kOp == OpId::kMin, MinReducer,
        std::conditional_t<
            kOp == OpId::kProd, ProdReducer,
            std::conditional_t<kOp == OpId::kAny, AnyReducer,
                               std::conditional_t<kOp == OpId::kAll, AllReducer, SumReducer>>>>>;

template <OpId kOp, typename T>
absl::Status run_reduction(const KernelContext& ctx) {
  using R = ReducerOf<kOp>;
  using Acc = Compute<T>;
  const Shape& in_shape = *ctx.inputs[0].shape;
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  if (in_shape.num_elements() == 0) return fill_empty<kOp, R, T>(ctx, n);
  internal::AxisMask mask;
  MT_CHECK(internal::reduction_mask(kOp, in_shape, *ctx.attrs, &mask).ok());
  ReduceLayout layout;
  if (!make_reduce_layout(in_shape, mask, &layout)) return too_many_runs(kOp, in_shape);
  const T* in = static_cast<const T*>(ctx.inputs[0].data);
  T* out = static_cast<T*>(ctx.output.data);
  const Acc identity = R::template identity<Acc>();
  const GpuState& state = gpu_state(ctx);
  const int64_t mean_count = kOp == OpId::kMean ? layout.num_red : 0;
  if (can_reduce_all(state, layout, in)) {       // Note [One-pass full reduction] in reduce_all.h
    internal::MutexLock lock(state.scratch_mu);  // Note [Scratch between launches]
    return launch_reduce_all<kOp, R>(state, in, out, layout.num_red, identity, mean_count);
  }
  const int64_t scratch = state.scratch ? state.scratch_bytes / sizeof(Acc) : 0;
  const ReduceGrid g = choose_reduce_grid(layout, sm_count(state), scratch);
  if (g.splits == 1) {
    return launch_pass<kOp, R>(state, ReduceArgs<T, T>{in, out, layout, 0, identity, mean_count},
                               g);
  }
  Acc* partials = static_cast<Acc*>(state.scratch);  // in Acc: rounded to T only at the end
  MT_CHECK(state.scratch_mu != nullptr);
  internal::MutexLock lock(state.scratch_mu);  // Note [Scratch between launches]
  MT_RETURN_IF_ERROR(
      (launch_pass<kOp, R>(state, ReduceArgs<T, Acc>{in, partials, layout, 0, identity}, g)));
  const ReduceLayout second = partials_layout(n, g.splits);
  return launch_pass<kOp, R>(state,
                             ReduceArgs<Acc, T>{partials, out, second, 0, identity, mean_count},
                             choose_reduce_grid(second, sm_count(state), 0));
}

// Registers run_reduction<kOp, T> for every numeric T.
template <OpId kOp>
absl::Status add_reduction(KernelRegistry& registry) {
  return add_gpu_kernels(registry, kOp, NumericTypes{}, [](auto tag) -> KernelFn {
    return &run_reduction<kOp, typename decltype(tag)::type>;
  });
}

// Registers Any or All on bool, which reduce the bools' bytes (0 or 1) as uint8_t.
template <OpId kOp>
absl::Status add_bool_reduction(KernelRegistry& registry) {
  return add_gpu_kernels(registry, kOp, TypeList<bool>{},
                         [](auto) -> KernelFn { return &run_reduction<kOp, uint8_t>; });
}

}  // namespace

MT_OP_KERNELS(Sum) { return add_reduction<OpId::kSum>(registry); }
MT_OP_KERNELS(Mean) { return add_reduction<OpId::kMean>(registry); }
MT_OP_KERNELS(Max) { return add_reduction<OpId::kMax>(registry); }
MT_OP_KERNELS(Min) { return add_reduction<OpId::kMin>(registry); }
MT_OP_KERNELS(Prod) { return add_reduction<OpId::kProd>(registry); }
MT_OP_KERNELS(Any) { return add_bool_reduction<OpId::kAny>(registry); }
MT_OP_KERNELS(All) { return add_bool_reduction<OpId::kAll>(registry); }

}  // namespace mt::cuda
