// CPU kernels of DotProductAttention and DotProductAttentionGrad against a double reference of
// Note [Dot-product attention] (kernels/attention_shape.cc) on every float dtype: causal or
// not, queries and keys of different counts, grouped kv heads, depths that differ, many
// blocks, no keys; the gradient against central differences of the reference; the same bits
// at every thread count; the shape function's errors.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/attention.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::as_doubles;
using testutil::expect_invalid;
using testutil::run_cpu_all;

constexpr DType kFloats[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16};
constexpr double kInf = std::numeric_limits<double>::infinity();

// A call's sizes: q (b, t, h, d), k (b, s, hk, d), v (b, s, hk, dv).
struct Dims {
  int64_t b, t, s, h, hk, d, dv;
  Shape q() const { return Shape::make({b, t, h, d}).value(); }
  Shape k() const { return Shape::make({b, s, hk, d}).value(); }
  Shape v() const { return Shape::make({b, s, hk, dv}).value(); }
  Shape o() const { return Shape::make({b, t, h, dv}).value(); }
  Shape lse() const { return Shape::make({b, h, t}).value(); }
  std::string str() const {
    return absl::StrCat("b", b, " t", t, " s", s, " h", h, "/", hk, " d", d, "/", dv);
  }
};

// Returns `v` in `dtype` (rounded through float32 for the 2-byte floats).
HostTensor host_of(const Shape& shape, const std::vector<double>& v, DType dtype) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> t;
    for (double e : v) t.push_back(static_cast<T>(static_cast<float>(e)));
    if constexpr (std::is_same_v<T, double>) t.assign(v.begin(), v.end());
    return HostTensor::make<T>(shape, t);
  });
}

// Random values of `n` elements that `dtype` holds exactly.
std::vector<double> random_values(std::mt19937_64& rng, int64_t n, DType dtype, double lo = -1,
                                  double hi = 1) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& e : v) e = dist(rng);
  return as_doubles(host_of(S({n}), v, dtype));
}

struct Inputs {
  std::vector<double> q, k, v;
};

Inputs random_inputs(std::mt19937_64& rng, const Dims& n, DType dtype) {
  return {random_values(rng, n.b * n.t * n.h * n.d, dtype, -2, 2),
          random_values(rng, n.b * n.s * n.hk * n.d, dtype, -2, 2),
          random_values(rng, n.b * n.s * n.hk * n.dv, dtype)};
}

int64_t qi(const Dims& n, int64_t b, int64_t i, int64_t h) { return (b * n.t + i) * n.h + h; }
int64_t kj(const Dims& n, int64_t b, int64_t j, int64_t h) {
  return (b * n.s + j) * n.hk + h / (n.h / n.hk);
}

// The scores of query row (b, i, h) against every key, -inf where it does not see one.
std::vector<double> scores(const Dims& n, const Inputs& in, int64_t b, int64_t i, int64_t h,
                           double scale, bool causal) {
  std::vector<double> s(n.s, -kInf);
  for (int64_t j = 0; j < n.s; ++j) {
    if (!internal::attention_visible(causal, i, j)) continue;
    double dot = 0;
    for (int64_t e = 0; e < n.d; ++e)
      dot += in.q[qi(n, b, i, h) * n.d + e] * in.k[kj(n, b, j, h) * n.d + e];
    s[j] = dot * scale;
  }
  return s;
}

struct Ref {
  std::vector<double> o, lse;
};

