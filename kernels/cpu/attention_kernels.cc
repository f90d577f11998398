// CPU kernels of DotProductAttention and DotProductAttentionGrad (Note [Dot-product attention]
// in kernels/attention_shape.cc).
//
// Note [Attention on the CPU]: the work is split into blocks of kQueryRows query rows of one
// head (the forward pass and dq) or of kKeyRows keys of one kv head (dk and dv), which run in
// parallel. A block widens its rows into float32 buffers (float64 for float64) and takes its
// products through the ISA level's GEMM (loops.h). The forward pass visits the key blocks
// its rows see, keeping each row's running maximum and sum of exponentials (an online
// softmax), so no score matrix larger than a block exists. The backward pass recomputes P
// from lse: dk and dv in one pass, each key block over the query blocks that see it (and the
// query heads of its kv head), dq in another, each query block over the key blocks it sees,
// so no two threads write one element. With `causal`, blocks skip the keys no row of theirs
// sees. The blocks depend on the shape alone, so a result never depends on the threads.
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <type_traits>
#include <vector>

#include "kernels/attention.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

using internal::AttentionLayout;

constexpr int64_t kQueryRows = 64;
constexpr int64_t kKeyRows = 128;
// About this many multiply-adds per parallel chunk at least.
constexpr int64_t kGrainWork = int64_t{1} << 20;

// The arithmetic's type: float64 for float64, float32 for the others.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
Acc<T> wide(T v) {
  return static_cast<Acc<T>>(static_cast<float>(v));
}
template <>
double wide(double v) {
  return v;
}

// The tensors of a call, typed, and its attributes.
template <typename T>
struct Call {
  AttentionLayout l;
  const T *q, *k, *v;
  const T *d_o, *o;         // the gradient's
  const Acc<T>* lse_in;     // the gradient's
  T *out_o, *dq, *dk, *dv;  // the outputs of the call's row
  Acc<T>* lse;              // the forward pass's output
  Acc<T> scale;
  bool causal;

  int64_t q_row(int64_t b, int64_t i, int64_t h) const { return (b * l.queries + i) * l.heads + h; }
  int64_t k_row(int64_t b, int64_t j, int64_t hk) const {
    return (b * l.keys + j) * l.kv_heads + hk;
  }
};

// Eigen's loops (the exp, the GEMM's edges) take paths that depend on where a buffer starts,
// so the blocks' buffers start at 64 bytes wherever they are allocated: a block computes the
// same bits on any thread.
template <typename C>
struct Aligned64 {
  using value_type = C;
  Aligned64() = default;
  template <typename U>
  explicit Aligned64(const Aligned64<U>&) {}
  C* allocate(size_t n) {
    return static_cast<C*>(::operator new (n * sizeof(C), std::align_val_t{64}));
  }
  void deallocate(C* p, size_t) { ::operator delete (p, std::align_val_t{64}); }
  friend bool operator==(const Aligned64&, const Aligned64&) { return true; }
};
template <typename C>
using Buffer = std::vector<C, Aligned64<C>>;

// One thread's buffers, of one block's size (Note [Attention on the CPU]).
template <typename C>
struct Scratch {
  Buffer<C> q, d_o, k, v, s, p, acc, acc2, tmp, max, sum, lse, delta;

  explicit Scratch(const AttentionLayout& l) {
    const int64_t d = l.depth, dv = l.value_depth, widest = std::max(d, dv);
    q.resize(kQueryRows * d), d_o.resize(kQueryRows * dv);
    k.resize(kKeyRows * d), v.resize(kKeyRows * dv);
    s.resize(kQueryRows * kKeyRows), p.resize(kQueryRows * kKeyRows);
    acc.resize(std::max(kQueryRows, kKeyRows) * widest), acc2.resize(kKeyRows * dv);
    tmp.resize(std::max(kQueryRows, kKeyRows) * widest);
    max.resize(kQueryRows), sum.resize(kQueryRows), lse.resize(kQueryRows);
    delta.resize(kQueryRows);
  }
};

