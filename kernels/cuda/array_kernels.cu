// GPU kernels of the array ops that copy through a CopyPlan (Transpose, Slice,
// StridedSlice, BroadcastTo, Tile), the plain copies (Reshape, ExpandDims, Squeeze: a
// device-to-device memcpy) and ZerosLike/OnesLike (Note [Array ops] in
// kernels/array_layout.h). Kernels are instantiated per element size.
//
// Note [GPU copy plans]: a plan whose second last output dimension is the input's
// contiguous one (a transpose of the last two, batched) goes through 32 x 32 tiles in
// shared memory, so that both the reads and the writes are coalesced. A plan whose last
// dimension is contiguous in the input (stride 1: Slice, BroadcastTo, Tile, most strided
// slices) is copied by rows (Note [Row copies]); when its second last stride is 0 (a row
// repeated: BroadcastTo or Tile of a row) each thread loads its part of the row once and
// stores it to every repeat. Other plans whose last dimension is long run one block row per
// output row; the rest compute every element's input offset from its index. 2-byte
// elements take 64 x 64 tiles moved as 4-byte pairs when the layout allows (bfloat16 and
// float16 transposes would otherwise move 64 bytes per warp access).
//
// Note [Row copies]: rows move in units of the widest of 16, 8, 4, 2 and 1 bytes that
// divides both buffers' addresses, the row length and every row's start, so rows of whole
// 16-byte vectors use LDG.E.128 / STG.E.128 and any other layout falls back to narrower
// units. blockDim.x threads cover kUnroll * blockDim.x units of a row, each loading its
// kUnroll units before storing any (64 bytes in flight per thread); short rows leave the
// rest of the block (blockDim.y) to further rows. The grid is a few blocks per SM, looping
// over rows (grid-stride), and a row's source is found once per thread, with IndexDividers
// instead of 64-bit division. The helpers are in row_copy.h, shared with ConcatV2, SplitV
// and GatherV2 (combine_kernels.cu).
#include <type_traits>

#include "kernels/array_layout.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/row_copy.h"

namespace mt::cuda {
namespace {

using internal::CopyPlan;
using internal::kMaxCopyRank;
using internal::Word;

// A CopyPlan passed by value to a kernel.
struct DevicePlan {
  int rank = 0;
  int64_t dims[kMaxCopyRank] = {};
  int64_t strides[kMaxCopyRank] = {};
  int64_t offset = 0;
};

DevicePlan to_device(const CopyPlan& p) {
  DevicePlan d;
  d.rank = static_cast<int>(p.dims.size());
  for (int i = 0; i < d.rank; ++i) {
    d.dims[i] = p.dims[i];
    d.strides[i] = p.strides[i];
  }
  d.offset = p.offset;
  return d;
}

// Returns the input offset of index `i` over the plan's first `rank` dimensions.
__device__ __forceinline__ int64_t offset_of(const DevicePlan& p, int rank, int64_t i) {
  int64_t off = p.offset;
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t q = i / p.dims[d];
    off += (i - q * p.dims[d]) * p.strides[d];
    i = q;
  }
  return off;
}

template <typename W>
__global__ void plan_elements(DevicePlan p, const W* in, W* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = in[offset_of(p, p.rank, i)];
  }
}

// blockIdx.y (grid-stride) picks rows; blockIdx.x and the threads cover the row.
template <typename W>
__global__ void plan_rows(DevicePlan p, const W* in, W* out, int64_t rows) {
  const int64_t inner = p.dims[p.rank - 1], step = p.strides[p.rank - 1];
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (j >= inner) return;
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const int64_t off = offset_of(p, p.rank - 1, row);
    out[row * inner + j] = in[off + j * step];
  }
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threads per block: kTile x kTileRows

