// CPU kernels of the array ops that copy through a CopyPlan (Transpose, Slice,
// StridedSlice, BroadcastTo, Tile), the plain copies (Reshape, ExpandDims, Squeeze) and
// ZerosLike/OnesLike (Note [Array ops] in kernels/array_layout.h). Kernels are instantiated
// per element size: they move elements without reading them.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/array_layout.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

using internal::CopyPlan;

// Elements per thread below which a copy stays on the calling thread.
constexpr int64_t kGrainElements = 32768;
// The side of the square blocks a transpose copies, for cache reuse on both sides.
constexpr int64_t kBlock = 32;

// Returns the input offset of output row `row` (all dimensions but the last `skip`) and
// sets idx to its index.
int64_t row_offset(const CopyPlan& p, int skip, int64_t row, int64_t* idx) {
  int64_t off = p.offset;
  for (int d = static_cast<int>(p.dims.size()) - 1 - skip; d >= 0; --d) {
    idx[d] = row % p.dims[d];
    row /= p.dims[d];
    off += idx[d] * p.strides[d];
  }
  return off;
}

// Steps idx (over the dimensions before the last `skip`) to the next row; returns the
// change of the input offset.
int64_t next_row(const CopyPlan& p, int skip, int64_t* idx) {
  int64_t delta = 0;
  for (int d = static_cast<int>(p.dims.size()) - 1 - skip; d >= 0; --d) {
    delta += p.strides[d];
    if (++idx[d] < p.dims[d]) break;
    delta -= p.strides[d] * p.dims[d];
    idx[d] = 0;
  }
  return delta;
}

// A plan whose last output dimension steps through the input with stride 1 (memcpy), 0
// (a fill) or any other stride.
template <typename W>
void copy_rows(const CopyPlan& p, const W* in, W* out, int64_t n) {
  const int64_t inner = p.dims.back(), step = p.strides.back();
  parallel_for(n / inner, std::max<int64_t>(1, kGrainElements / inner), [&](int64_t b, int64_t e) {
    int64_t idx[internal::kMaxCopyRank];
    int64_t off = row_offset(p, 1, b, idx);
    for (int64_t row = b; row < e; ++row) {
      W* o = out + row * inner;
      const W* src = in + off;
      if (step == 1) {
        std::memcpy(o, src, inner * sizeof(W));
      } else if (step == 0) {
        std::fill(o, o + inner, *src);
      } else {
        for (int64_t j = 0; j < inner; ++j) o[j] = src[j * step];
      }
      off += next_row(p, 1, idx);
    }
  });
}

// A plan whose second last dimension is the input's contiguous one (a transpose of the
// last two): copied in kBlock x kBlock blocks so that both sides stay in cache.
template <typename W>
void copy_blocks(const CopyPlan& p, const W* in, W* out, int64_t n) {
  const int rank = static_cast<int>(p.dims.size());
  const int64_t rows = p.dims[rank - 2], cols = p.dims[rank - 1], step = p.strides[rank - 1];
  const int64_t row_blocks = (rows + kBlock - 1) / kBlock;
  const int64_t grain = std::max<int64_t>(1, kGrainElements / (kBlock * cols));
  parallel_for(n / (rows * cols) * row_blocks, grain, [&](int64_t b, int64_t e) {
    int64_t idx[internal::kMaxCopyRank];
    for (int64_t t = b; t < e; ++t) {
      const int64_t batch = t / row_blocks, r0 = t % row_blocks * kBlock;
      const W* src = in + row_offset(p, 2, batch, idx);
      W* dst = out + batch * rows * cols;
      const int64_t r1 = std::min(rows, r0 + kBlock);
      for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
        const int64_t c1 = std::min(cols, c0 + kBlock);
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) dst[r * cols + c] = src[r + c * step];
        }
      }
    }
  });
}

template <OpId kOp, typename W>
absl::Status plan_kernel(const KernelContext& ctx) {
  const int64_t n = ctx.output.shape->num_elements();
  if (n == 0) return absl::OkStatus();
  CopyPlan p;
  MT_RETURN_IF_ERROR(internal::make_copy_plan(kOp, *ctx.inputs[0].shape, *ctx.attrs, &p));
  const W* in = static_cast<const W*>(ctx.inputs[0].data);
  W* out = static_cast<W*>(ctx.output.data);
  const int rank = static_cast<int>(p.dims.size());
  if (rank == 0) {
    out[0] = in[p.offset];
  } else if (rank >= 2 && p.strides[rank - 1] != 1 && p.strides[rank - 2] == 1) {
    copy_blocks(p, in, out, n);
  } else {
    copy_rows(p, in, out, n);
  }
  return absl::OkStatus();
}

// Reshape, ExpandDims, Squeeze: the bytes unchanged.
absl::Status copy_kernel(const KernelContext& ctx) {
  const int64_t bytes = ctx.output.shape->num_elements() * dtype_size(ctx.output.dtype);
  const char* in = static_cast<const char*>(ctx.inputs[0].data);
  char* out = static_cast<char*>(ctx.output.data);
  if (bytes == 0) return absl::OkStatus();  // no buffers: data is null
  parallel_for(bytes, kGrainElements * 8, [&](int64_t begin, int64_t end) {
    std::memcpy(out + begin, in + begin, end - begin);
  });
  return absl::OkStatus();
}

template <typename T, int kValue>
absl::Status fill_like_kernel(const KernelContext& ctx) {
  const T v = kValue == 0 ? T() : internal::one_as<T>();
  T* out = output_data<T>(ctx);
  parallel_for(ctx.output.shape->num_elements(), kGrainElements,
               [&](int64_t b, int64_t e) { std::fill(out + b, out + e, v); });
  return absl::OkStatus();
}

absl::Status add_copy_kernels(KernelRegistry& registry, OpId op) {
  return add_kernels(registry, op, AllTypes{}, [](auto) -> KernelFn { return &copy_kernel; });
}

template <OpId kOp>
absl::Status add_plan_kernels(KernelRegistry& registry) {
  return add_kernels(registry, kOp, AllTypes{}, [](auto tag) -> KernelFn {
    return &plan_kernel<kOp, internal::Word<sizeof(typename decltype(tag)::type)>>;
  });
}

}  // namespace

MT_OP_KERNELS(Reshape) { return add_copy_kernels(registry, OpId::kReshape); }
MT_OP_KERNELS(ExpandDims) { return add_copy_kernels(registry, OpId::kExpandDims); }
MT_OP_KERNELS(Squeeze) { return add_copy_kernels(registry, OpId::kSqueeze); }
MT_OP_KERNELS(Transpose) { return add_plan_kernels<OpId::kTranspose>(registry); }
MT_OP_KERNELS(Slice) { return add_plan_kernels<OpId::kSlice>(registry); }
MT_OP_KERNELS(StridedSlice) { return add_plan_kernels<OpId::kStridedSlice>(registry); }
MT_OP_KERNELS(BroadcastTo) { return add_plan_kernels<OpId::kBroadcastTo>(registry); }
MT_OP_KERNELS(Tile) { return add_plan_kernels<OpId::kTile>(registry); }
MT_OP_KERNELS(ZerosLike) {
  return add_kernels(registry, OpId::kZerosLike, AllTypes{}, [](auto tag) -> KernelFn {
    return &fill_like_kernel<typename decltype(tag)::type, 0>;
  });
}
MT_OP_KERNELS(OnesLike) {
  return add_kernels(registry, OpId::kOnesLike, AllTypes{}, [](auto tag) -> KernelFn {
    return &fill_like_kernel<typename decltype(tag)::type, 1>;
  });
}

}  // namespace mt::cpu