// Copies `rows` rows of `cols` elements, `stride` apart in `src`, into `dst`, widened.
template <typename T>
void widen_rows(const T* src, int64_t stride, int64_t rows, int64_t cols, Acc<T>* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = wide(src[r * stride + c]);
  }
}

// c (m x n) = op(a) op(b), contiguous: a is m x k (k x m when ta), b k x n (n x k when tb).
template <typename C>
void product(int64_t m, int64_t n, int64_t k, const C* a, bool ta, const C* b, bool tb, C* c) {
  if (m == 0 || n == 0) return;
  const GemmArgs g{m, n, k, a, ta ? m : k, ta, b, tb ? k : n, tb, c, n};
  cpu_loops().gemm[static_cast<int>(dtype_of<C>())](g);
}

// out[i] = exp(in[i]) for i in [0, n), through the ISA level's loop (in and out distinct).
template <typename C>
void exp_into(const C* in, C* out, int64_t n) {
  cpu_loops().unary[static_cast<int>(OpId::kExp)][static_cast<int>(dtype_of<C>())](in, out, n);
}

// Returns how many of the n keys from j0 query i sees: a prefix of them.
int64_t keys_seen(bool causal, int64_t i, int64_t j0, int64_t n) {
  return causal ? std::clamp<int64_t>(i - j0 + 1, 0, n) : n;
}

// Returns the end of the keys some query row before i1 sees.
int64_t key_end(bool causal, int64_t i1, int64_t keys) {
  return causal ? std::min(keys, i1) : keys;
}

// Folds the scores w.s (m x n, keys from j0) of the rows from i0 into their running maximum
// and sum, rescales their accumulators (w.acc, dv wide) and writes w.p = exp(s - max).
template <typename T, typename C = Acc<T>>
void online_softmax(const Call<T>& a, int64_t i0, int64_t j0, int64_t m, int64_t n, Scratch<C>& w) {
  const int64_t dv = a.l.value_depth;
  for (int64_t r = 0; r < m; ++r) {
    C *s = w.s.data() + r * n, *p = w.p.data() + r * n;
    const int64_t seen = keys_seen(a.causal, i0 + r, j0, n);
    std::fill(p + seen, p + n, C(0));
    if (seen == 0) continue;
    C top = w.max[r];
    for (int64_t c = 0; c < seen; ++c) top = std::max(top, s[c] *= a.scale);
    for (int64_t c = 0; c < seen; ++c) s[c] -= top;
    exp_into(s, p, seen);
    const C alpha = std::exp(w.max[r] - top);  // 0 for the first keys a row sees
    C add = 0;
    for (int64_t c = 0; c < seen; ++c) add += p[c];
    w.sum[r] = w.sum[r] * alpha + add;
    w.max[r] = top;
    for (C* o = w.acc.data() + r * dv; o < w.acc.data() + (r + 1) * dv; ++o) *o *= alpha;
  }
}

