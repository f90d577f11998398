// DotProductAttention through the runtime on the CPU against the composite it fuses (Keras's
// formula in ops: a batched product, the causal mask, a softmax and a product): outputs, the
// tape's gradients (the DotProductAttentionGrad row, and the composite path when lse is
// differentiated) and second-order gradients, in float64 and float32; a row that sees no key
// gives the composite's zeros. gradient_check_test.cc checks the gradients against central
// differences.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

class AttentionGradientTest : public testing::RuntimeTest {};

// q (b, t, h, d), k (b, s, hk, d), v (b, s, hk, dv).
struct Case {
  int64_t b, t, s, h, hk, d, dv;
  bool causal;
  std::string str() const {
    return absl::StrCat("b", b, " t", t, " s", s, " h", h, "/", hk, " d", d, "/", dv,
                        causal ? " causal" : "");
  }
};

Tensor input(DType dtype, const Ints& shape, int seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + seed) * 1.5;
  return cast(constant(v, shape), dtype);
}

// Keras's attention in ops, heads first: softmax(scale q k^T, masked) v.
Tensor composite(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal) {
  const int64_t group = q.shape().dim(2) / k.shape().dim(2);
  auto repeat = [&](const Tensor& t) {
    const Shape& s = t.shape();
    const Tensor each = broadcast_to(reshape(t, {s.dim(0), s.dim(1), s.dim(2), 1, s.dim(3)}),
                                     {s.dim(0), s.dim(1), s.dim(2), group, s.dim(3)});
    return transpose(reshape(each, {s.dim(0), s.dim(1), s.dim(2) * group, s.dim(3)}), {0, 2, 1, 3});
  };
  Tensor scores =
      matmul(transpose(q, {0, 2, 1, 3}), repeat(k), false, true) * fill({}, scale, q.dtype());
  if (causal) {
    const Tensor seen =
        cast(linalg::band_part(ones({q.shape().dim(1), k.shape().dim(1)}), -1, 0), DType::kBool);
    scores = where(seen, scores, fill({}, -std::numeric_limits<double>::infinity(), q.dtype()));
  }
  return transpose(matmul(nn::softmax(scores), repeat(v)), {0, 2, 1, 3});
}

void expect_near(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = cast(got, DType::kFloat64).to_vector<double>();
  const std::vector<double> w = cast(want, DType::kFloat64).to_vector<double>();
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::fabs(g[i] - w[i]) <= tol * (1 + std::fabs(w[i]))) continue;
    if (++bad <= 5) ADD_FAILURE() << what << " element " << i << ": " << g[i] << " vs " << w[i];
  }
}

const Case kCases[] = {
    {2, 5, 5, 2, 2, 4, 4, false}, {2, 5, 5, 2, 2, 4, 4, true},    {1, 7, 3, 2, 1, 3, 5, true},
    {1, 3, 7, 4, 2, 3, 2, true},  {1, 70, 150, 2, 2, 8, 8, true}, {1, 150, 70, 1, 1, 8, 8, false},
};

TEST_F(AttentionGradientTest, OutputAndGradientsMatchTheComposite) {
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    const double tol = dtype == DType::kFloat64 ? 1e-12 : 2e-5;
    for (const Case& c : kCases) {
      const std::string what = absl::StrCat(dtype_name(dtype), " ", c.str());
      const Tensor q = input(dtype, {c.b, c.t, c.h, c.d}, 1);
      const Tensor k = input(dtype, {c.b, c.s, c.hk, c.d}, 2);
      const Tensor v = input(dtype, {c.b, c.s, c.hk, c.dv}, 3);
      const Tensor w = input(dtype, {c.b, c.t, c.h, c.dv}, 4);
      const double scale = 0.6;
      std::vector<Tensor> fused, plain;
      {
        GradientTape tape;
        tape.watch(q), tape.watch(k), tape.watch(v);
        const Tensor o = nn::dot_product_attention(q, k, v, {scale, c.causal}).o;
        fused = tape.gradient(reduce_sum(mul(o, w)), {q, k, v});
        fused.push_back(o);
      }
      {
        GradientTape tape;
        tape.watch(q), tape.watch(k), tape.watch(v);
        const Tensor o = composite(q, k, v, scale, c.causal);
        plain = tape.gradient(reduce_sum(mul(o, w)), {q, k, v});
        plain.push_back(o);
      }
      const char* names[] = {"dq", "dk", "dv", "o"};
      for (int i = 0; i < 4; ++i) expect_near(fused[i], plain[i], tol, what + " " + names[i]);
    }
  }
}

