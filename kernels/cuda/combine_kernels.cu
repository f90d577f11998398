// GPU kernels of the array ops that join, split or index: ConcatV2, Pack, SplitV (the
// pieces' 2-D copies in one launch) and GatherV2 (row copies), and OneHot.
//
// Note [GPU gather out of range]: for an index outside [0, n) the GPU writes zeros, as
// TensorFlow's GPU kernel, and never reads outside params; it cannot return the CPU's
// InvalidArgument without a synchronisation, so the row's first thread records the index
// in the device's IndexFault, and the error comes at the next point where the host waits
// for the device (Note [GPU index faults] in index_fault.h).
//
// Rows move as in Note [Row copies] (array_kernels.cu), with the helpers of row_copy.h: in
// the widest unit of 16, 8, 4, 2 or 1 bytes that the layout allows, kUnroll units in flight
// per thread, a few blocks per SM looping over rows, no division per element.
#include <bit>
#include <cstring>
#include <type_traits>

#include "kernels/array_layout.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/report_index.h"
#include "kernels/cuda/row_copy.h"

namespace mt::cuda {
namespace {

using internal::ConcatLayout;
using internal::Word;

// Copies the units c0 + k * step (k < kUnroll) below `width` of a row, all loaded before
// any is stored; a null `src` stores zeros.
template <typename U>
__device__ __forceinline__ void copy_units(const U* src, U* dst, int64_t c0, int step,
                                           int64_t width) {
  U v[kUnroll];
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    if (c0 + int64_t{k} * step < width) v[k] = src != nullptr ? src[c0 + int64_t{k} * step] : U{};
  }
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    if (c0 + int64_t{k} * step < width) dst[c0 + int64_t{k} * step] = v[k];
  }
}

// A piece of ConcatV2, Pack or SplitV: rows of `width` units from src to dst, pitches apart.
template <typename U>
struct Piece {
  const U* src;
  U* dst;
  int64_t width, spitch, dpitch;
};

constexpr int kMaxPieces = 8;  // pieces per launch, one per blockIdx.z

template <typename U>
struct Pieces {
  Piece<U> piece[kMaxPieces];
  int64_t rows;
};

// Copies the `rows` rows of piece blockIdx.z; (blockIdx.y, threadIdx.y) pick rows.
template <typename U>
__global__ void __launch_bounds__(kThreads, kRowBlocksPerSm) copy_pieces(Pieces<U> pieces) {
  const Piece<U> p = pieces.piece[blockIdx.z];
  const int64_t c0 = int64_t{blockIdx.x} * blockDim.x * kUnroll + threadIdx.x;
  if (c0 >= p.width) return;  // a block beyond a narrower piece than the widest
  for (int64_t r = int64_t{blockIdx.y} * blockDim.y + threadIdx.y; r < pieces.rows;
       r += int64_t{gridDim.y} * blockDim.y) {
    copy_units(p.src + r * p.spitch, p.dst + r * p.dpitch, c0, blockDim.x, p.width);
  }
}

// A piece in bytes, before a unit is chosen.
struct BytePiece {
  const char* src;
  char* dst;
  int64_t width, spitch, dpitch;
};

// Launches copy_pieces on `group` (at most kMaxPieces, all divisible into `unit`s).
absl::Status launch_pieces(OpId op, const GpuState& state, absl::Span<const BytePiece> group,
                           int64_t rows, int unit) {
  return with_unit(unit, [&](auto tag) {
    using U = decltype(tag);
    Pieces<U> pieces = {};
    pieces.rows = rows;
    int64_t widest = 1;
    for (size_t i = 0; i < group.size(); ++i) {
      const BytePiece& b = group[i];
      pieces.piece[i] = {reinterpret_cast<const U*>(b.src), reinterpret_cast<U*>(b.dst),
                         b.width / unit, b.spitch / unit, b.dpitch / unit};
      widest = std::max(widest, b.width / unit);
    }
    const RowGrid g = row_grid(state, widest, rows, static_cast<int64_t>(group.size()));
    return launch(op, state, g.grid, g.block, &copy_pieces<U>, pieces);
  });
}