// Batched transposed copy: out[b][r][c] = in[base(b) + r + c * step].
template <typename W>
__global__ void plan_tiles(DevicePlan p, const W* in, W* out, int64_t tiles) {
  __shared__ W tile[kTile][kTile + 1];
  const int64_t rows = p.dims[p.rank - 2], cols = p.dims[p.rank - 1];
  const int64_t step = p.strides[p.rank - 1];
  const int64_t tiles_r = (rows + kTile - 1) / kTile, tiles_c = (cols + kTile - 1) / kTile;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t batch = t / (tiles_r * tiles_c), rem = t % (tiles_r * tiles_c);
    const int64_t r0 = rem / tiles_c * kTile, c0 = rem % tiles_c * kTile;
    const W* src = in + offset_of(p, p.rank - 2, batch);
    W* dst = out + batch * rows * cols;
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t r = r0 + threadIdx.x, c = c0 + k;
      if (r < rows && c < cols) tile[k][threadIdx.x] = src[r + c * step];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t r = r0 + k, c = c0 + threadIdx.x;
      if (r < rows && c < cols) dst[r * cols + c] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

constexpr int kPairTile = 64;

// The same for 2-byte elements, two per 4-byte access on both sides (64 x 64 tiles): the
// plan's offsets, strides, rows and columns are even and the buffers 4-byte aligned.
__global__ void plan_tiles_pairs(DevicePlan p, const uint16_t* in, uint16_t* out, int64_t tiles) {
  __shared__ uint16_t tile[kPairTile][kPairTile + 1];  // [column][row]
  const int64_t rows = p.dims[p.rank - 2], cols = p.dims[p.rank - 1];
  const int64_t step = p.strides[p.rank - 1];
  const int64_t tiles_r = (rows + kPairTile - 1) / kPairTile;
  const int64_t tiles_c = (cols + kPairTile - 1) / kPairTile;
  const int pair = 2 * threadIdx.x;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t batch = t / (tiles_r * tiles_c), rem = t % (tiles_r * tiles_c);
    const int64_t r0 = rem / tiles_c * kPairTile, c0 = rem % tiles_c * kPairTile;
    const uint16_t* src = in + offset_of(p, p.rank - 2, batch);
    uint16_t* dst = out + batch * rows * cols;
    for (int k = threadIdx.y; k < kPairTile; k += kTileRows) {
      const int64_t r = r0 + pair, c = c0 + k;  // rows r and r + 1 of column c
      if (r < rows && c < cols) {
        const uint32_t v = *reinterpret_cast<const uint32_t*>(src + r + c * step);
        tile[k][pair] = static_cast<uint16_t>(v);
        tile[k][pair + 1] = static_cast<uint16_t>(v >> 16);
      }
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kPairTile; k += kTileRows) {
      const int64_t r = r0 + k, c = c0 + pair;  // columns c and c + 1 of row r
      if (r < rows && c < cols) {
        const uint32_t v = tile[pair][k] | static_cast<uint32_t>(tile[pair + 1][k]) << 16;
        *reinterpret_cast<uint32_t*>(dst + r * cols + c) = v;
      }
    }
    __syncthreads();
  }
}

// Returns whether plan_tiles_pairs can run the tiled plan `p` of 2-byte elements.
bool pairs_fit(const DevicePlan& p, const void* in, const void* out) {
  bool even = p.offset % 2 == 0 && p.dims[p.rank - 2] % 2 == 0 && p.dims[p.rank - 1] % 2 == 0;
  for (int d = 0; d < p.rank; ++d) even = even && (d == p.rank - 2 || p.strides[d] % 2 == 0);
  return even && reinterpret_cast<uintptr_t>(in) % 4 == 0 &&
         reinterpret_cast<uintptr_t>(out) % 4 == 0;
}

// The first `rank` dimensions of a plan, as the input unit where the row of index i starts.
struct RowSource {
  int rank = 0;
  IndexDivider dims[kMaxCopyRank];
  int64_t strides[kMaxCopyRank] = {};  // in units
  int64_t offset = 0;                  // in units

  __device__ __forceinline__ int64_t at(int64_t i) const {
    int64_t off = offset;
    for (int d = rank - 1; d > 0; --d) {
      const int64_t q = static_cast<int64_t>(dims[d].div(static_cast<uint64_t>(i)));
      off += (i - q * static_cast<int64_t>(dims[d].d)) * strides[d];
      i = q;
    }
    return rank > 0 ? off + i * strides[0] : off;  // i < dims[0]: no division
  }
};

// Returns the RowSource of the first `rank` dimensions of `p` (indices below `rows`).
RowSource row_source(const CopyPlan& p, int rank, int64_t elem, int64_t unit, int64_t rows) {
  RowSource s;
  s.rank = rank;
  for (int d = 0; d < rank; ++d) {
    s.dims[d] = IndexDivider::make(p.dims[d], rows);
    s.strides[d] = p.strides[d] * elem / unit;
  }
  s.offset = p.offset * elem / unit;
  return s;
}

