// GPU kernel of DotProductAttention (Note [Dot-product attention] in
// kernels/attention_shape.cc): a block per tile of query rows of one head, over the key tiles
// they see, with an online softmax (Note [Attention on the GPU] in attention_tiles.h).
#include <algorithm>
#include <cmath>

#include "kernels/cuda/attention_tiles.h"

namespace mt::cuda {
namespace {

using attention::Acc;
using attention::AttentionLayout;
using attention::kBlockThreads;
using attention::kLanes;
using attention::lane;
using attention::row_group;
using attention::Rows;
using attention::Scores;
using attention::Tile;

template <typename T>
struct ForwardArgs {
  AttentionLayout l;
  const T *q, *k, *v;
  T* o;
  Acc<T>* lse;
  Acc<T> scale_log2;  // the scale times log2(e): scores in base 2
  bool causal;
};

// Folds the scores s (kRows x kRows, base 2, of query rows from i0 against keys from j0) into
// the rows' running maximum and sum, rescales their outputs o and writes P to the tile p.
template <typename G, typename T, typename C>
__device__ __forceinline__ void online_softmax(const ForwardArgs<T>& a, int64_t i0, int64_t j0,
                                               Scores<G, C>& s, C* row_max, C* row_sum,
                                               Rows<G, C>& o, C* p) {
  const C kInf = static_cast<C>(INFINITY);
#pragma unroll
  for (int r = 0; r < G::kRows; ++r) {
    const int64_t i = i0 + row_group() * G::kRows + r;
    C top = -kInf;
#pragma unroll
    for (int c = 0; c < G::kRows; ++c) {
      const int64_t j = j0 + lane() + c * kLanes;
      const bool seen = j < a.l.keys && (!a.causal || j <= i);
      s[r][c] = seen ? s[r][c] * a.scale_log2 : -kInf;
      top = fmax(top, s[r][c]);
    }
    // Every row sees a key of every tile it visits (Note [Attention on the GPU]), so next is
    // -inf only when its scores are: then P is NaN, as on the CPU and in the composite.
    const C next = fmax(row_max[r], attention::lanes_max(top));
    const C alpha = exp2(row_max[r] - next);  // 0 at the first tile
    C add = 0;
#pragma unroll
    for (int c = 0; c < G::kRows; ++c) add += s[r][c] = exp2(s[r][c] - next);
    row_sum[r] = row_sum[r] * alpha + attention::lanes_sum(add);
    row_max[r] = next;
#pragma unroll
    for (int c = 0; c < G::kCols; ++c) o[r][c] *= alpha;
  }
  attention::store_scores<G>(s, p);
}

// Writes the output rows of query tile i0 of head h of batch b and their lse; a row that saw
// no key gets o = 0 and lse = -inf.
template <typename G, typename T, typename C>
__device__ __forceinline__ void store_output(const ForwardArgs<T>& a, int64_t b, int64_t h,
                                             int64_t i0, const C* row_max, const C* row_sum,
                                             const Rows<G, C>& o) {
  const AttentionLayout& l = a.l;
#pragma unroll
  for (int r = 0; r < G::kRows; ++r) {
    const int64_t i = i0 + row_group() * G::kRows + r;
    if (i >= l.queries) continue;
    const C sum = row_sum[r];
    T* out = a.o + ((b * l.queries + i) * l.heads + h) * l.value_depth;
#pragma unroll
    for (int c = 0; c < G::kCols; ++c) {
      const int col = lane() + c * kLanes;
      if (col < l.value_depth) out[col] = from_compute<T>(sum == 0 ? C(0) : o[r][c] / sum);
    }
    if (lane() == 0) {
      a.lse[(b * l.heads + h) * l.queries + i] =
          sum == 0 ? static_cast<C>(-INFINITY) : row_max[r] * C(attention::kLn2) + log(sum);
    }
  }
}

template <typename T, int kHead>
__global__ void __launch_bounds__(kBlockThreads) attention_forward(ForwardArgs<T> a) {
  using C = Acc<T>;
  using G = Tile<C, kHead>;
  extern __shared__ __align__(16) unsigned char shared[];
  C* qs = reinterpret_cast<C*>(shared);
  C *ks = qs + G::kTile, *vs = ks + G::kTile, *ps = vs + G::kTile;
  const AttentionLayout& l = a.l;
  const int64_t tiles = (l.queries + G::kBlock - 1) / G::kBlock;
  for (int64_t w = blockIdx.x; w < l.batch * l.heads * tiles; w += gridDim.x) {
    const int64_t bh = w / tiles, i0 = (tiles - 1 - w % tiles) * G::kBlock;  // last tiles first
    const int64_t b = bh / l.heads, h = bh % l.heads, hk = h / l.group;
    __syncthreads();  // the previous item's readers are done with the tiles
    attention::load_tile<G>(qs, a.q + ((b * l.queries + i0) * l.heads + h) * l.depth,
                            l.heads * l.depth, l.queries - i0, l.depth);
    C row_max[G::kRows], row_sum[G::kRows];
    Rows<G, C> o;
#pragma unroll
    for (int r = 0; r < G::kRows; ++r) {
      row_max[r] = static_cast<C>(-INFINITY), row_sum[r] = 0;
#pragma unroll
      for (int c = 0; c < G::kCols; ++c) o[r][c] = 0;
    }
    const int64_t end = a.causal && i0 + G::kBlock < l.keys ? i0 + G::kBlock : l.keys;
    for (int64_t j0 = 0; j0 < end; j0 += G::kBlock) {
      const int64_t row = (b * l.keys + j0) * l.kv_heads + hk;
      __syncthreads();  // the previous key tile's readers are done
      attention::load_tile<G>(ks, a.k + row * l.depth, l.kv_heads * l.depth, l.keys - j0, l.depth);
      attention::load_tile<G>(vs, a.v + row * l.value_depth, l.kv_heads * l.value_depth,
                              l.keys - j0, l.value_depth);
      __syncthreads();
      Scores<G, C> s;
      attention::tile_dot<G>(qs, ks, s);
      online_softmax<G>(a, i0, j0, s, row_max, row_sum, o, ps);
      __syncthreads();  // P written
      attention::tile_accumulate<G>(ps, vs, o);
    }
    store_output<G>(a, b, h, i0, row_max, row_sum, o);
  }
}

template <typename T>
absl::Status run_attention(const KernelContext& ctx) {
  using C = Acc<T>;
  ForwardArgs<T> a;
  a.l =
      internal::attention_layout(*ctx.inputs[0].shape, *ctx.inputs[1].shape, *ctx.inputs[2].shape);
  a.q = static_cast<const T*>(ctx.inputs[0].data);
  a.k = static_cast<const T*>(ctx.inputs[1].data);
  a.v = static_cast<const T*>(ctx.inputs[2].data);
  a.o = static_cast<T*>(ctx.outputs[0].data);
  a.lse = static_cast<C*>(ctx.outputs[1].data);
  a.scale_log2 = static_cast<C>(ctx.attrs->scale * attention::kLog2e);
  a.causal = ctx.attrs->causal;
  const AttentionLayout& l = a.l;
  constexpr OpId kOp = OpId::kDotProductAttention;
  return attention::with_head(kOp, std::max(l.depth, l.value_depth), [&](auto head) {
    constexpr int kHead = decltype(head)::value;
    using G = Tile<C, kHead>;
    const int64_t work = l.batch * l.heads * ((l.queries + G::kBlock - 1) / G::kBlock);
    if (work == 0) return absl::OkStatus();
    return attention::launch_shared<&attention_forward<T, kHead>>(
        kOp, gpu_state(ctx), attention::grid_over(work),
        attention::shared_bytes<C, kHead>(G::kRows, 3, 0), a);
  });
}

}  // namespace

MT_OP_KERNELS(DotProductAttention) {
  return add_gpu_kernels(
      registry, OpId::kDotProductAttention, FloatTypes{},
      [](auto tag) -> KernelFn { return &run_attention<typename decltype(tag)::type>; });
}

}  // namespace mt::cuda