// Copies `rows` rows of every piece: a contiguous one with cudaMemcpyAsync, the others with
// one launch per unit size and kMaxPieces pieces.
absl::Status copy_pieces_2d(OpId op, const GpuState& state, absl::Span<const BytePiece> all,
                            int64_t rows) {
  absl::InlinedVector<BytePiece, 8> by_unit[5];  // [log2 of the unit]
  for (const BytePiece& b : all) {
    if (b.width == 0 || rows == 0) continue;
    if (rows == 1 || (b.width == b.spitch && b.width == b.dpitch)) {
      MT_RETURN_IF_ERROR(cuda_status(
          op, "cudaMemcpyAsync",
          cudaMemcpyAsync(b.dst, b.src, b.width * rows, cudaMemcpyDeviceToDevice, state.stream)));
      continue;
    }
    const int unit =
        widest_unit(reinterpret_cast<uintptr_t>(b.src) | reinterpret_cast<uintptr_t>(b.dst) |
                    static_cast<uint64_t>(b.width | b.spitch | b.dpitch));
    by_unit[std::countr_zero(static_cast<unsigned>(unit))].push_back(b);
  }
  for (int u = 0; u < 5; ++u) {
    const absl::Span<const BytePiece> pieces(by_unit[u]);
    for (size_t first = 0; first < pieces.size(); first += kMaxPieces) {
      MT_RETURN_IF_ERROR(launch_pieces(op, state, pieces.subspan(first, kMaxPieces), rows, 1 << u));
    }
  }
  return absl::OkStatus();
}

template <OpId kOp>
absl::Status run_concat(const KernelContext& ctx) {
  absl::InlinedVector<const Shape*, 8> shapes;
  for (const TensorArg& t : ctx.inputs) shapes.push_back(t.shape);
  const ConcatLayout l = internal::make_concat_layout(
      *ctx.output.shape, shapes,
      internal::canonical_axis(ctx.attrs->axis, ctx.output.shape->rank()),
      dtype_size(ctx.output.dtype));
  char* out = static_cast<char*>(ctx.output.data);
  absl::InlinedVector<BytePiece, 8> pieces;
  for (size_t i = 0; i < shapes.size(); ++i) {
    pieces.push_back({static_cast<const char*>(ctx.inputs[i].data), out + l.offset[i],
                      l.piece_row[i], l.piece_row[i], l.total_row});
  }
  return copy_pieces_2d(kOp, gpu_state(ctx), pieces, l.outer);
}

absl::Status run_split(const KernelContext& ctx) {
  absl::InlinedVector<const Shape*, 8> shapes;
  for (const MutableTensorArg& t : ctx.outputs) shapes.push_back(t.shape);
  const Shape& in = *ctx.inputs[0].shape;
  const ConcatLayout l =
      internal::make_concat_layout(in, shapes, internal::canonical_axis(ctx.attrs->axis, in.rank()),
                                   dtype_size(ctx.inputs[0].dtype));
  const char* src = static_cast<const char*>(ctx.inputs[0].data);
  absl::InlinedVector<BytePiece, 8> pieces;
  for (size_t i = 0; i < shapes.size(); ++i) {
    pieces.push_back({src + l.offset[i], static_cast<char*>(ctx.outputs[i].data), l.piece_row[i],
                      l.total_row, l.piece_row[i]});
  }
  return copy_pieces_2d(OpId::kSplitV, gpu_state(ctx), pieces, l.outer);
}

// Output row t = o * k + j (`width` units) = params row o * n + idx[j], or zeros when idx[j]
// is out of range, which the row's first thread reports (Note [GPU gather out of range]);
// (blockIdx.y, threadIdx.y) pick rows.
template <typename U, typename I>
__global__ void __launch_bounds__(kThreads, kRowBlocksPerSm)
    gather_rows(const U* params, const I* idx, U* out, IndexDivider k, int64_t n, int64_t width,
                int64_t rows, IndexReport report) {
  const int64_t c0 = int64_t{blockIdx.x} * blockDim.x * kUnroll + threadIdx.x;
  if (c0 >= width) return;
  for (int64_t t = int64_t{blockIdx.y} * blockDim.y + threadIdx.y; t < rows;
       t += int64_t{gridDim.y} * blockDim.y) {
    const int64_t o = static_cast<int64_t>(k.div(static_cast<uint64_t>(t)));
    const int64_t j = t - o * static_cast<int64_t>(k.d);
    const int64_t v = static_cast<int64_t>(idx[j]);
    const bool good = v >= 0 && v < n;
    if (!good && c0 == 0) report_bad_index(report, j, v, n);
    copy_units(good ? params + (o * n + v) * width : nullptr, out + t * width, c0, blockDim.x,
               width);
  }
}