// lse is log sum exp of the scores: its gradient, through the composite path, is the
// softmax's, so a loss of o and lse matches the composite's o and reduce_logsumexp.
TEST_F(AttentionGradientTest, GradientThroughLseMatchesTheComposite) {
  const Case c{1, 6, 4, 2, 1, 3, 3, true};
  const Tensor q = input(DType::kFloat64, {c.b, c.t, c.h, c.d}, 1);
  const Tensor k = input(DType::kFloat64, {c.b, c.s, c.hk, c.d}, 2);
  const Tensor v = input(DType::kFloat64, {c.b, c.s, c.hk, c.dv}, 3);
  GradientTape tape(/*persistent=*/true);
  tape.watch(q), tape.watch(k), tape.watch(v);
  const nn::DotProductAttentionResult r = nn::dot_product_attention(q, k, v, {1.0, true});
  const std::vector<Tensor> fused = tape.gradient(reduce_sum(r.o) + reduce_sum(r.lse), {q, k, v});
  // log sum_j exp(s_ij) over the keys row i sees, in ops.
  const Tensor kk =
      transpose(reshape(broadcast_to(reshape(k, {1, 4, 1, 1, 3}), {1, 4, 1, 2, 3}), {1, 4, 2, 3}),
                {0, 2, 1, 3});
  Tensor s = matmul(transpose(q, {0, 2, 1, 3}), kk, false, true);
  const Tensor seen = cast(linalg::band_part(ones({6, 4}), -1, 0), DType::kBool);
  s = where(seen, s, fill({}, -std::numeric_limits<double>::infinity(), DType::kFloat64));
  const Tensor top = reduce_max(s, -1, true);
  const Tensor logsumexp =
      reduce_sum(mt::log(reduce_sum(exp(s - top), -1)) + reshape(top, {1, 2, 6}));
  const std::vector<Tensor> plain =
      tape.gradient(reduce_sum(composite(q, k, v, 1.0, true)) + logsumexp, {q, k, v});
  for (int i = 0; i < 3; ++i) expect_near(fused[i], plain[i], 1e-12, absl::StrCat("input ", i));
}

TEST_F(AttentionGradientTest, SecondOrderMatchesTheComposite) {
  for (const Case& c : {Case{1, 4, 5, 2, 1, 3, 2, true}, Case{2, 3, 3, 2, 2, 2, 2, false}}) {
    const Tensor q = input(DType::kFloat64, {c.b, c.t, c.h, c.d}, 1);
    const Tensor k = input(DType::kFloat64, {c.b, c.s, c.hk, c.d}, 2);
    const Tensor v = input(DType::kFloat64, {c.b, c.s, c.hk, c.dv}, 3);
    const Tensor w = input(DType::kFloat64, {c.b, c.t, c.h, c.dv}, 4);
    auto second = [&](auto attend) {
      GradientTape outer;
      outer.watch(q), outer.watch(k), outer.watch(v);
      std::vector<Tensor> first;
      {
        GradientTape inner;
        inner.watch(q), inner.watch(k), inner.watch(v);
        first = inner.gradient(reduce_sum(mul(attend(), w)), {q, k, v});
      }
      const Tensor norm = reduce_sum(mul(first[0], first[0])) +
                          reduce_sum(mul(first[1], first[1])) + reduce_sum(first[2]);
      return outer.gradient(norm, {q, k, v});
    };
    const std::vector<Tensor> fused = second([&] {
      return nn::dot_product_attention(q, k, v, {0.9, c.causal}).o;
    });
    const std::vector<Tensor> plain = second([&] { return composite(q, k, v, 0.9, c.causal); });
    for (int i = 0; i < 3; ++i) {
      expect_near(fused[i], plain[i], 1e-11, absl::StrCat(c.str(), " input ", i));
    }
  }
}

// A row that sees no key (there are none) gives what the composite gives: o = 0 (a product
// of no terms), lse = -inf, and zero gradients; no NaN.
TEST_F(AttentionGradientTest, NoKeysGiveTheCompositesZeros) {
  for (bool causal : {false, true}) {
    const Tensor q = input(DType::kFloat32, {1, 3, 2, 4}, 1);
    const Tensor k = input(DType::kFloat32, {1, 0, 2, 4}, 2);
    const Tensor v = input(DType::kFloat32, {1, 0, 2, 5}, 3);
    GradientTape tape;
    tape.watch(q);
    const nn::DotProductAttentionResult r = nn::dot_product_attention(q, k, v, {0.5, causal});
    EXPECT_EQ(r.o.to_vector<float>(), std::vector<float>(30, 0.0f));
    EXPECT_EQ(r.lse.to_vector<float>(),
              std::vector<float>(6, -std::numeric_limits<float>::infinity()));
    EXPECT_EQ(composite(q, k, v, 0.5, causal).to_vector<float>(), std::vector<float>(30, 0.0f));
    const Tensor dq = tape.gradient(reduce_sum(r.o), {q})[0];
    EXPECT_EQ(dq.to_vector<float>(), std::vector<float>(24, 0.0f));
  }
}

}  // namespace
}  // namespace mt
