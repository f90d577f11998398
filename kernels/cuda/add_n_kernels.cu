// GPU kernels of AddN.
//
// Note [Fused AddN]: one kernel reads all N inputs and writes the output once, so AddN
// moves (N + 1) x size bytes, the least possible. The input pointers travel by value in the
// kernel's parameters (kMaxFusedInputs of them); more inputs are summed in passes that
// each take the running sum (the output) as their first input. Each thread loads one Vec
// from every input before it adds (N independent 128-bit loads in flight), and the sum is
// taken in input order, as on the CPU, so float32 and float64 results match it bit for bit.
// bfloat16 and float16 sum in float32 and round once per pass (Note [Half arithmetic on
// the GPU] in half_math.h).
#include <algorithm>

#include "kernels/cuda/device_math.h"
#include "kernels/cuda/launch.h"
#include "kernels/kernel.h"

namespace mt::cuda {
namespace {

// Inputs one pass sums; 64 pointers keep the parameters at about 530 bytes.
constexpr int kMaxFusedInputs = 64;

template <typename T>
struct AddNArgs {
  const T* in[kMaxFusedInputs];
  int count;
  T* out;
  int64_t n;
  bool vectorized;  // every pointer is 16-byte aligned
};

// Sums in Compute<T>: float32 for bfloat16 and float16, rounded once per pass.
template <typename T>
__device__ __forceinline__ void add_n_vector(const AddNArgs<T>& a, int64_t v) {
  const Vec<T> first = reinterpret_cast<const Vec<T>*>(a.in[0])[v];
  Compute<T> sum[kVec<T>];
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) sum[j] = to_compute(first.v[j]);
#pragma unroll 8
  for (int k = 1; k < a.count; ++k) {
    const Vec<T> x = reinterpret_cast<const Vec<T>*>(a.in[k])[v];
#pragma unroll
    for (int j = 0; j < kVec<T>; ++j) sum[j] = add_op(sum[j], to_compute(x.v[j]));
  }
  Vec<T> out;
#pragma unroll
  for (int j = 0; j < kVec<T>; ++j) out.v[j] = from_compute<T>(sum[j]);
  reinterpret_cast<Vec<T>*>(a.out)[v] = out;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) add_n_kernel(AddNArgs<T> a) {
  const int64_t stride = int64_t{gridDim.x} * kThreads;
  const int64_t first = int64_t{blockIdx.x} * kThreads + threadIdx.x;
  const int64_t nv = a.vectorized ? a.n / kVec<T> : 0;
#pragma unroll 1
  for (int64_t v = first; v < nv; v += stride) add_n_vector(a, v);
#pragma unroll 1
  for (int64_t i = nv * kVec<T> + first; i < a.n; i += stride) {
    Compute<T> sum = to_compute(a.in[0][i]);
    for (int k = 1; k < a.count; ++k) sum = add_op(sum, to_compute(a.in[k][i]));
    a.out[i] = from_compute<T>(sum);
  }
}

// Enqueues one pass over `args` (Note [Fused AddN]).
template <typename T>
absl::Status launch_pass(const GpuState& state, AddNArgs<T>& args) {
  bool aligned = is_vec_aligned(args.out);
  for (int k = 0; k < args.count; ++k) aligned = aligned && is_vec_aligned(args.in[k]);
  args.vectorized = aligned;
  const int64_t work = aligned ? (args.n + kVec<T> - 1) / kVec<T> : args.n;
  return launch(OpId::kAddN, state, grid_for(work, kThreads), kThreads, &add_n_kernel<T>, args);
}

template <typename T>
absl::Status run_add_n(const KernelContext& ctx) {
  AddNArgs<T> args;
  args.out = static_cast<T*>(ctx.output.data);
  args.n = ctx.output.shape->num_elements();
  if (args.n == 0) return absl::OkStatus();
  const GpuState& state = gpu_state(ctx);
  const int total = static_cast<int>(ctx.inputs.size());
  int next = 0;  // the first input not yet summed
  while (next < total) {
    args.count = 0;
    if (next > 0) args.in[args.count++] = args.out;  // the running sum
    const int take = std::min(total - next, kMaxFusedInputs - args.count);
    for (int k = 0; k < take; ++k)
      args.in[args.count++] = static_cast<const T*>(ctx.inputs[next + k].data);
    next += take;
    MT_RETURN_IF_ERROR(launch_pass(state, args));
  }
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(AddN) {
  return add_gpu_kernels(registry, OpId::kAddN, NumericTypes{}, [](auto tag) -> KernelFn {
    return &run_add_n<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