template <typename I>
absl::Status gather_as(const KernelContext& ctx) {
  const Shape& params = *ctx.inputs[0].shape;
  const int axis = static_cast<int>(internal::canonical_axis(ctx.attrs->axis, params.rank()));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= params.dim(d);
  for (int d = axis + 1; d < params.rank(); ++d) inner *= params.dim(d);
  const int64_t n = params.dim(axis), k = ctx.inputs[1].shape->num_elements();
  const IndexReport report = index_report(OpId::kGatherV2, gpu_state(ctx), ctx.inputs[1].shape);
  if (ctx.output.shape->num_elements() == 0) {  // the CPU still checks the indices
    return launch_index_check(OpId::kGatherV2, gpu_state(ctx), ctx.inputs[1], n, false, report);
  }
  const void* p = ctx.inputs[0].data;
  void* out = ctx.output.data;
  const int64_t row = inner * static_cast<int64_t>(dtype_size(ctx.output.dtype));
  const int unit = widest_unit(reinterpret_cast<uintptr_t>(p) | reinterpret_cast<uintptr_t>(out) |
                               static_cast<uint64_t>(row));
  return with_unit(unit, [&](auto tag) {
    using U = decltype(tag);
    const RowGrid g = row_grid(gpu_state(ctx), row / unit, outer * k, 1);
    return launch(OpId::kGatherV2, gpu_state(ctx), g.grid, g.block, &gather_rows<U, I>,
                  static_cast<const U*>(p), static_cast<const I*>(ctx.inputs[1].data),
                  static_cast<U*>(out), IndexDivider::make(k, outer * k), n, row / unit, outer * k,
                  report);
  });
}

absl::Status run_gather(const KernelContext& ctx) {
  return ctx.inputs[1].dtype == DType::kInt32 ? gather_as<int32_t>(ctx) : gather_as<int64_t>(ctx);
}

// out[(o * depth + d) * inner + s] = idx[o * inner + s] == d ? on : off.
template <typename W, typename I>
__global__ void one_hot(const I* idx, W* out, int64_t depth, int64_t inner, W on, W off,
                        int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = i / inner, s = i - t * inner, o = t / depth, d = t - o * depth;
    out[i] = static_cast<int64_t>(idx[o * inner + s]) == d ? on : off;
  }
}

template <typename I>
absl::Status run_one_hot(const KernelContext& ctx) {
  const Shape& indices = *ctx.inputs[0].shape;
  const int64_t axis = ctx.attrs->axis == -1 ? indices.rank() : ctx.attrs->axis;
  int64_t inner = 1;
  for (int d = static_cast<int>(axis); d < indices.rank(); ++d) inner *= indices.dim(d);
  const int64_t total = ctx.output.shape->num_elements();
  if (total == 0) return absl::OkStatus();
  const I* idx = static_cast<const I*>(ctx.inputs[0].data);
  return visit_dtype(ctx.output.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using W = Word<sizeof(T)>;
    const T on = internal::scalar_as<T>(ctx.attrs->value);
    const T off = internal::scalar_as<T>(ctx.attrs->off_value);
    W on_bits, off_bits;
    std::memcpy(&on_bits, &on, sizeof(W));
    std::memcpy(&off_bits, &off, sizeof(W));
    return launch(OpId::kOneHot, gpu_state(ctx), grid_for(total, kThreads), kThreads,
                  &one_hot<W, I>, idx, static_cast<W*>(ctx.output.data), ctx.attrs->depth, inner,
                  on_bits, off_bits, total);
  });
}

}  // namespace

MT_OP_KERNELS(ConcatV2) {
  return add_gpu_kernels(registry, OpId::kConcatV2, AllTypes{},
                         [](auto) -> KernelFn { return &run_concat<OpId::kConcatV2>; });
}
MT_OP_KERNELS(Pack) {
  return add_gpu_kernels(registry, OpId::kPack, AllTypes{},
                         [](auto) -> KernelFn { return &run_concat<OpId::kPack>; });
}
MT_OP_KERNELS(SplitV) {
  return add_gpu_kernels(registry, OpId::kSplitV, AllTypes{},
                         [](auto) -> KernelFn { return &run_split; });
}
MT_OP_KERNELS(GatherV2) {
  return add_gpu_kernels(registry, OpId::kGatherV2, AllTypes{},
                         [](auto) -> KernelFn { return &run_gather; });
}
MT_OP_KERNELS(OneHot) {
  return add_gpu_kernels(registry, OpId::kOneHot, TypesIn<kIntDTypes>{}, [](auto tag) -> KernelFn {
    return &run_one_hot<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