// The forward pass of query rows [i0, i0 + kQueryRows) of head h of batch b.
template <typename T>
void forward_block(const Call<T>& a, int64_t b, int64_t h, int64_t i0, Scratch<Acc<T>>& w) {
  using C = Acc<T>;
  const AttentionLayout& l = a.l;
  const int64_t d = l.depth, dv = l.value_depth, hk = h / l.group;
  const int64_t m = std::min(kQueryRows, l.queries - i0);
  widen_rows(a.q + a.q_row(b, i0, h) * d, l.heads * d, m, d, w.q.data());
  std::fill_n(w.acc.data(), m * dv, C(0));
  std::fill_n(w.max.data(), m, -std::numeric_limits<C>::infinity());
  std::fill_n(w.sum.data(), m, C(0));
  const int64_t end = key_end(a.causal, i0 + m, l.keys);
  for (int64_t j0 = 0; j0 < end; j0 += kKeyRows) {
    const int64_t n = std::min(kKeyRows, end - j0);
    widen_rows(a.k + a.k_row(b, j0, hk) * d, l.kv_heads * d, n, d, w.k.data());
    widen_rows(a.v + a.k_row(b, j0, hk) * dv, l.kv_heads * dv, n, dv, w.v.data());
    product(m, n, d, w.q.data(), false, w.k.data(), true, w.s.data());
    online_softmax(a, i0, j0, m, n, w);
    product(m, dv, n, w.p.data(), false, w.v.data(), false, w.tmp.data());
    for (int64_t e = 0; e < m * dv; ++e) w.acc[e] += w.tmp[e];
  }
  for (int64_t r = 0; r < m; ++r) {
    const C sum = w.sum[r];  // 0 when the row saw no key: o = 0, lse = -inf
    T* o = a.out_o + a.q_row(b, i0 + r, h) * dv;
    for (int64_t c = 0; c < dv; ++c) o[c] = T(sum == 0 ? C(0) : w.acc[r * dv + c] / sum);
    a.lse[(b * l.heads + h) * l.queries + i0 + r] =
        sum == 0 ? -std::numeric_limits<C>::infinity() : w.max[r] + std::log(sum);
  }
}

// Returns the parallel chunk, in blocks, for blocks of `work` multiply-adds each.
int64_t grain_for(int64_t work) {
  return std::max<int64_t>(1, kGrainWork / std::max<int64_t>(work, 1));
}

template <typename T>
absl::Status attention_kernel(const KernelContext& ctx) {
  Call<T> a{};
  a.l =
      internal::attention_layout(*ctx.inputs[0].shape, *ctx.inputs[1].shape, *ctx.inputs[2].shape);
  a.q = input_data<T>(ctx, 0), a.k = input_data<T>(ctx, 1), a.v = input_data<T>(ctx, 2);
  a.out_o = static_cast<T*>(ctx.outputs[0].data);
  a.lse = static_cast<Acc<T>*>(ctx.outputs[1].data);
  a.scale = static_cast<Acc<T>>(ctx.attrs->scale), a.causal = ctx.attrs->causal;
  const AttentionLayout& l = a.l;
  const int64_t blocks = (l.queries + kQueryRows - 1) / kQueryRows;
  const int64_t work = kQueryRows * l.keys * (l.depth + l.value_depth);
  parallel_for(l.batch * l.heads * blocks, grain_for(work), [&](int64_t begin, int64_t end) {
    Scratch<Acc<T>> w(l);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t bh = t / blocks;
      forward_block(a, bh / l.heads, bh % l.heads, (t % blocks) * kQueryRows, w);
    }
  });
  return absl::OkStatus();
}

// Widens query block [i0, i0 + m) of head h of batch b for the backward pass: q, do, lse and
// delta = do . o of each row.
template <typename T>
void load_query_block(const Call<T>& a, int64_t b, int64_t h, int64_t i0, int64_t m,
                      Scratch<Acc<T>>& w) {
  using C = Acc<T>;
  const AttentionLayout& l = a.l;
  const int64_t d = l.depth, dv = l.value_depth;
  widen_rows(a.q + a.q_row(b, i0, h) * d, l.heads * d, m, d, w.q.data());
  widen_rows(a.d_o + a.q_row(b, i0, h) * dv, l.heads * dv, m, dv, w.d_o.data());
  for (int64_t r = 0; r < m; ++r) {
    const T* o = a.o + a.q_row(b, i0 + r, h) * dv;
    C dot = 0;
    for (int64_t c = 0; c < dv; ++c) dot += w.d_o[r * dv + c] * wide(o[c]);
    w.delta[r] = dot;
    w.lse[r] = a.lse_in[(b * l.heads + h) * l.queries + i0 + r];
  }
}

