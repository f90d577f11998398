// CPU kernels of the array ops that join, split or index: ConcatV2, Pack, SplitV (rows of
// bytes copied with memcpy), GatherV2 (rows of params picked by index; an index out of
// range is an error, as in TensorFlow) and OneHot.
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_join.h"
#include "kernels/array_layout.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

using internal::ConcatLayout;

// Bytes per thread below which a copy stays on the calling thread.
constexpr int64_t kGrainBytes = 256 * 1024;

// Copies rows between the whole and the pieces: into the whole when `join`, else out of it.
void copy_pieces(const ConcatLayout& l, char* whole, absl::Span<char* const> pieces, bool join) {
  if (l.total_row == 0) return;
  parallel_for(l.outer, std::max<int64_t>(1, kGrainBytes / l.total_row), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (l.piece_row[i] == 0) continue;  // an empty piece has no buffer (data is null)
        char* w = whole + r * l.total_row + l.offset[i];
        char* p = pieces[i] + r * l.piece_row[i];
        if (join) {
          std::memcpy(w, p, l.piece_row[i]);
        } else {
          std::memcpy(p, w, l.piece_row[i]);
        }
      }
    }
  });
}

// ConcatV2 and Pack (whose axis counts in the output's dimensions as ConcatV2's does).
absl::Status concat_kernel(const KernelContext& ctx) {
  absl::InlinedVector<const Shape*, 8> shapes;
  absl::InlinedVector<char*, 8> data;
  for (const TensorArg& t : ctx.inputs) {
    shapes.push_back(t.shape);
    data.push_back(static_cast<char*>(const_cast<void*>(t.data)));  // only read
  }
  const int64_t rank = ctx.output.shape->rank();
  const ConcatLayout l = internal::make_concat_layout(
      *ctx.output.shape, shapes, internal::canonical_axis(ctx.attrs->axis, rank),
      dtype_size(ctx.output.dtype));
  copy_pieces(l, static_cast<char*>(ctx.output.data), data, /*join=*/true);
  return absl::OkStatus();
}

absl::Status split_kernel(const KernelContext& ctx) {
  absl::InlinedVector<const Shape*, 8> shapes;
  absl::InlinedVector<char*, 8> data;
  for (const MutableTensorArg& t : ctx.outputs) {
    shapes.push_back(t.shape);
    data.push_back(static_cast<char*>(t.data));
  }
  const Shape& in = *ctx.inputs[0].shape;
  const ConcatLayout l =
      internal::make_concat_layout(in, shapes, internal::canonical_axis(ctx.attrs->axis, in.rank()),
                                   dtype_size(ctx.inputs[0].dtype));
  copy_pieces(l, static_cast<char*>(const_cast<void*>(ctx.inputs[0].data)), data,
              /*join=*/false);
  return absl::OkStatus();
}

// Returns TensorFlow's error for the first index outside [0, n), naming its position.
template <typename I>
absl::Status check_gather_indices(const Shape& shape, const I* idx, int64_t n) {
  const int64_t k = shape.num_elements();
  for (int64_t i = 0; i < k; ++i) {
    if (idx[i] >= 0 && idx[i] < n) continue;
    absl::InlinedVector<int64_t, 8> pos(shape.rank());
    for (int64_t d = shape.rank() - 1, r = i; d >= 0; --d) {
      pos[d] = r % shape.dim(d);
      r /= shape.dim(d);
    }
    return internal::op_error(OpId::kGatherV2, "indices[", absl::StrJoin(pos, ","),
                              "] = ", static_cast<int64_t>(idx[i]), " is not in [0, ", n, ")");
  }
  return absl::OkStatus();
}

template <typename I>
absl::Status gather_rows(const KernelContext& ctx) {
  const Shape& params = *ctx.inputs[0].shape;
  const Shape& indices = *ctx.inputs[1].shape;
  const int64_t axis = internal::canonical_axis(ctx.attrs->axis, params.rank());
  const int64_t n = params.dim(static_cast<int>(axis));
  const I* idx = static_cast<const I*>(ctx.inputs[1].data);
  MT_RETURN_IF_ERROR(check_gather_indices(indices, idx, n));
  // No element: nothing to copy (the GPU kernel returns here too), and a row's byte size
  // may pass int64 with huge dimensions beside a zero.
  if (ctx.output.shape->num_elements() == 0) return absl::OkStatus();
  int64_t outer = 1, row = dtype_size(ctx.inputs[0].dtype);
  for (int64_t d = 0; d < axis; ++d) outer *= params.dim(d);
  for (int d = axis + 1; d < params.rank(); ++d) row *= params.dim(d);
  const int64_t k = indices.num_elements();
  const char* in = static_cast<const char*>(ctx.inputs[0].data);
  char* out = static_cast<char*>(ctx.output.data);
  if (row == 0 || k == 0) return absl::OkStatus();
  parallel_for(outer * k, std::max<int64_t>(1, kGrainBytes / row), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / k, j = t % k;
      if (row != 0) std::memcpy(out + t * row, in + (o * n + idx[j]) * row, row);
    }
  });
  return absl::OkStatus();
}

absl::Status gather_kernel(const KernelContext& ctx) {
  return ctx.inputs[1].dtype == DType::kInt32 ? gather_rows<int32_t>(ctx)
                                              : gather_rows<int64_t>(ctx);
}

template <typename I>
absl::Status one_hot_kernel(const KernelContext& ctx) {
  // No element: nothing to write, and outer * depth may pass int64 (a huge depth beside a
  // zero dimension) or take ages to count through.
  if (ctx.output.shape->num_elements() == 0) return absl::OkStatus();
  const Shape& indices = *ctx.inputs[0].shape;
  const int64_t axis = ctx.attrs->axis == -1 ? indices.rank() : ctx.attrs->axis;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < indices.rank(); ++d) (d < axis ? outer : inner) *= indices.dim(d);
  const int64_t depth = ctx.attrs->depth;
  const I* idx = static_cast<const I*>(ctx.inputs[0].data);
  return visit_dtype(ctx.output.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T on = internal::scalar_as<T>(ctx.attrs->value),
            off = internal::scalar_as<T>(ctx.attrs->off_value);
    T* out = output_data<T>(ctx);
    parallel_for(outer * depth, std::max<int64_t>(1, 32768 / std::max<int64_t>(inner, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t t = b; t < e; ++t) {
                     const int64_t o = t / depth, d = t % depth;
                     for (int64_t s = 0; s < inner; ++s) {
                       out[t * inner + s] = idx[o * inner + s] == d ? on : off;
                     }
                   }
                 });
    return absl::OkStatus();
  });
}

}  // namespace

MT_OP_KERNELS(ConcatV2) {
  return add_kernels(registry, OpId::kConcatV2, AllTypes{},
                     [](auto) -> KernelFn { return &concat_kernel; });
}
MT_OP_KERNELS(Pack) {
  return add_kernels(registry, OpId::kPack, AllTypes{},
                     [](auto) -> KernelFn { return &concat_kernel; });
}
MT_OP_KERNELS(SplitV) {
  return add_kernels(registry, OpId::kSplitV, AllTypes{},
                     [](auto) -> KernelFn { return &split_kernel; });
}
MT_OP_KERNELS(GatherV2) {
  return add_kernels(registry, OpId::kGatherV2, AllTypes{},
                     [](auto) -> KernelFn { return &gather_kernel; });
}
MT_OP_KERNELS(OneHot) {
  return add_kernels(registry, OpId::kOneHot, TypesIn<kIntDTypes>{}, [](auto tag) -> KernelFn {
    return &one_hot_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