Ref reference(const Dims& n, const Inputs& in, double scale, bool causal) {
  Ref r{std::vector<double>(n.b * n.t * n.h * n.dv), std::vector<double>(n.b * n.h * n.t)};
  for (int64_t b = 0; b < n.b; ++b) {
    for (int64_t h = 0; h < n.h; ++h) {
      for (int64_t i = 0; i < n.t; ++i) {
        const std::vector<double> s = scores(n, in, b, i, h, scale, causal);
        double top = -kInf, sum = 0;
        for (double e : s) top = std::max(top, e);
        for (double e : s) sum += e == -kInf ? 0 : std::exp(e - top);
        const double lse = sum == 0 ? -kInf : top + std::log(sum);
        r.lse[(b * n.h + h) * n.t + i] = lse;
        for (int64_t j = 0; j < n.s; ++j) {
          if (s[j] == -kInf) continue;
          for (int64_t c = 0; c < n.dv; ++c) {
            r.o[qi(n, b, i, h) * n.dv + c] +=
                std::exp(s[j] - lse) * in.v[kj(n, b, j, h) * n.dv + c];
          }
        }
      }
    }
  }
  return r;
}

// The reference gradient given d_o, the forward pass's o (delta reads it) and lse.
Inputs reference_grad(const Dims& n, const Inputs& in, const std::vector<double>& d_o,
                      const std::vector<double>& o, const std::vector<double>& lse, double scale,
                      bool causal) {
  Inputs g{std::vector<double>(in.q.size()), std::vector<double>(in.k.size()),
           std::vector<double>(in.v.size())};
  for (int64_t b = 0; b < n.b; ++b) {
    for (int64_t h = 0; h < n.h; ++h) {
      for (int64_t i = 0; i < n.t; ++i) {
        const int64_t row = qi(n, b, i, h);
        const std::vector<double> s = scores(n, in, b, i, h, scale, causal);
        double delta = 0;
        for (int64_t c = 0; c < n.dv; ++c) delta += d_o[row * n.dv + c] * o[row * n.dv + c];
        for (int64_t j = 0; j < n.s; ++j) {
          if (s[j] == -kInf) continue;
          const int64_t key = kj(n, b, j, h);
          const double p = std::exp(s[j] - lse[(b * n.h + h) * n.t + i]);
          double dp = 0;
          for (int64_t c = 0; c < n.dv; ++c) {
            dp += d_o[row * n.dv + c] * in.v[key * n.dv + c];
            g.v[key * n.dv + c] += p * d_o[row * n.dv + c];
          }
          const double ds = p * (dp - delta) * scale;
          for (int64_t e = 0; e < n.d; ++e) {
            g.q[row * n.d + e] += ds * in.k[key * n.d + e];
            g.k[key * n.d + e] += ds * in.q[row * n.d + e];
          }
        }
      }
    }
  }
  return g;
}

OpAttrs attrs_of(double scale, bool causal) {
  OpAttrs attrs;
  attrs.scale = scale;
  attrs.causal = causal;
  return attrs;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool same = std::isinf(want[i])
                          ? got[i] == want[i]
                          : std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i]));
    if (!same && ++bad <= 5)
      ADD_FAILURE() << what << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

// One rounding to the dtype after float32 (float64) arithmetic, with room for sums of
// products of about a hundred terms.
double tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return 1e-12;
    case DType::kBFloat16:
      return 1.6e-2;
    case DType::kFloat16:
      return 2e-3;
    default:
      return 2e-5;
  }
}

std::vector<HostTensor> forward(const Dims& n, const Inputs& in, DType dtype,
                                const OpAttrs& attrs) {
  absl::StatusOr<std::vector<HostTensor>> out = run_cpu_all(
      OpId::kDotProductAttention,
      {host_of(n.q(), in.q, dtype), host_of(n.k(), in.k, dtype), host_of(n.v(), in.v, dtype)},
      attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<HostTensor>{};
}

void check_forward(const Dims& n, bool causal) {
  std::mt19937_64 rng(7);
  const double scale = 1 / std::sqrt(static_cast<double>(n.d));
  for (DType dtype : kFloats) {
    SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", n.str(), causal ? " causal" : ""));
    const Inputs in = random_inputs(rng, n, dtype);
    const std::vector<HostTensor> out = forward(n, in, dtype, attrs_of(scale, causal));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].shape(), n.o());
    EXPECT_EQ(out[1].shape(), n.lse());
    EXPECT_EQ(out[1].dtype(), internal::attention_stats_dtype(dtype));
    const Ref want = reference(n, in, scale, causal);
    expect_close(as_doubles(out[0]), want.o, tolerance(dtype), "o");
    expect_close(as_doubles(out[1]), want.lse, dtype == DType::kFloat64 ? 1e-12 : 1e-5, "lse");
  }
}

