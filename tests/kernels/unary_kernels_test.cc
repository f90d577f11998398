// CPU kernels of Neg, Abs, Exp and Relu.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

template <typename T>
class UnaryKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(UnaryKernelTest, testutil::NumericTypes);

HostTensor run1(OpId op, const HostTensor& in) {
  absl::StatusOr<HostTensor> out = run_cpu(op, {in});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : HostTensor();
}

TYPED_TEST(UnaryKernelTest, NegAbsRelu) {
  using T = TypeParam;
  const HostTensor in = HostTensor::make<T>({2, 3}, vec<T>({1, -2, 0, 3, -4, 5}));
  EXPECT_EQ(run1(OpId::kNeg, in).values<T>(), vec<T>({-1, 2, 0, -3, 4, -5}));
  EXPECT_EQ(run1(OpId::kAbs, in).values<T>(), vec<T>({1, 2, 0, 3, 4, 5}));
  const HostTensor relu = run1(OpId::kRelu, in);
  EXPECT_EQ(relu.shape(), in.shape());
  EXPECT_EQ(relu.values<T>(), vec<T>({1, 0, 0, 3, 0, 5}));
}

TYPED_TEST(UnaryKernelTest, HandlesZeroElements) {
  using T = TypeParam;
  EXPECT_EQ(run1(OpId::kNeg, HostTensor::make<T>({0}, {})).shape().num_elements(), 0);
}

TEST(UnaryKernelTest, LowestIntegerStaysItself) {
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  const HostTensor i32 = HostTensor::make<int32_t>({2}, {kMin32, -5});
  EXPECT_THAT(run1(OpId::kNeg, i32).values<int32_t>(), ElementsAre(kMin32, 5));
  EXPECT_THAT(run1(OpId::kAbs, i32).values<int32_t>(), ElementsAre(kMin32, 5));
  const HostTensor i64 = HostTensor::make<int64_t>({2}, {kMin64, -5});
  EXPECT_THAT(run1(OpId::kNeg, i64).values<int64_t>(), ElementsAre(kMin64, 5));
  EXPECT_THAT(run1(OpId::kAbs, i64).values<int64_t>(), ElementsAre(kMin64, 5));
}

TEST(UnaryKernelTest, FloatSignsAndNaN) {
  const HostTensor in = HostTensor::make<float>({3}, {0.0f, -0.0f, NAN});
  const std::vector<float> neg = run1(OpId::kNeg, in).values<float>();
  EXPECT_TRUE(std::signbit(neg[0]));
  EXPECT_FALSE(std::signbit(neg[1]));
  EXPECT_TRUE(std::isnan(neg[2]));
  const std::vector<float> abs = run1(OpId::kAbs, in).values<float>();
  EXPECT_FALSE(std::signbit(abs[1]));
  EXPECT_TRUE(std::isnan(run1(OpId::kRelu, in).values<float>()[2]));
}

template <typename T>
class ExpKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(ExpKernelTest, testutil::FloatTypes);

TYPED_TEST(ExpKernelTest, MatchesStdExp) {
  using T = TypeParam;
  std::vector<T> values;
  for (int i = 0; i < 101; ++i) values.push_back(T(-20 + 0.4 * i));  // odd length: a tail
  const HostTensor out = run1(OpId::kExp, HostTensor::make<T>(Shape::make({101}).value(), values));
  const std::vector<T> got = out.values<T>();
  ASSERT_EQ(got.size(), values.size());
  const T tolerance = 4 * std::numeric_limits<T>::epsilon();
  for (size_t i = 0; i < values.size(); ++i) {
    const T want = std::exp(values[i]);
    EXPECT_NEAR(got[i], want, tolerance * want) << "exp(" << values[i] << ")";
  }
  // Sixteen elements take Eigen's vectorised path (Note [Eigen exp range]).
  const std::vector<T> edges = vec<T>({-INFINITY, -1000, -746, -720, -104, -100, -88.5, -50, 0, 1,
                                       88.8, 710, INFINITY, -0.0, 3, -3});
  const HostTensor got_edges =
      run1(OpId::kExp, HostTensor::make<T>(Shape::make({16}).value(), edges));
  for (size_t i = 0; i < edges.size(); ++i) {
    const T want = std::exp(edges[i]);
    const T got_i = got_edges.values<T>()[i];
    if (std::isinf(want)) {
      EXPECT_EQ(got_i, want) << "exp(" << edges[i] << ")";
    } else {
      EXPECT_NEAR(got_i, want, tolerance * want) << "exp(" << edges[i] << ")";
    }
  }
  const HostTensor nan = run1(OpId::kExp, HostTensor::make<T>({5}, vec<T>({1, 2, NAN, 3, 4})));
  EXPECT_TRUE(std::isnan(nan.values<T>()[2]));
}

}  // namespace
}  // namespace mt
