// GPU kernels of ScatterNd, TensorScatterUpdate and TensorScatterAdd (Note [Scatter] in
// kernels/scatter.h). A first kernel finds the first index row outside the output (an
// atomicMin over the rows' positions); the op reads it back, waiting for its stream, and
// returns TensorFlow's InvalidArgument without writing anything when there is one. Then the
// output starts as zeros or the tensor's copy and a thread per update element adds (an
// atomic add: float32, float64 and the integers natively, the 2-byte floats by a
// compare-and-swap of their 32-bit word, adding in float32) or writes its element. Sums of
// floats may come out in any order, so they can differ from the CPU's in the last bits;
// integer sums are exact. TensorScatterUpdate keeps the last of duplicate rows, as the CPU
// does (Note [Last duplicate wins]).
#include <cstdint>
#include <memory>
#include <type_traits>

#include "core/mutex.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/scatter.h"

namespace mt::cuda {
namespace {

constexpr unsigned long long kNoRow = ~0ull;

// Frees a cudaMalloc allocation (the flag of a device without scratch).
struct CudaFree {
  void operator()(void* p) const { cudaFree(p); }
};

template <typename I>
__global__ void __launch_bounds__(kThreads)
    find_bad_row(ScatterLayout l, const I* idx, unsigned long long* first) {
  for (int64_t n = int64_t{blockIdx.x} * kThreads + threadIdx.x; n < l.num_updates;
       n += int64_t{gridDim.x} * kThreads) {
    if (scatter_offset(l, idx + n * l.depth) < 0) {
      atomicMin(first, static_cast<unsigned long long>(n));
    }
  }
}

template <typename T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                std::is_same_v<T, int32_t>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    static_assert(sizeof(T) == 2, "a 2-byte float");
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    unsigned* word = reinterpret_cast<unsigned*>(addr & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(addr & 2) * 8;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      T cur;
      cur.bits = static_cast<uint16_t>(assumed >> shift);
      const T sum = from_compute<T>(to_compute(cur) + to_compute(v));
      const unsigned next = (assumed & ~(0xffffu << shift)) | (unsigned{sum.bits} << shift);
      old = atomicCAS(word, assumed, next);
    } while (old != assumed);
  }
}

// Note [Last duplicate wins]: TensorScatterUpdate's rows may name one slice twice; the CPU
// writes them in order, so the last one stays. On the GPU a call of at most kFewUpdateRows
// rows takes the scatter kernel, in which each element looks for a later row of its slice.
// With more rows a first kernel lets every row claim its slice with atomicMax(row + 1) in a
// table of `window` slices from `base` (the device's scratch, under its lock), and a second
// writes only the elements of each slice's winner; an output with more slices than the
// table holds takes one such pair of kernels per window of slices.
constexpr int64_t kFewUpdateRows = 64;

// A grid for `work` threads' worth of a grid-stride loop: at most 32 blocks per SM.
unsigned grid_of(const GpuState& state, int64_t work) {
  return std::min<int64_t>(grid_for(work, kThreads), int64_t{sm_count(state)} * 32);
}

template <OpId kOp, typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    scatter(ScatterLayout l, const I* idx, const T* upd, T* out) {
  const int64_t total = l.num_updates * l.slice;
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * kThreads) {
    const int64_t n = i / l.slice, j = i - n * l.slice;
    const int64_t at = scatter_offset(l, idx + n * l.depth);
    if (at < 0) continue;  // checked before the launch; never written out of bounds
    T* dst = out + at * l.slice + j;
    if constexpr (kOp == OpId::kTensorScatterUpdate) {
      bool later = false;  // at most kFewUpdateRows rows: Note [Last duplicate wins]
      for (int64_t m = n + 1; m < l.num_updates && !later; ++m) {
        later = scatter_offset(l, idx + m * l.depth) == at;
      }
      if (!later) *dst = upd[i];
    } else {
      atomic_add(dst, upd[i]);
    }
  }
}

