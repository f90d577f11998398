// CPU kernels of AddV2, Sub, Mul and RealDiv: equal shapes, every broadcasting pattern
// (scalar, row, column, rank extension, size 0), and random shapes against an index-by-
// index reference.
#include <cmath>
#include <limits>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

template <typename T>
class BinaryKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(BinaryKernelTest, testutil::NumericTypes);

// Runs `op` and returns its output; fails the test on an error.
HostTensor run2(OpId op, const HostTensor& a, const HostTensor& b) {
  absl::StatusOr<HostTensor> out = run_cpu(op, {a, b});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : HostTensor();
}

TYPED_TEST(BinaryKernelTest, ComputesEqualShapes) {
  using T = TypeParam;
  const HostTensor a = HostTensor::make<T>({2, 2}, vec<T>({1, 2, 3, 4}));
  const HostTensor b = HostTensor::make<T>({2, 2}, vec<T>({5, -6, 7, 0}));
  EXPECT_EQ(run2(OpId::kAddV2, a, b).values<T>(), vec<T>({6, -4, 10, 4}));
  EXPECT_EQ(run2(OpId::kSub, a, b).values<T>(), vec<T>({-4, 8, -4, 4}));
  EXPECT_EQ(run2(OpId::kMul, a, b).values<T>(), vec<T>({5, -12, 21, 0}));
}

TYPED_TEST(BinaryKernelTest, ComputesOneElement) {
  using T = TypeParam;
  const HostTensor a = HostTensor::make<T>({1, 1}, vec<T>({7}));
  const HostTensor b = HostTensor::make<T>({1}, vec<T>({3}));
  const HostTensor out = run2(OpId::kSub, a, b);
  EXPECT_EQ(out.shape(), S({1, 1}));
  EXPECT_THAT(out.values<T>(), ElementsAre(T(4)));
  EXPECT_THAT(run2(OpId::kMul, b, b).values<T>(), ElementsAre(T(9)));
}

TYPED_TEST(BinaryKernelTest, BroadcastsScalarsOnEitherSide) {
  using T = TypeParam;
  const HostTensor s = HostTensor::make<T>({}, vec<T>({10}));
  const HostTensor v = HostTensor::make<T>({3}, vec<T>({1, 2, 3}));
  EXPECT_EQ(run2(OpId::kSub, s, v).values<T>(), vec<T>({9, 8, 7}));
  EXPECT_EQ(run2(OpId::kSub, v, s).values<T>(), vec<T>({-9, -8, -7}));
  EXPECT_EQ(run2(OpId::kMul, s, s).values<T>(), vec<T>({100}));
}

