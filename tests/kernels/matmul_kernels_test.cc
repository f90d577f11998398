// CPU kernels of MatMul: hand-computed products, transposes, zero-sized dimensions, and
// random matrices against a naive triple loop.
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

template <typename T>
class MatMulKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(MatMulKernelTest, testutil::NumericTypes);

absl::StatusOr<HostTensor> matmul(const HostTensor& a, const HostTensor& b, bool ta = false,
                                  bool tb = false) {
  OpAttrs attrs;
  attrs.transpose_a = ta;
  attrs.transpose_b = tb;
  return run_cpu(OpId::kMatMul, {a, b}, attrs);
}

TYPED_TEST(MatMulKernelTest, MultipliesWithEveryTransposeCombination) {
  using T = TypeParam;
  const HostTensor a = HostTensor::make<T>({2, 3}, vec<T>({1, 2, 3, 4, 5, 6}));
  const HostTensor at = HostTensor::make<T>({3, 2}, vec<T>({1, 4, 2, 5, 3, 6}));
  const HostTensor b = HostTensor::make<T>({3, 2}, vec<T>({1, 2, 3, 4, 5, 6}));
  const HostTensor bt = HostTensor::make<T>({2, 3}, vec<T>({1, 3, 5, 2, 4, 6}));
  const std::vector<T> expected = vec<T>({22, 28, 49, 64});
  struct Case {
    const HostTensor* a;
    const HostTensor* b;
    bool ta, tb;
  };
  for (Case c : {Case{&a, &b, false, false}, Case{&at, &b, true, false}, Case{&a, &bt, false, true},
                 Case{&at, &bt, true, true}}) {
    absl::StatusOr<HostTensor> out = matmul(*c.a, *c.b, c.ta, c.tb);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape(), Shape::make({2, 2}).value());
    EXPECT_EQ(out->values<T>(), expected) << "transpose_a=" << c.ta << " transpose_b=" << c.tb;
  }
}

TYPED_TEST(MatMulKernelTest, EmptyInnerDimensionGivesZeros) {
  using T = TypeParam;
  const HostTensor a = HostTensor::make<T>({2, 0}, {});
  const HostTensor b = HostTensor::make<T>({0, 3}, {});
  absl::StatusOr<HostTensor> out = matmul(a, b);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->values<T>(), std::vector<T>(6, T(0)));
  out = matmul(b, a, true, true);  // (3, 0) x (0, 2)
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->values<T>(), std::vector<T>(6, T(0)));
}

TYPED_TEST(MatMulKernelTest, EmptyOuterDimensionGivesEmptyOutput) {
  using T = TypeParam;
  absl::StatusOr<HostTensor> out = matmul(HostTensor::make<T>({0, 3}, {}),
                                          HostTensor::make<T>({3, 2}, vec<T>({1, 2, 3, 4, 5, 6})));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), Shape::make({0, 2}).value());
}

// Returns op(a) x op(b) by the definition, in double.
std::vector<double> naive_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                 int64_t m, int64_t k, int64_t n, bool ta, bool tb) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) {
        c[i * n + j] += a[ta ? p * m + i : i * k + p] * b[tb ? j * k + p : p * n + j];
      }
    }
  }
  return c;
}

TYPED_TEST(MatMulKernelTest, MatchesNaiveLoopOnRandomMatrices) {
  using T = TypeParam;
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> small(-5, 5);
  struct Size {
    int64_t m, k, n;
  };
  for (Size s : {Size{1, 1, 1}, Size{5, 7, 3}, Size{64, 33, 17}, Size{130, 70, 90}}) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      std::vector<double> av(s.m * s.k), bv(s.k * s.n);
      for (double& v : av) v = small(rng) + (std::is_floating_point_v<T> ? 0.25 : 0);
      for (double& v : bv) v = small(rng);
      std::vector<T> at(av.begin(), av.end()), bt(bv.begin(), bv.end());
      const Shape sa = Shape::make({ta ? s.k : s.m, ta ? s.m : s.k}).value();
      const Shape sb = Shape::make({tb ? s.n : s.k, tb ? s.k : s.n}).value();
      absl::StatusOr<HostTensor> out =
          matmul(HostTensor::make<T>(sa, at), HostTensor::make<T>(sb, bt), ta, tb);
      ASSERT_TRUE(out.ok()) << out.status();
      // Every product and partial sum is a multiple of 1/4 below 2^24: exact in float too.
      EXPECT_EQ(testutil::as_doubles(*out), naive_matmul(av, bv, s.m, s.k, s.n, ta, tb))
          << s.m << "x" << s.k << "x" << s.n << " ta=" << ta << " tb=" << tb;
    }
  }
}

}  // namespace
}  // namespace mt
