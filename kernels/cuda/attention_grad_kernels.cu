// GPU kernels of DotProductAttentionGrad (Note [Dot-product attention] in
// kernels/attention_shape.cc), recomputing P from lse: dk and dv a block per key tile, dq a
// block per query tile (Note [Attention on the GPU] in attention_tiles.h).
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
struct GradArgs {
  AttentionLayout l;
  const T *d_o, *q, *k, *v, *o;
  const Acc<T>* lse;
  T *dq, *dk, *dv;
  Acc<T> scale, scale_log2;  // and times log2(e): scores in base 2
  bool causal;
};

// The shared memory of a backward block: four tiles, the score tile and two row vectors.
template <typename C, int kHead>
struct GradShared {
  using G = Tile<C, kHead>;
  C *a, *b, *c, *d, *p, *lse2, *delta;

  __device__ explicit GradShared(unsigned char* shared) {
    a = reinterpret_cast<C*>(shared);
    b = a + G::kTile, c = b + G::kTile, d = c + G::kTile, p = d + G::kTile;
    lse2 = p + G::kPTile, delta = lse2 + G::kBlock;
  }
};

// Loads the query tile i0 of head h of batch b: q into qs, do into dos, then (after a
// barrier) lse2 = lse * log2(e) and delta = do . o of each row (0 past the last).
template <typename G, typename T, typename C>
__device__ void load_queries(const GradArgs<T>& a, int64_t b, int64_t h, int64_t i0, C* qs, C* dos,
                             C* lse2, C* delta) {
  const AttentionLayout& l = a.l;
  const int64_t row = (b * l.queries + i0) * l.heads + h;
  attention::load_tile<G>(qs, a.q + row * l.depth, l.heads * l.depth, l.queries - i0, l.depth);
  attention::load_tile<G>(dos, a.d_o + row * l.value_depth, l.heads * l.value_depth, l.queries - i0,
                          l.value_depth);
  __syncthreads();
  const int warp = static_cast<int>(threadIdx.x) / 32, lane32 = static_cast<int>(threadIdx.x) % 32;
  for (int r = warp; r < G::kBlock; r += kBlockThreads / 32) {
    const bool valid = i0 + r < l.queries;
    C dot = 0;
    for (int col = lane32; valid && col < l.value_depth; col += 32) {
      dot += dos[r * G::kStride + col] * to_compute(a.o[(row + r * l.heads) * l.value_depth + col]);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
      dot += __shfl_xor_sync(0xffffffffu, dot, offset);
    if (lane32 == 0) {
      delta[r] = dot;
      lse2[r] = valid ? a.lse[(b * l.heads + h) * l.queries + i0 + r] * C(attention::kLog2e) : C(0);
    }
  }
}

// Returns P of query i and key j from the score s (q . k) and lse2 of the row; 0 where the
// query does not see the key, or either is past the last.
template <typename T, typename C>
__device__ __forceinline__ C probability(const GradArgs<T>& a, int64_t i, int64_t j, C s, C lse2) {
  const bool seen = i < a.l.queries && j < a.l.keys && (!a.causal || j <= i);
  return seen ? exp2(s * a.scale_log2 - lse2) : C(0);
}

// Writes this thread's rows, times `factor`, to rows from `first` (`limit` of them; `stride`
// elements apart, `width` wide) of out.
template <typename G, typename T, typename C>
__device__ __forceinline__ void store_rows(const Rows<G, C>& acc, C factor, T* out, int64_t stride,
                                           int64_t first, int64_t limit, int64_t width) {
#pragma unroll
  for (int r = 0; r < G::kRows; ++r) {
    const int64_t row = first + row_group() * G::kRows + r;
    if (row >= limit) continue;
#pragma unroll
    for (int c = 0; c < G::kCols; ++c) {
      const int col = lane() + c * kLanes;
      if (col < width) out[(row - first) * stride + col] = from_compute<T>(acc[r][c] * factor);
    }
  }
}

template <typename G, typename C>
__device__ __forceinline__ void zero(Rows<G, C>& acc) {
#pragma unroll
  for (int r = 0; r < G::kRows; ++r) {
#pragma unroll
    for (int c = 0; c < G::kCols; ++c) acc[r][c] = 0;
  }
}

// One query tile's part of a key tile's dk and dv (the tiles loaded): thread rows are keys,
// score columns queries.
template <typename G, typename T, typename C>
__device__ __forceinline__ void key_tile_step(const GradArgs<T>& a, int64_t i0, int64_t j0,
                                              const GradShared<C, G::kHead>& sm, Rows<G, C>& dk,
                                              Rows<G, C>& dv) {
  Scores<G, C> p, ds;
  attention::tile_dot<G>(sm.a, sm.c, p);   // k . q
  attention::tile_dot<G>(sm.b, sm.d, ds);  // v . do
#pragma unroll
  for (int r = 0; r < G::kRows; ++r) {
    const int64_t j = j0 + row_group() * G::kRows + r;
#pragma unroll
    for (int c = 0; c < G::kRows; ++c) {
      const int col = lane() + c * kLanes;
      p[r][c] = probability(a, i0 + col, j, p[r][c], sm.lse2[col]);
      ds[r][c] = p[r][c] * (ds[r][c] - sm.delta[col]);
    }
  }
  attention::store_scores<G>(p, sm.p);
  __syncthreads();
  attention::tile_accumulate<G>(sm.p, sm.d, dv);  // P^T do
  __syncthreads();
  attention::store_scores<G>(ds, sm.p);
  __syncthreads();
  attention::tile_accumulate<G>(sm.p, sm.c, dk);  // dS^T q
}

// dk and dv: a block per key tile of one kv head (tiles a = k, b = v, c = q, d = do).
template <typename T, int kHead>
__global__ void __launch_bounds__(kBlockThreads) attention_grad_kv(GradArgs<T> a) {
  using C = Acc<T>;
  using G = Tile<C, kHead>;
  extern __shared__ __align__(16) unsigned char shared[];
  const GradShared<C, kHead> sm(shared);
  const AttentionLayout& l = a.l;
  const int64_t tiles = (l.keys + G::kBlock - 1) / G::kBlock;
  for (int64_t w = blockIdx.x; w < l.batch * l.kv_heads * tiles; w += gridDim.x) {
    const int64_t bh = w / tiles, j0 = w % tiles * G::kBlock;  // the first tiles see the most
    const int64_t b = bh / l.kv_heads, hk = bh % l.kv_heads;
    const int64_t row = (b * l.keys + j0) * l.kv_heads + hk;
    __syncthreads();
    attention::load_tile<G>(sm.a, a.k + row * l.depth, l.kv_heads * l.depth, l.keys - j0, l.depth);
    attention::load_tile<G>(sm.b, a.v + row * l.value_depth, l.kv_heads * l.value_depth,
                            l.keys - j0, l.value_depth);
    Rows<G, C> dk, dv;
    zero<G>(dk), zero<G>(dv);
    for (int64_t h = hk * l.group; h < (hk + 1) * l.group; ++h) {
      for (int64_t i0 = a.causal ? j0 : 0; i0 < l.queries; i0 += G::kBlock) {
        __syncthreads();  // the previous step's readers are done
        load_queries<G>(a, b, h, i0, sm.c, sm.d, sm.lse2, sm.delta);
        __syncthreads();
        key_tile_step<G>(a, i0, j0, sm, dk, dv);
      }
    }
    store_rows<G>(dk, a.scale, a.dk + row * l.depth, l.kv_heads * l.depth, j0, l.keys, l.depth);
    store_rows<G>(dv, C(1), a.dv + row * l.value_depth, l.kv_heads * l.value_depth, j0, l.keys,
                  l.value_depth);
  }
}

// dq: a block per query tile of one head (tiles a = q, b = do, c = k, d = v).
template <typename T, int kHead>
__global__ void __launch_bounds__(kBlockThreads) attention_grad_q(GradArgs<T> a) {
  using C = Acc<T>;
  using G = Tile<C, kHead>;
  extern __shared__ __align__(16) unsigned char shared[];
  const GradShared<C, kHead> sm(shared);
  const AttentionLayout& l = a.l;
  const int64_t tiles = (l.queries + G::kBlock - 1) / G::kBlock;
  for (int64_t w = blockIdx.x; w < l.batch * l.heads * tiles; w += gridDim.x) {
    const int64_t bh = w / tiles, i0 = (tiles - 1 - w % tiles) * G::kBlock;  // last tiles first
    const int64_t b = bh / l.heads, h = bh % l.heads, hk = h / l.group;
    __syncthreads();
    load_queries<G>(a, b, h, i0, sm.a, sm.b, sm.lse2, sm.delta);
    Rows<G, C> dq;
    zero<G>(dq);
    const int64_t end = a.causal && i0 + G::kBlock < l.keys ? i0 + G::kBlock : l.keys;
    for (int64_t j0 = 0; j0 < end; j0 += G::kBlock) {
      const int64_t row = (b * l.keys + j0) * l.kv_heads + hk;
      __syncthreads();
      attention::load_tile<G>(sm.c, a.k + row * l.depth, l.kv_heads * l.depth, l.keys - j0,
                              l.depth);
      attention::load_tile<G>(sm.d, a.v + row * l.value_depth, l.kv_heads * l.value_depth,
                              l.keys - j0, l.value_depth);
      __syncthreads();
      Scores<G, C> ds, dp;
      attention::tile_dot<G>(sm.a, sm.c, ds);  // q . k
      attention::tile_dot<G>(sm.b, sm.d, dp);  // do . v
#pragma unroll
      for (int r = 0; r < G::kRows; ++r) {
        const int local = row_group() * G::kRows + r;
#pragma unroll
        for (int c = 0; c < G::kRows; ++c) {
          const C p =
              probability(a, i0 + local, j0 + lane() + c * kLanes, ds[r][c], sm.lse2[local]);
          ds[r][c] = p * (dp[r][c] - sm.delta[local]);
        }
      }
      attention::store_scores<G>(ds, sm.p);
      __syncthreads();
      attention::tile_accumulate<G>(sm.p, sm.c, dq);  // dS k
    }
    const int64_t row = (b * l.queries + i0) * l.heads + h;
    store_rows<G>(dq, a.scale, a.dq + row * l.depth, l.heads * l.depth, i0, l.queries, l.depth);
  }
}

template <typename T>
absl::Status run_attention_grad(const KernelContext& ctx) {
  using C = Acc<T>;
  GradArgs<T> a;
  a.l =
      internal::attention_layout(*ctx.inputs[1].shape, *ctx.inputs[2].shape, *ctx.inputs[3].shape);
  const void* in[6];
  for (int i = 0; i < 6; ++i) in[i] = ctx.inputs[i].data;
  a.d_o = static_cast<const T*>(in[0]), a.q = static_cast<const T*>(in[1]);
  a.k = static_cast<const T*>(in[2]), a.v = static_cast<const T*>(in[3]);
  a.o = static_cast<const T*>(in[4]), a.lse = static_cast<const C*>(in[5]);
  a.dq = static_cast<T*>(ctx.outputs[0].data), a.dk = static_cast<T*>(ctx.outputs[1].data);
  a.dv = static_cast<T*>(ctx.outputs[2].data);
  a.scale = static_cast<C>(ctx.attrs->scale);
  a.scale_log2 = static_cast<C>(ctx.attrs->scale * attention::kLog2e);
  a.causal = ctx.attrs->causal;
  const AttentionLayout& l = a.l;
  constexpr OpId kOp = OpId::kDotProductAttentionGrad;
  return attention::with_head(kOp, std::max(l.depth, l.value_depth), [&](auto head) {
    constexpr int kHead = decltype(head)::value;
    using G = Tile<C, kHead>;
    const size_t bytes = attention::shared_bytes<C, kHead>(G::kRows, 4, 2);
    const int64_t key_work = l.batch * l.kv_heads * ((l.keys + G::kBlock - 1) / G::kBlock);
    if (key_work > 0) {
      const absl::Status launched = attention::launch_shared<&attention_grad_kv<T, kHead>>(
          kOp, gpu_state(ctx), attention::grid_over(key_work), bytes, a);
      if (!launched.ok()) return launched;
    }
    const int64_t query_work = l.batch * l.heads * ((l.queries + G::kBlock - 1) / G::kBlock);
    if (query_work == 0) return absl::OkStatus();
    return attention::launch_shared<&attention_grad_q<T, kHead>>(
        kOp, gpu_state(ctx), attention::grid_over(query_work), bytes, a);
  });
}

}  // namespace

MT_OP_KERNELS(DotProductAttentionGrad) {
  return add_gpu_kernels(
      registry, OpId::kDotProductAttentionGrad, FloatTypes{},
      [](auto tag) -> KernelFn { return &run_attention_grad<typename decltype(tag)::type>; });
}

}  // namespace mt::cuda