TYPED_TEST(BinaryKernelTest, BroadcastsRowsAndColumns) {
  using T = TypeParam;
  const HostTensor m = HostTensor::make<T>({2, 3}, vec<T>({1, 2, 3, 4, 5, 6}));
  const HostTensor row = HostTensor::make<T>({3}, vec<T>({10, 20, 30}));
  const HostTensor col = HostTensor::make<T>({2, 1}, vec<T>({100, 200}));
  EXPECT_EQ(run2(OpId::kAddV2, m, row).values<T>(), vec<T>({11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(run2(OpId::kSub, row, m).values<T>(), vec<T>({9, 18, 27, 6, 15, 24}));
  EXPECT_EQ(run2(OpId::kAddV2, m, col).values<T>(), vec<T>({101, 102, 103, 204, 205, 206}));
  const HostTensor outer = run2(OpId::kMul, col, row);  // (2, 1) x (3,) -> (2, 3)
  EXPECT_EQ(outer.shape(), S({2, 3}));
  EXPECT_EQ(outer.values<T>(), vec<T>({1000, 2000, 3000, 2000, 4000, 6000}));
}

TYPED_TEST(BinaryKernelTest, ExtendsRank) {
  using T = TypeParam;
  const HostTensor a = HostTensor::make<T>({2, 1, 3}, vec<T>({1, 2, 3, 4, 5, 6}));
  const HostTensor b = HostTensor::make<T>({2, 1}, vec<T>({10, 20}));
  const HostTensor out = run2(OpId::kAddV2, a, b);
  EXPECT_EQ(out.shape(), S({2, 2, 3}));
  EXPECT_EQ(out.values<T>(), vec<T>({11, 12, 13, 21, 22, 23, 14, 15, 16, 24, 25, 26}));
}

TYPED_TEST(BinaryKernelTest, HandlesZeroSizedShapes) {
  using T = TypeParam;
  const HostTensor e = HostTensor::make<T>({0, 3}, {});
  const HostTensor row = HostTensor::make<T>({1, 3}, vec<T>({1, 2, 3}));
  const HostTensor out = run2(OpId::kMul, e, row);
  EXPECT_EQ(out.shape(), S({0, 3}));
  EXPECT_EQ(run2(OpId::kAddV2, e, e).shape(), S({0, 3}));
}

TEST(BinaryKernelTest, RealDivDividesFloats) {
  const HostTensor a = HostTensor::make<float>({2, 2}, {1, 3, -1, 0});
  const HostTensor b = HostTensor::make<float>({2}, {2, 0});
  EXPECT_THAT(run2(OpId::kRealDiv, a, b).values<float>(),
              ElementsAre(0.5f, std::numeric_limits<float>::infinity(), -0.5f, ::testing::IsNan()));
  const HostTensor c = HostTensor::make<double>({3}, {1, 2, 3});
  const HostTensor four = HostTensor::make<double>({}, {4});
  EXPECT_THAT(run2(OpId::kRealDiv, c, four).values<double>(), ElementsAre(0.25, 0.5, 0.75));
  EXPECT_THAT(run2(OpId::kRealDiv, four, c).values<double>(), ElementsAre(4.0, 2.0, 4.0 / 3));
}

TEST(BinaryKernelTest, IntegersWrapAround) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  const HostTensor a = HostTensor::make<int32_t>({2}, {kMax, kMin});
  const HostTensor one = HostTensor::make<int32_t>({}, {1});
  EXPECT_THAT(run2(OpId::kAddV2, a, one).values<int32_t>(), ElementsAre(kMin, kMin + 1));
  EXPECT_THAT(run2(OpId::kSub, a, one).values<int32_t>(), ElementsAre(kMax - 1, kMax));
  const HostTensor big = HostTensor::make<int64_t>({1}, {int64_t{1} << 62});
  EXPECT_THAT(run2(OpId::kMul, big, HostTensor::make<int64_t>({1}, {4})).values<int64_t>(),
              ElementsAre(0));
}

// Returns the element of `t` at output position `index` of a broadcast to rank `rank`.
double at_broadcast(const std::vector<double>& values, const Shape& t,
                    const std::vector<int64_t>& index) {
  int64_t flat = 0;
  const size_t offset = index.size() - t.rank();
  for (int d = 0; d < t.rank(); ++d)
    flat = flat * t.dim(d) + (t.dim(d) == 1 ? 0 : index[offset + d]);
  return values[flat];
}

TEST(BinaryKernelTest, BroadcastsRandomShapesLikeTheReference) {
  std::mt19937 rng(7);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {S({3, 1, 5}), S({1, 4, 1})},
      {S({2, 3, 4, 5}), S({3, 1, 5})},
      {S({5, 1, 1, 2}), S({1, 3, 4, 1})},
      {S({1}), S({7, 3})},
      {S({2, 1, 2, 1, 2, 1, 2, 1}), S({1, 3, 1, 3, 1, 3, 1, 3})},
      {S({6, 1, 4}), S({6, 5, 4})}};
  for (const auto& [sa, sb] : cases) {
    std::vector<double> va(sa.num_elements()), vb(sb.num_elements());
    for (double& v : va) v = int(rng() % 19) - 9;
    for (double& v : vb) v = int(rng() % 19) - 9;
    const HostTensor a = HostTensor::make<double>(sa, va), b = HostTensor::make<double>(sb, vb);
    const HostTensor out = run2(OpId::kSub, a, b);
    const std::vector<double> got = out.values<double>();
    ASSERT_EQ(static_cast<int64_t>(got.size()), out.shape().num_elements());
    std::vector<int64_t> index(out.shape().rank(), 0);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], at_broadcast(va, sa, index) - at_broadcast(vb, sb, index))
          << sa.to_string() << " - " << sb.to_string() << " at flat index " << i;
      for (int d = out.shape().rank() - 1; d >= 0 && ++index[d] == out.shape().dim(d); --d) {
        index[d] = 0;
      }
    }
  }
}

}  // namespace
}  // namespace mt