template <typename I>
__global__ void __launch_bounds__(kThreads)
    claim_slices(ScatterLayout l, const I* idx, int64_t base, int64_t window,
                 unsigned long long* winner) {
  for (int64_t n = int64_t{blockIdx.x} * kThreads + threadIdx.x; n < l.num_updates;
       n += int64_t{gridDim.x} * kThreads) {
    const int64_t at = scatter_offset(l, idx + n * l.depth) - base;
    if (at >= 0 && at < window) atomicMax(winner + at, static_cast<unsigned long long>(n + 1));
  }
}

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    write_winners(ScatterLayout l, const I* idx, const T* upd, T* out, int64_t base, int64_t window,
                  const unsigned long long* winner) {
  const int64_t total = l.num_updates * l.slice;
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * kThreads) {
    const int64_t n = i / l.slice, j = i - n * l.slice;
    const int64_t at = scatter_offset(l, idx + n * l.depth);
    if (at < base || at - base >= window) continue;
    if (winner[at - base] != static_cast<unsigned long long>(n + 1)) continue;
    out[at * l.slice + j] = upd[i];
  }
}

// Writes the updates of TensorScatterUpdate's rows, the last of duplicates winning, with a
// table of `capacity` slices at `table` (device memory).
template <typename T, typename I>
absl::Status write_last_duplicates(const GpuState& state, const ScatterLayout& l, const I* idx,
                                   const T* upd, T* out, unsigned long long* table,
                                   int64_t capacity) {
  constexpr OpId kOp = OpId::kTensorScatterUpdate;
  const unsigned rows_grid = grid_of(state, l.num_updates);
  const unsigned grid = grid_of(state, l.num_updates * l.slice);
  for (int64_t base = 0; base < l.num_slices; base += capacity) {
    const int64_t window = std::min(capacity, l.num_slices - base);
    MT_RETURN_IF_ERROR(cuda_status(
        kOp, "cudaMemsetAsync", cudaMemsetAsync(table, 0, sizeof(*table) * window, state.stream)));
    MT_RETURN_IF_ERROR(
        launch(kOp, state, rows_grid, kThreads, &claim_slices<I>, l, idx, base, window, table));
    MT_RETURN_IF_ERROR(launch(kOp, state, grid, kThreads, &write_winners<T, I>, l, idx, upd, out,
                              base, window, static_cast<const unsigned long long*>(table)));
  }
  return absl::OkStatus();
}

// TensorScatterUpdate of more than kFewUpdateRows rows: Note [Last duplicate wins].
template <typename T, typename I>
absl::Status update_in_order(const GpuState& state, const ScatterLayout& l, const I* idx,
                             const T* upd, T* out) {
  if (state.scratch != nullptr && state.scratch_bytes >= sizeof(unsigned long long)) {
    internal::MutexLock lock(state.scratch_mu);  // Note [Scratch between launches]
    const int64_t capacity = static_cast<int64_t>(state.scratch_bytes / sizeof(unsigned long long));
    return write_last_duplicates(state, l, idx, upd, out,
                                 static_cast<unsigned long long*>(state.scratch), capacity);
  }
  const int64_t capacity = std::min<int64_t>(l.num_slices, int64_t{1} << 17);
  void* raw = nullptr;
  MT_RETURN_IF_ERROR(cuda_status(OpId::kTensorScatterUpdate, "cudaMalloc",
                                 cudaMalloc(&raw, sizeof(unsigned long long) * capacity)));
  const std::unique_ptr<void, CudaFree> owned(raw);
  MT_RETURN_IF_ERROR(write_last_duplicates(state, l, idx, upd, out,
                                           static_cast<unsigned long long*>(raw), capacity));
  // cudaFree waits for the device; the kernels above are done with the table by then.
  return absl::OkStatus();
}

// Finds the first index row outside the output with `first` (8 bytes of device memory) and
// leaves its position in *found (kNoRow: none), waiting for the stream.
template <typename I>
absl::Status find_first_bad_row(OpId op, const GpuState& state, const ScatterLayout& l,
                                const I* idx, unsigned long long* first,
                                unsigned long long* found) {
  *found = kNoRow;
  MT_RETURN_IF_ERROR(cuda_status(
      op, "cudaMemcpyAsync",
      cudaMemcpyAsync(first, found, sizeof(*found), cudaMemcpyHostToDevice, state.stream)));
  MT_RETURN_IF_ERROR(
      launch(op, state, grid_of(state, l.num_updates), kThreads, &find_bad_row<I>, l, idx, first));
  MT_RETURN_IF_ERROR(cuda_status(
      op, "cudaMemcpyAsync",
      cudaMemcpyAsync(found, first, sizeof(*found), cudaMemcpyDeviceToHost, state.stream)));
  return cuda_status(op, "cudaStreamSynchronize", cudaStreamSynchronize(state.stream));
}

