// GPU kernels of the array ops that join, split or index: ConcatV2, Pack, SplitV (one 2-D
// copy per piece), GatherV2 and OneHot.
//
// Note [GPU gather out of range]: an index outside [0, n) cannot be reported from a kernel
// without a synchronisation, so, as TensorFlow's GPU kernel, the GPU writes zeros for it and
// never reads outside params; the CPU returns InvalidArgument instead.
#include <cstring>

#include "kernels/array_layout.h"
#include "kernels/cuda/elementwise.h"

namespace mt::cuda {
namespace {

using internal::ConcatLayout;
using internal::Word;

// Rows of piece bytes at least this wide go through cudaMemcpy2DAsync; narrower ones
// through block_copy, whose threads cover many rows at once.
constexpr int64_t kWideRow = 512;

// dst[r * dpitch + c] = src[r * spitch + c] for `rows` rows of `width` elements.
template <typename W>
__global__ void block_copy(const W* src, int64_t spitch, W* dst, int64_t dpitch, int64_t width,
                           int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / width, c = i - r * width;
    dst[r * dpitch + c] = src[r * spitch + c];
  }
}

// Copies `rows` rows of `width` bytes; pitches in bytes, all multiples of sizeof(W).
template <typename W>
absl::Status copy_2d(OpId op, const GpuState& state, const char* src, int64_t spitch, char* dst,
                     int64_t dpitch, int64_t width, int64_t rows) {
  if (width == 0 || rows == 0) return absl::OkStatus();
  if (rows == 1 || (width == spitch && width == dpitch)) {
    return cuda_status(
        op, "cudaMemcpyAsync",
        cudaMemcpyAsync(dst, src, width * rows, cudaMemcpyDeviceToDevice, state.stream));
  }
  if (width >= kWideRow) {
    return cuda_status(op, "cudaMemcpy2DAsync",
                       cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows,
                                         cudaMemcpyDeviceToDevice, state.stream));
  }
  constexpr int64_t s = sizeof(W);
  const int64_t n = width / s * rows;
  return launch(op, state, grid_for(n, kThreads), kThreads, &block_copy<W>,
                reinterpret_cast<const W*>(src), spitch / s, reinterpret_cast<W*>(dst), dpitch / s,
                width / s, n);
}

template <OpId kOp, typename W>
absl::Status run_concat(const KernelContext& ctx) {
  absl::InlinedVector<const Shape*, 8> shapes;
  for (const TensorArg& t : ctx.inputs) shapes.push_back(t.shape);
  const ConcatLayout l = internal::make_concat_layout(
      *ctx.output.shape, shapes,
      internal::canonical_axis(ctx.attrs->axis, ctx.output.shape->rank()), sizeof(W));
  char* out = static_cast<char*>(ctx.output.data);
  for (size_t i = 0; i < shapes.size(); ++i) {
    MT_RETURN_IF_ERROR(copy_2d<W>(kOp, gpu_state(ctx), static_cast<const char*>(ctx.inputs[i].data),
                                  l.piece_row[i], out + l.offset[i], l.total_row, l.piece_row[i],
                                  l.outer));
  }
  return absl::OkStatus();
}

template <typename W>
absl::Status run_split(const KernelContext& ctx) {
  absl::InlinedVector<const Shape*, 8> shapes;
  for (const MutableTensorArg& t : ctx.outputs) shapes.push_back(t.shape);
  const Shape& in = *ctx.inputs[0].shape;
  const ConcatLayout l = internal::make_concat_layout(
      in, shapes, internal::canonical_axis(ctx.attrs->axis, in.rank()), sizeof(W));
  const char* src = static_cast<const char*>(ctx.inputs[0].data);
  for (size_t i = 0; i < shapes.size(); ++i) {
    MT_RETURN_IF_ERROR(copy_2d<W>(OpId::kSplitV, gpu_state(ctx), src + l.offset[i], l.total_row,
                                  static_cast<char*>(ctx.outputs[i].data), l.piece_row[i],
                                  l.piece_row[i], l.outer));
  }
  return absl::OkStatus();
}

