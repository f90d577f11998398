// CPU kernels of AddN: hand-computed sums for N = 1..3, a long sum across block
// boundaries, and integer wrap-around.
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

template <typename T>
class AddNKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(AddNKernelTest, testutil::NumericTypes);

TYPED_TEST(AddNKernelTest, SumsOneTwoAndThreeInputs) {
  using T = TypeParam;
  const HostTensor a = HostTensor::make<T>({2, 2}, vec<T>({1, 2, 3, 4}));
  const HostTensor b = HostTensor::make<T>({2, 2}, vec<T>({10, 20, 30, 40}));
  const HostTensor c = HostTensor::make<T>({2, 2}, vec<T>({-100, 0, 100, -7}));
  absl::StatusOr<HostTensor> one = run_cpu(OpId::kAddN, {a});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->values<T>(), vec<T>({1, 2, 3, 4}));
  absl::StatusOr<HostTensor> two = run_cpu(OpId::kAddN, {a, b});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->values<T>(), vec<T>({11, 22, 33, 44}));
  absl::StatusOr<HostTensor> three = run_cpu(OpId::kAddN, {a, b, c});
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(three->values<T>(), vec<T>({-89, 22, 133, 37}));
}

TYPED_TEST(AddNKernelTest, SumsAcrossBlockBoundaries) {
  using T = TypeParam;
  constexpr int64_t kSize = 5000;  // two full blocks and a partial one
  std::vector<HostTensor> inputs;
  std::vector<T> expected(kSize, T(0));
  for (int k = 0; k < 5; ++k) {
    std::vector<T> values(kSize);
    for (int64_t i = 0; i < kSize; ++i) values[i] = T((i * (k + 1)) % 97 - 40);
    for (int64_t i = 0; i < kSize; ++i) expected[i] += values[i];
    inputs.push_back(HostTensor::make<T>(Shape::make({kSize}).value(), values));
  }
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kAddN, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->values<T>(), expected);
}

TYPED_TEST(AddNKernelTest, HandlesScalarsAndZeroElements) {
  using T = TypeParam;
  const HostTensor s = HostTensor::make<T>({}, vec<T>({3}));
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kAddN, {s, s, s});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->values<T>(), ElementsAre(T(9)));
  const HostTensor e = HostTensor::make<T>({0, 2}, {});
  out = run_cpu(OpId::kAddN, {e, e});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), e.shape());
}

TEST(AddNKernelTest, IntegersWrapAround) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  const HostTensor a = HostTensor::make<int32_t>({2}, {kMax, -kMax});
  const HostTensor one = HostTensor::make<int32_t>({2}, {1, -2});
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kAddN, {a, one});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->values<int32_t>(), ElementsAre(std::numeric_limits<int32_t>::min(), kMax));
}

}  // namespace
}  // namespace mt