// Returns TensorFlow's error for the first index row outside the output, if any. The flag
// lives in the device's scratch (under its lock), or in memory of its own without one.
template <typename I>
absl::Status check_rows(OpId op, const GpuState& state, const ScatterLayout& l, const I* idx,
                        const Shape& out) {
  unsigned long long found = kNoRow;
  if (state.scratch != nullptr) {
    internal::MutexLock lock(state.scratch_mu);  // Note [Scratch between launches]
    MT_RETURN_IF_ERROR(find_first_bad_row(op, state, l, idx,
                                          static_cast<unsigned long long*>(state.scratch), &found));
  } else {
    void* raw = nullptr;
    MT_RETURN_IF_ERROR(cuda_status(op, "cudaMalloc", cudaMalloc(&raw, sizeof(found))));
    const std::unique_ptr<void, CudaFree> owned(raw);
    MT_RETURN_IF_ERROR(
        find_first_bad_row(op, state, l, idx, static_cast<unsigned long long*>(raw), &found));
  }
  if (found == kNoRow) return absl::OkStatus();
  const int64_t n = static_cast<int64_t>(found);
  I row[kMaxScatterDepth];
  MT_RETURN_IF_ERROR(
      cuda_status(op, "cudaMemcpy",
                  cudaMemcpy(row, idx + n * l.depth, sizeof(I) * l.depth, cudaMemcpyDeviceToHost)));
  int64_t values[kMaxScatterDepth];
  for (int k = 0; k < l.depth; ++k) values[k] = static_cast<int64_t>(row[k]);
  return internal::scatter_index_error(op, n, values, l.depth, out);
}

template <OpId kOp, typename T, typename I>
absl::Status run_scatter_as(const KernelContext& ctx) {
  constexpr bool kNd = kOp == OpId::kScatterNd;
  const TensorArg& indices = ctx.inputs[kNd ? 0 : 1];
  const TensorArg& updates = ctx.inputs[kNd ? 1 : 2];
  const Shape& shape = *ctx.output.shape;
  const GpuState& state = gpu_state(ctx);
  const ScatterLayout l = make_scatter_layout(shape, *indices.shape);
  const I* idx = static_cast<const I*>(indices.data);
  if (l.num_updates > 0) MT_RETURN_IF_ERROR(check_rows(kOp, state, l, idx, shape));
  const int64_t total = shape.num_elements();
  if (total == 0) return absl::OkStatus();
  const size_t bytes = static_cast<size_t>(total) * sizeof(T);
  if (kNd) {
    MT_RETURN_IF_ERROR(cuda_status(kOp, "cudaMemsetAsync",
                                   cudaMemsetAsync(ctx.output.data, 0, bytes, state.stream)));
  } else {
    MT_RETURN_IF_ERROR(cuda_status(kOp, "cudaMemcpyAsync",
                                   cudaMemcpyAsync(ctx.output.data, ctx.inputs[0].data, bytes,
                                                   cudaMemcpyDeviceToDevice, state.stream)));
  }
  const int64_t work = l.num_updates * l.slice;
  if (work == 0) return absl::OkStatus();
  if constexpr (kOp == OpId::kTensorScatterUpdate) {
    if (l.num_updates > kFewUpdateRows) {
      return update_in_order(state, l, idx, static_cast<const T*>(updates.data),
                             static_cast<T*>(ctx.output.data));
    }
  }
  return launch(kOp, state, grid_of(state, work), kThreads, &scatter<kOp, T, I>, l, idx,
                static_cast<const T*>(updates.data), static_cast<T*>(ctx.output.data));
}

template <OpId kOp, typename T>
absl::Status run_scatter(const KernelContext& ctx) {
  const DType index = ctx.inputs[kOp == OpId::kScatterNd ? 0 : 1].dtype;
  return index == DType::kInt32 ? run_scatter_as<kOp, T, int32_t>(ctx)
                                : run_scatter_as<kOp, T, int64_t>(ctx);
}

template <OpId kOp, typename Types>
absl::Status add_scatter(KernelRegistry& registry) {
  return add_gpu_kernels(registry, kOp, Types{}, [](auto tag) -> KernelFn {
    return &run_scatter<kOp, typename decltype(tag)::type>;
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

}  // namespace mt::cuda
