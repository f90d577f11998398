#pragma once
// Internal to kernels/cuda/ (.cu files only): map_kernel, the one element-wise kernel
// behind Fill (no input), the unary ops (one input) and the binary ops whose operands are
// dense or a single element (two inputs).
//
// Note [Vectorised element-wise]: when every dense pointer is 16-byte aligned, each thread
// moves whole Vec<T>s (LDG.E.128 / STG.E.128) and the n % kVec<T> elements left over are
// done one by one by the first threads; otherwise every element is done one by one. The
// grid gives each vector its own thread, and loops (grid-stride) beyond kMaxGridBlocks.
// An input marked `scalar` has one element, read for every output element (an L1 hit).
//
//   MapArgs<T, 1> args = make_map_args<T, 1>(ctx);
//   MT_RETURN_IF_ERROR(launch_map(OpId::kNeg, ctx, args, NegFn{}));

#include <cstdint>

#include "core/status.h"
#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/kernel.h"

namespace mt::cuda {

// The output is T, or `Out` (the comparisons' bool).
template <typename T, int kIn, typename Out = T>
struct MapArgs {
  static constexpr int kSlots = kIn > 0 ? kIn : 1;
  const T* in[kSlots] = {};
  bool scalar[kSlots] = {};  // input k has one element, used for every output element
  Out* out = nullptr;
  int64_t n = 0;
  bool vectorized = false;  // Note [Vectorised element-wise]
};

// The Fn of a map_kernel without inputs: every element is `value`.
template <typename T>
struct ConstantFn {
  T value;
  __device__ T operator()() const { return value; }
};

// kVec<T> outputs of Out, stored at once: a Vec<T> when Out is T, fewer bytes otherwise.
template <typename T, typename Out>
struct alignas(sizeof(Out) * kVec<T>) OutVec {
  Out v[kVec<T>];
};

// Calls fn with the kIn values of `x`.
template <int kIn, typename Fn, typename T>
__device__ __forceinline__ auto apply(const Fn& fn, const T (&x)[MapArgs<T, kIn>::kSlots]) {
  if constexpr (kIn == 0) {
    return fn();
  } else if constexpr (kIn == 1) {
    return fn(x[0]);
  } else {
    return fn(x[0], x[1]);
  }
}

// Computes the Vec<T> at vector index `v`.
template <typename Fn, typename T, int kIn, typename Out>
__device__ __forceinline__ void map_vector(const MapArgs<T, kIn, Out>& a, const Fn& fn, int64_t v) {
  constexpr int kSlots = MapArgs<T, kIn, Out>::kSlots;
  Vec<T> x[kSlots];
#pragma unroll
  for (int k = 0; k < kIn; ++k) {
    if (a.scalar[k]) {
      const T s = a.in[k][0];
#pragma unroll
      for (int j = 0; j < kVec<T>; ++j) x[k].v[j] = s;
    } else {
      x[k] = reinterpret_cast<const Vec<T>*>(a.in[k])[v];
    }
  }
  OutVec<T, Out> y;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) {
    T args[kSlots];
#pragma unroll
    for (int k = 0; k < kIn; ++k) args[k] = x[k].v[j];
    y.v[j] = apply<kIn>(fn, args);
  }
  reinterpret_cast<OutVec<T, Out>*>(a.out)[v] = y;
}

// Computes the element at index `i`.
template <typename Fn, typename T, int kIn, typename Out>
__device__ __forceinline__ void map_scalar(const MapArgs<T, kIn, Out>& a, const Fn& fn, int64_t i) {
  T args[MapArgs<T, kIn, Out>::kSlots];
#pragma unroll
  for (int k = 0; k < kIn; ++k) args[k] = a.in[k][a.scalar[k] ? 0 : i];
  a.out[i] = apply<kIn>(fn, args);
}

template <typename Fn, typename T, int kIn, typename Out>
__global__ void __launch_bounds__(kThreads) map_kernel(MapArgs<T, kIn, Out> a, Fn fn) {
  const int64_t stride = int64_t{gridDim.x} * kThreads;
  const int64_t first = int64_t{blockIdx.x} * kThreads + threadIdx.x;
  const int64_t nv = a.vectorized ? a.n / kVec<T> : 0;
#pragma unroll 1
  for (int64_t v = first; v < nv; v += stride) map_vector(a, fn, v);
#pragma unroll 1
  for (int64_t i = nv * kVec<T> + first; i < a.n; i += stride) map_scalar(a, fn, i);
}

// Sets args.vectorized from the alignment of the output and every dense input.
template <typename T, int kIn, typename Out>
void set_vectorized(MapArgs<T, kIn, Out>& args) {
  bool aligned = is_vec_aligned(args.out);
  for (int k = 0; k < kIn; ++k) aligned = aligned && (args.scalar[k] || is_vec_aligned(args.in[k]));
  args.vectorized = aligned;
}

// Enqueues map_kernel<Fn, T, kIn, Out> over args.n elements (nothing when n is 0).
template <typename Fn, typename T, int kIn, typename Out>
absl::Status launch_map(OpId op, const KernelContext& ctx, MapArgs<T, kIn, Out> args, Fn fn) {
  if (args.n == 0) return absl::OkStatus();
  set_vectorized(args);
  const int64_t work = args.vectorized ? (args.n + kVec<T> - 1) / kVec<T> : args.n;
  return launch(op, gpu_state(ctx), grid_for(work, kThreads), kThreads,
                &map_kernel<Fn, T, kIn, Out>, args, fn);
}

}  // namespace mt::cuda