TEST(AttentionKernelTest, MatchesTheReference) {
  for (bool causal : {false, true}) {
    check_forward({2, 5, 5, 3, 3, 4, 4}, causal);
    check_forward({1, 3, 7, 2, 2, 8, 5}, causal);  // fewer queries than keys
    check_forward({1, 7, 3, 2, 2, 8, 5}, causal);  // more: row i sees keys 0..min(i, 2)
    check_forward({2, 6, 4, 4, 2, 4, 6}, causal);  // two query heads per kv head
    check_forward({1, 4, 4, 3, 1, 4, 4}, causal);  // one kv head for all
  }
}

TEST(AttentionKernelTest, ManyBlocksOfQueriesAndKeys) {
  for (bool causal : {false, true}) {
    check_forward({1, 150, 150, 2, 2, 16, 16}, causal);
    check_forward({1, 70, 300, 1, 1, 8, 4}, causal);
    check_forward({1, 300, 70, 1, 1, 8, 4}, causal);
  }
}

// With causal and more queries than keys every row still sees key 0 (top-left alignment):
// row 0 is v's first row exactly, the last rows average every key.
TEST(AttentionKernelTest, CausalRowsSeeTheFirstKeys) {
  const Dims n{1, 4, 2, 1, 1, 1, 1};
  const Inputs in{{1, 1, 1, 1}, {0, 0}, {3, 5}};
  const std::vector<HostTensor> out = forward(n, in, DType::kFloat32, attrs_of(1, true));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].values<float>(), (std::vector<float>{3, 4, 4, 4}));
  EXPECT_EQ(out[1].values<float>()[0], 0.0f);
  EXPECT_NEAR(out[1].values<float>()[3], std::log(2.0), 1e-6);
}

// A row that sees no key (there are none): o = 0 and lse = -inf, no NaN; its gradient is 0.
TEST(AttentionKernelTest, NoKeysGiveZerosAndMinusInfinity) {
  for (DType dtype : kFloats) {
    SCOPED_TRACE(dtype_name(dtype));
    const Dims n{2, 3, 0, 2, 1, 4, 5};
    const Inputs in{std::vector<double>(2 * 3 * 2 * 4, 0.5), {}, {}};
    for (bool causal : {false, true}) {
      const std::vector<HostTensor> out = forward(n, in, dtype, attrs_of(0.5, causal));
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(as_doubles(out[0]), std::vector<double>(2 * 3 * 2 * 5, 0.0));
      EXPECT_EQ(as_doubles(out[1]), std::vector<double>(2 * 2 * 3, -kInf));
      absl::StatusOr<std::vector<HostTensor>> grad = run_cpu_all(
          OpId::kDotProductAttentionGrad,
          {host_of(n.o(), std::vector<double>(60, 1.0), dtype), host_of(n.q(), in.q, dtype),
           host_of(n.k(), {}, dtype), host_of(n.v(), {}, dtype), out[0], out[1]},
          attrs_of(0.5, causal));
      ASSERT_TRUE(grad.ok()) << grad.status();
      EXPECT_EQ(as_doubles((*grad)[0]), std::vector<double>(48, 0.0));
      EXPECT_EQ((*grad)[1].shape(), n.k());
    }
  }
}