// out[(o * k + j) * inner + c] = params[(o * n + idx[j]) * inner + c], or 0 when idx[j] is
// out of range (Note [GPU gather out of range]). blockIdx.y (grid-stride) picks (o, j).
template <typename W, typename I>
__global__ void gather_rows(const W* params, const I* idx, W* out, int64_t n, int64_t k,
                            int64_t inner, int64_t rows) {
  const int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (c >= inner) return;
  for (int64_t t = blockIdx.y; t < rows; t += gridDim.y) {
    const int64_t o = t / k, v = static_cast<int64_t>(idx[t - o * k]);
    out[t * inner + c] = v >= 0 && v < n ? params[(o * n + v) * inner + c] : W(0);
  }
}

// The same for short rows: one thread per output element.
template <typename W, typename I>
__global__ void gather_elements(const W* params, const I* idx, W* out, int64_t n, int64_t k,
                                int64_t inner, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = i / inner, c = i - t * inner, o = t / k;
    const int64_t v = static_cast<int64_t>(idx[t - o * k]);
    out[i] = v >= 0 && v < n ? params[(o * n + v) * inner + c] : W(0);
  }
}

template <typename W, typename I>
absl::Status gather_as(const KernelContext& ctx) {
  const Shape& params = *ctx.inputs[0].shape;
  const int axis = static_cast<int>(internal::canonical_axis(ctx.attrs->axis, params.rank()));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= params.dim(d);
  for (int d = axis + 1; d < params.rank(); ++d) inner *= params.dim(d);
  const int64_t n = params.dim(axis), k = ctx.inputs[1].shape->num_elements();
  const int64_t total = ctx.output.shape->num_elements();
  if (total == 0) return absl::OkStatus();
  const W* p = static_cast<const W*>(ctx.inputs[0].data);
  const I* idx = static_cast<const I*>(ctx.inputs[1].data);
  W* out = static_cast<W*>(ctx.output.data);
  if (inner >= kThreads) {
    const dim3 grid(static_cast<unsigned>((inner + kThreads - 1) / kThreads),
                    static_cast<unsigned>(std::min<int64_t>(outer * k, 65535)));
    return launch(OpId::kGatherV2, gpu_state(ctx), grid, kThreads, &gather_rows<W, I>, p, idx, out,
                  n, k, inner, outer * k);
  }
  return launch(OpId::kGatherV2, gpu_state(ctx), grid_for(total, kThreads), kThreads,
                &gather_elements<W, I>, p, idx, out, n, k, inner, total);
}

template <typename W>
absl::Status run_gather(const KernelContext& ctx) {
  return ctx.inputs[1].dtype == DType::kInt32 ? gather_as<W, int32_t>(ctx)
                                              : gather_as<W, int64_t>(ctx);
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

template <typename Tag>
using WordOf = Word<sizeof(typename Tag::type)>;

}  // namespace

absl::Status register_combine_kernels(KernelRegistry& registry) {
  MT_RETURN_IF_ERROR(add_gpu_kernels(
      registry, OpId::kConcatV2, AllTypes{},
      [](auto tag) -> KernelFn { return &run_concat<OpId::kConcatV2, WordOf<decltype(tag)>>; }));
  MT_RETURN_IF_ERROR(add_gpu_kernels(registry, OpId::kPack, AllTypes{}, [](auto tag) -> KernelFn {
    return &run_concat<OpId::kPack, WordOf<decltype(tag)>>;
  }));
  MT_RETURN_IF_ERROR(add_gpu_kernels(registry, OpId::kSplitV, AllTypes{}, [](auto tag) -> KernelFn {
    return &run_split<WordOf<decltype(tag)>>;
  }));
  MT_RETURN_IF_ERROR(
      add_gpu_kernels(registry, OpId::kGatherV2, AllTypes{},
                      [](auto tag) -> KernelFn { return &run_gather<WordOf<decltype(tag)>>; }));
  return add_gpu_kernels(registry, OpId::kOneHot, TypesIn<kIntDTypes>{}, [](auto tag) -> KernelFn {
    return &run_one_hot<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cuda