// Turns the scores w.s (m x n) of the query rows from i0 against the keys from j0 into
// w.p = exp(scale * s - lse), 0 where a row does not see the key.
template <typename T, typename C = Acc<T>>
void probabilities(const Call<T>& a, int64_t i0, int64_t j0, int64_t m, int64_t n, Scratch<C>& w) {
  for (int64_t r = 0; r < m; ++r) {
    C *s = w.s.data() + r * n, *p = w.p.data() + r * n;
    const int64_t seen = keys_seen(a.causal, i0 + r, j0, n);
    for (int64_t c = 0; c < seen; ++c) s[c] = s[c] * a.scale - w.lse[r];
    exp_into(s, p, seen);
    std::fill(p + seen, p + n, C(0));
  }
}

// Turns w.p (m x n, P) into dS = P (dP - delta), dP in w.s.
template <typename C>
void score_gradient(int64_t m, int64_t n, Scratch<C>& w) {
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) w.p[r * n + c] *= w.s[r * n + c] - w.delta[r];
  }
}

template <typename C>
void add_into(Buffer<C>& acc, const Buffer<C>& add, int64_t n) {
  for (int64_t e = 0; e < n; ++e) acc[e] += add[e];
}

// Writes `rows` rows of `cols` from acc, times `factor`, `stride` apart into out.
template <typename T, typename C>
void store_rows(const C* acc, int64_t rows, int64_t cols, C factor, T* out, int64_t stride) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[r * stride + c] = T(acc[r * cols + c] * factor);
  }
}

// dk and dv of keys [j0, j0 + kKeyRows) of kv head hk of batch b, over the query heads that
// read it and the query blocks that see the keys.
template <typename T>
void key_block_grad(const Call<T>& a, int64_t b, int64_t hk, int64_t j0, Scratch<Acc<T>>& w) {
  using C = Acc<T>;
  const AttentionLayout& l = a.l;
  const int64_t d = l.depth, dv = l.value_depth, n = std::min(kKeyRows, l.keys - j0);
  widen_rows(a.k + a.k_row(b, j0, hk) * d, l.kv_heads * d, n, d, w.k.data());
  widen_rows(a.v + a.k_row(b, j0, hk) * dv, l.kv_heads * dv, n, dv, w.v.data());
  std::fill_n(w.acc.data(), n * d, C(0));    // dk
  std::fill_n(w.acc2.data(), n * dv, C(0));  // dv
  const int64_t first = a.causal ? j0 / kQueryRows * kQueryRows : 0;
  for (int64_t h = hk * l.group; h < (hk + 1) * l.group; ++h) {
    for (int64_t i0 = first; i0 < l.queries; i0 += kQueryRows) {
      const int64_t m = std::min(kQueryRows, l.queries - i0);
      load_query_block(a, b, h, i0, m, w);
      product(m, n, d, w.q.data(), false, w.k.data(), true, w.s.data());
      probabilities(a, i0, j0, m, n, w);
      product(n, dv, m, w.p.data(), true, w.d_o.data(), false, w.tmp.data());
      add_into(w.acc2, w.tmp, n * dv);
      product(m, n, dv, w.d_o.data(), false, w.v.data(), true, w.s.data());
      score_gradient(m, n, w);
      product(n, d, m, w.p.data(), true, w.q.data(), false, w.tmp.data());
      add_into(w.acc, w.tmp, n * d);
    }
  }
  store_rows(w.acc.data(), n, d, a.scale, a.dk + a.k_row(b, j0, hk) * d, l.kv_heads * d);
  store_rows(w.acc2.data(), n, dv, C(1), a.dv + a.k_row(b, j0, hk) * dv, l.kv_heads * dv);
}