// out row r (`width` units) = the input row at src.at(r); (blockIdx.y, threadIdx.y) pick rows.
template <typename U>
__global__ void __launch_bounds__(kThreads, kRowBlocksPerSm)
    plan_row_copy(RowSource src, const U* in, U* out, int64_t width, int64_t rows) {
  const int64_t c0 = int64_t{blockIdx.x} * blockDim.x * kUnroll + threadIdx.x;
  if (c0 >= width) return;
  for (int64_t r = int64_t{blockIdx.y} * blockDim.y + threadIdx.y; r < rows;
       r += int64_t{gridDim.y} * blockDim.y) {
    U v[kUnroll];
    load_units(in + src.at(r), c0, blockDim.x, width, v);
    store_units(out + r * width, c0, blockDim.x, width, v);
  }
}

// out rows o * reps + r (r < reps) = the input row at src.at(o): the thread's units of it
// are loaded once per o (blockIdx.z) and stored to every r its block takes.
template <typename U>
__global__ void __launch_bounds__(kThreads, kRowBlocksPerSm)
    plan_row_repeat(RowSource src, const U* in, U* out, int64_t width, int64_t reps,
                    int64_t outer) {
  const int64_t c0 = int64_t{blockIdx.x} * blockDim.x * kUnroll + threadIdx.x;
  if (c0 >= width) return;
  for (int64_t o = blockIdx.z; o < outer; o += gridDim.z) {
    U v[kUnroll];
    load_units(in + src.at(o), c0, blockDim.x, width, v);
    U* dst = out + o * reps * width;
    for (int64_t r = int64_t{blockIdx.y} * blockDim.y + threadIdx.y; r < reps;
         r += int64_t{gridDim.y} * blockDim.y) {
      store_units(dst + r * width, c0, blockDim.x, width, v);
    }
  }
}

// Runs a plan of n elements of `elem` bytes whose last stride is 1 by rows.
absl::Status launch_row_plan(OpId op, const GpuState& state, const CopyPlan& p, const void* in,
                             void* out, int64_t n, int64_t elem) {
  const int rank = static_cast<int>(p.dims.size());
  const bool repeat = rank >= 2 && p.strides[rank - 2] == 0;
  const int lead = rank - (repeat ? 2 : 1);
  const int64_t inner = p.dims[rank - 1], rows = n / inner;
  uint64_t bits = reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out) |
                  static_cast<uint64_t>(inner * elem) | static_cast<uint64_t>(p.offset * elem);
  for (int d = 0; d < lead; ++d) bits |= static_cast<uint64_t>(p.strides[d] * elem);
  const int unit = widest_unit(bits);
  const int64_t width = inner * elem / unit;
  return with_unit(unit, [&](auto tag) {
    using U = decltype(tag);
    const U* src = static_cast<const U*>(in);
    U* dst = static_cast<U*>(out);
    if (!repeat) {
      const RowGrid g = row_grid(state, width, rows, 1);
      return launch(op, state, g.grid, g.block, &plan_row_copy<U>,
                    row_source(p, lead, elem, unit, rows), src, dst, width, rows);
    }
    const int64_t reps = p.dims[rank - 2], outer = rows / reps;
    const int64_t gx = row_grid(state, width, 1, 1).grid.x;
    const int64_t planes = std::clamp<int64_t>(int64_t{sm_count(state)} * kRowBlocksPerSm / gx, 1,
                                               std::min<int64_t>(outer, 65535));
    const RowGrid g = row_grid(state, width, reps, planes);
    return launch(op, state, g.grid, g.block, &plan_row_repeat<U>,
                  row_source(p, lead, elem, unit, outer), src, dst, width, reps, outer);
  });
}

template <typename W>
absl::Status launch_plan(OpId op, const GpuState& state, const CopyPlan& plan, const W* in, W* out,
                         int64_t n) {
  const DevicePlan p = to_device(plan);
  const int rank = p.rank;
  if (rank >= 2 && p.strides[rank - 1] != 1 && p.strides[rank - 2] == 1) {
    const int64_t rows = p.dims[rank - 2], cols = p.dims[rank - 1];
    if constexpr (sizeof(W) == 2) {
      if (pairs_fit(p, in, out)) {
        const int64_t tiles = n / (rows * cols) * ((rows + kPairTile - 1) / kPairTile) *
                              ((cols + kPairTile - 1) / kPairTile);
        return launch(op, state, grid_for(tiles, 1), dim3(kTile, kTileRows), &plan_tiles_pairs, p,
                      reinterpret_cast<const uint16_t*>(in), reinterpret_cast<uint16_t*>(out),
                      tiles);
      }
    }
    const int64_t tiles =
        n / (rows * cols) * ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
    return launch(op, state, grid_for(tiles, 1), dim3(kTile, kTileRows), &plan_tiles<W>, p, in, out,
                  tiles);
  }
  if (rank >= 1 && p.strides[rank - 1] == 1) {
    return launch_row_plan(op, state, plan, in, out, n, sizeof(W));
  }
  if (rank >= 1 && p.dims[rank - 1] >= kThreads) {
    const int64_t inner = p.dims[rank - 1];
    const dim3 grid(static_cast<unsigned>((inner + kThreads - 1) / kThreads),
                    static_cast<unsigned>(std::min<int64_t>(n / inner, 65535)));
    return launch(op, state, grid, kThreads, &plan_rows<W>, p, in, out, n / inner);
  }
  return launch(op, state, grid_for(n, kThreads), kThreads, &plan_elements<W>, p, in, out, n);
}