TEST(AttentionKernelTest, NoQueriesOrHeadsGiveEmptyOutputsAndZeroKeyGradients) {
  const Dims n{1, 0, 3, 2, 2, 4, 4};
  std::mt19937_64 rng(3);
  const Inputs in = random_inputs(rng, n, DType::kFloat32);
  const std::vector<HostTensor> out = forward(n, in, DType::kFloat32, attrs_of(1, true));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), S({1, 0, 2, 4}));
  absl::StatusOr<std::vector<HostTensor>> grad = run_cpu_all(
      OpId::kDotProductAttentionGrad,
      {out[0], host_of(n.q(), in.q, DType::kFloat32), host_of(n.k(), in.k, DType::kFloat32),
       host_of(n.v(), in.v, DType::kFloat32), out[0], out[1]},
      attrs_of(1, true));
  ASSERT_TRUE(grad.ok()) << grad.status();
  EXPECT_EQ((*grad)[1].values<float>(), std::vector<float>(24, 0.0f));
  EXPECT_EQ((*grad)[2].values<float>(), std::vector<float>(24, 0.0f));
}

// The kernels' blocks depend on the shape alone: the same bits at 1, 2 and 7 threads.
TEST(AttentionKernelTest, GivesTheSameBitsAtEveryThreadCount) {
  std::mt19937_64 rng(5);
  const Dims n{2, 130, 140, 3, 3, 8, 8};
  const Inputs in = random_inputs(rng, n, DType::kFloat32);
  const std::vector<double> d_o = random_values(rng, n.b * n.t * n.h * n.dv, DType::kFloat32);
  std::vector<std::vector<double>> runs;
  for (int threads : {1, 2, 7}) {
    cpu::set_intra_op_threads(threads);
    const std::vector<HostTensor> out = forward(n, in, DType::kFloat32, attrs_of(0.3, true));
    ASSERT_EQ(out.size(), 2u);
    absl::StatusOr<std::vector<HostTensor>> grad =
        run_cpu_all(OpId::kDotProductAttentionGrad,
                    {host_of(n.o(), d_o, DType::kFloat32), host_of(n.q(), in.q, DType::kFloat32),
                     host_of(n.k(), in.k, DType::kFloat32), host_of(n.v(), in.v, DType::kFloat32),
                     out[0], out[1]},
                    attrs_of(0.3, true));
    ASSERT_TRUE(grad.ok()) << grad.status();
    std::vector<double> all = as_doubles(out[0]);
    for (const HostTensor& t : {out[1], (*grad)[0], (*grad)[1], (*grad)[2]}) {
      const std::vector<double> more = as_doubles(t);
      all.insert(all.end(), more.begin(), more.end());
    }
    runs.push_back(all);
  }
  cpu::set_intra_op_threads(testutil::test_intra_op_threads());
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

// The gradient kernel given d_o and the forward pass's o (rounded to the dtype) and lse.
std::vector<HostTensor> backward(const Dims& n, const Inputs& in, const std::vector<double>& d_o,
                                 const std::vector<HostTensor>& fwd, DType dtype,
                                 const OpAttrs& attrs) {
  absl::StatusOr<std::vector<HostTensor>> out =
      run_cpu_all(OpId::kDotProductAttentionGrad,
                  {host_of(n.o(), d_o, dtype), host_of(n.q(), in.q, dtype),
                   host_of(n.k(), in.k, dtype), host_of(n.v(), in.v, dtype), fwd[0], fwd[1]},
                  attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<HostTensor>{};
}

void check_gradient(const Dims& n, bool causal) {
  std::mt19937_64 rng(9);
  const double scale = 0.7;
  for (DType dtype : kFloats) {
    SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", n.str(), causal ? " causal" : ""));
    const Inputs in = random_inputs(rng, n, dtype);
    const std::vector<double> d_o = random_values(rng, n.b * n.t * n.h * n.dv, dtype);
    const std::vector<HostTensor> fwd = forward(n, in, dtype, attrs_of(scale, causal));
    ASSERT_EQ(fwd.size(), 2u);
    const std::vector<HostTensor> g = backward(n, in, d_o, fwd, dtype, attrs_of(scale, causal));
    ASSERT_EQ(g.size(), 3u);
    const Ref ref = reference(n, in, scale, causal);
    const Inputs want = reference_grad(n, in, d_o, as_doubles(fwd[0]), ref.lse, scale, causal);
    const double tol = 2 * tolerance(dtype);
    expect_close(as_doubles(g[0]), want.q, tol, "dq");
    expect_close(as_doubles(g[1]), want.k, tol, "dk");
    expect_close(as_doubles(g[2]), want.v, tol, "dv");
  }
}

TEST(AttentionGradKernelTest, MatchesTheReferenceInEveryDtype) {
  for (bool causal : {false, true}) {
    check_gradient({2, 5, 5, 2, 2, 4, 4}, causal);
    check_gradient({1, 3, 7, 2, 1, 8, 5}, causal);
    check_gradient({1, 7, 3, 4, 2, 4, 6}, causal);
    check_gradient({1, 150, 140, 2, 1, 8, 8}, causal);  // many blocks, a shared kv head
  }
}

// sum(o * w) of the reference, for the central differences.
double weighted_loss(const Dims& n, const Inputs& in, const std::vector<double>& w, bool causal) {
  const Ref r = reference(n, in, 0.7, causal);
  double loss = 0;
  for (size_t i = 0; i < w.size(); ++i) loss += r.o[i] * w[i];
  return loss;
}

TEST(AttentionGradKernelTest, MatchesCentralDifferences) {
  for (bool causal : {false, true}) {
    for (const Dims& n : {Dims{1, 3, 4, 2, 1, 3, 2}, Dims{2, 4, 3, 2, 2, 2, 3}}) {
      SCOPED_TRACE(absl::StrCat(n.str(), causal ? " causal" : ""));
      std::mt19937_64 rng(11);
      Inputs in = random_inputs(rng, n, DType::kFloat64);
      const std::vector<double> w = random_values(rng, n.b * n.t * n.h * n.dv, DType::kFloat64);
      const std::vector<HostTensor> fwd = forward(n, in, DType::kFloat64, attrs_of(0.7, causal));
      ASSERT_EQ(fwd.size(), 2u);
      const std::vector<HostTensor> g =
          backward(n, in, w, fwd, DType::kFloat64, attrs_of(0.7, causal));
      ASSERT_EQ(g.size(), 3u);
      const double h = 1e-6;
      auto diff = [&](std::vector<double>* v) {
        std::vector<double> d(v->size());
        for (size_t i = 0; i < v->size(); ++i) {
          const double keep = (*v)[i];
          (*v)[i] = keep + h;
          const double up = weighted_loss(n, in, w, causal);
          (*v)[i] = keep - h;
          const double down = weighted_loss(n, in, w, causal);
          (*v)[i] = keep;
          d[i] = (up - down) / (2 * h);
        }
        return d;
      };
      expect_close(as_doubles(g[0]), diff(&in.q), 1e-7, "dq");
      expect_close(as_doubles(g[1]), diff(&in.k), 1e-7, "dk");
      expect_close(as_doubles(g[2]), diff(&in.v), 1e-7, "dv");
    }
  }
}

// The metas of a DotProductAttention call on q, k and v of these shapes and dtypes.
absl::StatusOr<OutputMeta> infer(const Shape& q, const Shape& k, const Shape& v,
                                 DType dtype = DType::kFloat32, DType v_dtype = DType::kFloat32,
                                 double scale = 1) {
  const TensorMeta in[] = {{&q, dtype}, {&k, dtype}, {&v, v_dtype}};
  return infer_output(OpId::kDotProductAttention, in, attrs_of(scale, false));
}

TEST(AttentionShapeTest, RejectsBadShapesDtypesAndScale) {
  const Shape q = S({2, 3, 4, 8}), k = S({2, 5, 2, 8}), v = S({2, 5, 2, 6});
  EXPECT_TRUE(infer(q, k, v).ok());
  EXPECT_TRUE(infer(q, k, v, DType::kBFloat16, DType::kBFloat16).ok());
  expect_invalid(infer(q, k, v, DType::kInt32, DType::kInt32),
                 "[DotProductAttention] dtype int32 is not supported; expected one of float32, "
                 "float64, bfloat16, float16");
  expect_invalid(infer(q, k, v, DType::kFloat32, DType::kFloat16),
                 "[DotProductAttention] dtypes differ: float32 vs float16");
  expect_invalid(infer(S({3, 4, 8}), k, v),
                 "[DotProductAttention] q (batch, queries, heads, depth) must have rank 4, got "
                 "shape (3, 4, 8)");
  expect_invalid(infer(q, k, S({2, 5, 12})),
                 "[DotProductAttention] v (batch, keys, kv_heads, value_depth) must have rank 4, "
                 "got shape (2, 5, 12)");
  expect_invalid(infer(q, S({1, 5, 2, 8}), S({1, 5, 2, 6})),
                 "[DotProductAttention] q and k must have the same batch, got shapes (2, 3, 4, 8) "
                 "and (1, 5, 2, 8)");
  expect_invalid(infer(q, k, S({2, 4, 2, 6})),
                 "[DotProductAttention] k and v must have the same number of keys, got shapes (2, "
                 "5, 2, 8) and (2, 4, 2, 6)");
  expect_invalid(infer(q, S({2, 5, 2, 7}), v),
                 "[DotProductAttention] q and k must have the same depth, got shapes (2, 3, 4, 8) "
                 "and (2, 5, 2, 7)");
  expect_invalid(infer(q, S({2, 5, 3, 8}), S({2, 5, 3, 6})),
                 "[DotProductAttention] the heads of k and v must divide those of q, got 3 and 4 "
                 "(shapes (2, 3, 4, 8) and (2, 5, 3, 8))");
  expect_invalid(infer(q, k, S({2, 5, 1, 6})),
                 "[DotProductAttention] k and v must have the same number of heads, got shapes (2, "
                 "5, 2, 8) and (2, 5, 1, 6)");
  expect_invalid(infer(q, k, S({2, 5, 2, 0})),
                 "[DotProductAttention] q, k and v must have a depth of at least 1, got shapes (2, "
                 "3, 4, 8), (2, 5, 2, 8) and (2, 5, 2, 0)");
  expect_invalid(infer(q, k, v, DType::kFloat32, DType::kFloat32, kInf),
                 "[DotProductAttention] scale must be a finite number, got inf");
}

TEST(AttentionShapeTest, GradRejectsMismatchedOutputsAndStatistics) {
  const Shape q = S({1, 3, 2, 4}), k = S({1, 5, 2, 4}), v = S({1, 5, 2, 6});
  const Shape o = S({1, 3, 2, 6}), lse = S({1, 2, 3});
  auto infer_grad = [&](const Shape& d_o, const Shape& l, DType lse_dtype, DType o_dtype) {
    const TensorMeta in[] = {{&d_o, DType::kFloat32}, {&q, DType::kFloat32}, {&k, DType::kFloat32},
                             {&v, DType::kFloat32},   {&o, o_dtype},         {&l, lse_dtype}};
    return infer_output(OpId::kDotProductAttentionGrad, in, attrs_of(1, true));
  };
  EXPECT_TRUE(infer_grad(o, lse, DType::kFloat32, DType::kFloat32).ok());
  expect_invalid(infer_grad(S({1, 3, 2, 4}), lse, DType::kFloat32, DType::kFloat32),
                 "[DotProductAttentionGrad] do must have the output's shape (1, 3, 2, 6), got "
                 "(1, 3, 2, 4)");
  expect_invalid(infer_grad(o, S({1, 3, 2}), DType::kFloat32, DType::kFloat32),
                 "[DotProductAttentionGrad] lse must have shape (batch, heads, queries) (1, 2, 3), "
                 "got (1, 3, 2)");
  expect_invalid(infer_grad(o, lse, DType::kFloat64, DType::kFloat32),
                 "[DotProductAttentionGrad] lse must be float32 for q of this dtype, got float64");
  expect_invalid(infer_grad(o, lse, DType::kFloat32, DType::kBFloat16),
                 "[DotProductAttentionGrad] dtypes differ: float32 vs bfloat16");
}

}  // namespace
}  // namespace mt