// dq of query rows [i0, i0 + kQueryRows) of head h of batch b, over the keys they see.
template <typename T>
void query_block_grad(const Call<T>& a, int64_t b, int64_t h, int64_t i0, Scratch<Acc<T>>& w) {
  using C = Acc<T>;
  const AttentionLayout& l = a.l;
  const int64_t d = l.depth, dv = l.value_depth, hk = h / l.group;
  const int64_t m = std::min(kQueryRows, l.queries - i0);
  load_query_block(a, b, h, i0, m, w);
  std::fill_n(w.acc.data(), m * d, C(0));
  const int64_t end = key_end(a.causal, i0 + m, l.keys);
  for (int64_t j0 = 0; j0 < end; j0 += kKeyRows) {
    const int64_t n = std::min(kKeyRows, end - j0);
    widen_rows(a.k + a.k_row(b, j0, hk) * d, l.kv_heads * d, n, d, w.k.data());
    widen_rows(a.v + a.k_row(b, j0, hk) * dv, l.kv_heads * dv, n, dv, w.v.data());
    product(m, n, d, w.q.data(), false, w.k.data(), true, w.s.data());
    probabilities(a, i0, j0, m, n, w);
    product(m, n, dv, w.d_o.data(), false, w.v.data(), true, w.s.data());
    score_gradient(m, n, w);
    product(m, d, n, w.p.data(), false, w.k.data(), false, w.tmp.data());
    add_into(w.acc, w.tmp, m * d);
  }
  store_rows(w.acc.data(), m, d, a.scale, a.dq + a.q_row(b, i0, h) * d, l.heads * d);
}

template <typename T>
absl::Status attention_grad_kernel(const KernelContext& ctx) {
  Call<T> a{};
  a.l =
      internal::attention_layout(*ctx.inputs[1].shape, *ctx.inputs[2].shape, *ctx.inputs[3].shape);
  a.d_o = input_data<T>(ctx, 0), a.q = input_data<T>(ctx, 1), a.k = input_data<T>(ctx, 2);
  a.v = input_data<T>(ctx, 3), a.o = input_data<T>(ctx, 4);
  a.lse_in = input_data<Acc<T>>(ctx, 5);
  a.dq = static_cast<T*>(ctx.outputs[0].data), a.dk = static_cast<T*>(ctx.outputs[1].data);
  a.dv = static_cast<T*>(ctx.outputs[2].data);
  a.scale = static_cast<Acc<T>>(ctx.attrs->scale), a.causal = ctx.attrs->causal;
  const AttentionLayout& l = a.l;
  const int64_t width = 2 * (l.depth + l.value_depth);  // multiply-adds per score
  const int64_t key_blocks = (l.keys + kKeyRows - 1) / kKeyRows;
  parallel_for(l.batch * l.kv_heads * key_blocks, grain_for(kKeyRows * l.queries * l.group * width),
               [&](int64_t begin, int64_t end) {
                 Scratch<Acc<T>> w(l);
                 for (int64_t t = begin; t < end; ++t) {
                   const int64_t bh = t / key_blocks;
                   key_block_grad(a, bh / l.kv_heads, bh % l.kv_heads, (t % key_blocks) * kKeyRows,
                                  w);
                 }
               });
  const int64_t query_blocks = (l.queries + kQueryRows - 1) / kQueryRows;
  parallel_for(l.batch * l.heads * query_blocks, grain_for(kQueryRows * l.keys * width),
               [&](int64_t begin, int64_t end) {
                 Scratch<Acc<T>> w(l);
                 for (int64_t t = begin; t < end; ++t) {
                   const int64_t bh = t / query_blocks;
                   query_block_grad(a, bh / l.heads, bh % l.heads, (t % query_blocks) * kQueryRows,
                                    w);
                 }
               });
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(DotProductAttention) {
  return add_kernels(registry, OpId::kDotProductAttention, FloatTypes{}, [](auto tag) -> KernelFn {
    return &attention_kernel<typename decltype(tag)::type>;
  });
}
MT_OP_KERNELS(DotProductAttentionGrad) {
  return add_kernels(
      registry, OpId::kDotProductAttentionGrad, FloatTypes{},
      [](auto tag) -> KernelFn { return &attention_grad_kernel<typename decltype(tag)::type>; });
}

}  // namespace mt::cpu