template <OpId kOp, typename W>
absl::Status run_plan(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  CopyPlan plan;
  MT_RETURN_IF_ERROR(internal::make_copy_plan(kOp, *ctx.inputs[0].shape, *ctx.attrs, &plan));
  return launch_plan(kOp, gpu_state(ctx), plan, static_cast<const W*>(ctx.inputs[0].data),
                     static_cast<W*>(ctx.output.data), n);
}

template <OpId kOp>
absl::Status run_copy(const KernelContext& ctx) {
  const size_t bytes = ctx.output.shape->num_elements() * dtype_size(ctx.output.dtype);
  if (bytes == 0) return absl::OkStatus();
  return cuda_status(kOp, "cudaMemcpyAsync",
                     cudaMemcpyAsync(ctx.output.data, ctx.inputs[0].data, bytes,
                                     cudaMemcpyDeviceToDevice, gpu_state(ctx).stream));
}

absl::Status run_zeros_like(const KernelContext& ctx) {
  const size_t bytes = ctx.output.shape->num_elements() * dtype_size(ctx.output.dtype);
  if (bytes == 0) return absl::OkStatus();
  return cuda_status(OpId::kZerosLike, "cudaMemsetAsync",
                     cudaMemsetAsync(ctx.output.data, 0, bytes, gpu_state(ctx).stream));
}

template <typename T>
absl::Status run_ones_like(const KernelContext& ctx) {
  MapArgs<T, 0> args;
  args.out = static_cast<T*>(ctx.output.data);
  args.n = ctx.output.shape->num_elements();
  return launch_map(OpId::kOnesLike, ctx, args, ConstantFn<T>{internal::one_as<T>()});
}

template <OpId kOp, typename Make>
absl::Status add_all(KernelRegistry& registry, Make make) {
  return add_gpu_kernels(registry, kOp, AllTypes{}, make);
}

template <OpId kOp>
absl::Status add_plan(KernelRegistry& registry) {
  return add_all<kOp>(registry, [](auto tag) -> KernelFn {
    return &run_plan<kOp, Word<sizeof(typename decltype(tag)::type)>>;
  });
}

template <OpId kOp>
absl::Status add_copy(KernelRegistry& registry) {
  return add_all<kOp>(registry, [](auto) -> KernelFn { return &run_copy<kOp>; });
}

}  // namespace

MT_OP_KERNELS(Reshape) { return add_copy<OpId::kReshape>(registry); }
MT_OP_KERNELS(ExpandDims) { return add_copy<OpId::kExpandDims>(registry); }
MT_OP_KERNELS(Squeeze) { return add_copy<OpId::kSqueeze>(registry); }
MT_OP_KERNELS(Transpose) { return add_plan<OpId::kTranspose>(registry); }
MT_OP_KERNELS(Slice) { return add_plan<OpId::kSlice>(registry); }
MT_OP_KERNELS(StridedSlice) { return add_plan<OpId::kStridedSlice>(registry); }
MT_OP_KERNELS(BroadcastTo) { return add_plan<OpId::kBroadcastTo>(registry); }
MT_OP_KERNELS(Tile) { return add_plan<OpId::kTile>(registry); }
MT_OP_KERNELS(ZerosLike) {
  return add_all<OpId::kZerosLike>(registry, [](auto) -> KernelFn { return &run_zeros_like; });
}
MT_OP_KERNELS(OnesLike) {
  return add_all<OpId::kOnesLike>(
      registry, [](auto tag) -> KernelFn { return &run_ones_like<typename decltype(tag)::type>; });
}

}  // namespace mt::cuda
