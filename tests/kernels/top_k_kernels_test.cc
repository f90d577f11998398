// CPU kernel of TopKV2, run through the registry: TensorFlow 2.21's values and indices for
// the same calls (ties to the lower index), every numeric dtype against a sort of the row,
// NaN above every number, k of 0 and the whole row, and each error with TensorFlow's
// message.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::HostTensor;

OpAttrs top(int64_t k, bool sorted = true) {
  OpAttrs a;
  a.k = k;
  a.sorted = sorted;
  return a;
}

TEST(TopKKernelTest, PicksTheLargestWithTiesToTheLowerIndex) {
  // tf.raw_ops.TopKV2(input=[[3, 1, 3, 2], [0, 5, 5, 5]], k=3)
  const HostTensor x = HostTensor::make<float>({2, 4}, {3, 1, 3, 2, 0, 5, 5, 5});
  absl::StatusOr<std::vector<HostTensor>> out = testutil::run_cpu_all(OpId::kTopKV2, {x}, top(3));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].values<float>(), (std::vector<float>{3, 3, 2, 5, 5, 5}));
  EXPECT_EQ((*out)[1].values<int32_t>(), (std::vector<int32_t>{0, 2, 3, 1, 2, 3}));
  EXPECT_EQ((*out)[1].shape(), testutil::S({2, 3}));
  // sorted=false gives the same order here (TensorFlow's is left open).
  out = testutil::run_cpu_all(OpId::kTopKV2, {x}, top(3, false));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].values<int32_t>(), (std::vector<int32_t>{0, 2, 3, 1, 2, 3}));
}

template <typename T>
class TopKKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(TopKKernelTest, testutil::NumericTypes);

// Rows of small integers (many ties) of every length up to 9 and of 40, each k: the indices
// of a stable sort by value, descending.
TYPED_TEST(TopKKernelTest, MatchesAStableSortOfEachRow) {
  using T = TypeParam;
  std::mt19937 gen(7);
  for (int64_t cols : {1, 2, 3, 4, 5, 6, 7, 8, 9, 40}) {  // k past 16: the partial sort
    std::vector<T> x(static_cast<size_t>(3 * cols));
    for (T& v : x) v = static_cast<T>(static_cast<int>(gen() % 5) - 2);
    const HostTensor in = HostTensor::make<T>({3, cols}, x);
    for (int64_t k = 0; k <= cols; ++k) {
      absl::StatusOr<std::vector<HostTensor>> out =
          testutil::run_cpu_all(OpId::kTopKV2, {in}, top(k));
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<T> values = (*out)[0].values<T>();
      const std::vector<int32_t> indices = (*out)[1].values<int32_t>();
      for (int64_t r = 0; r < 3; ++r) {
        std::vector<int32_t> order(static_cast<size_t>(cols));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int32_t a, int32_t b) { return x[r * cols + a] > x[r * cols + b]; });
        for (int64_t j = 0; j < k; ++j) {
          EXPECT_EQ(indices[r * k + j], order[j]) << "cols " << cols << " k " << k;
          EXPECT_EQ(values[r * k + j], x[r * cols + order[j]]);
        }
      }
    }
  }
}

TEST(TopKKernelTest, RanksNanAboveEveryNumberAndTakesTwoByteFloats) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  const HostTensor x = HostTensor::make<float>({5}, {1, nan, inf, -inf, nan});
  absl::StatusOr<std::vector<HostTensor>> out = testutil::run_cpu_all(OpId::kTopKV2, {x}, top(5));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].values<int32_t>(), (std::vector<int32_t>{1, 4, 2, 0, 3}));
  const HostTensor h =
      HostTensor::make<bfloat16>({3}, {bfloat16(1.f), bfloat16(3.f), bfloat16(2.f)});
  out = testutil::run_cpu_all(OpId::kTopKV2, {h}, top(2));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(testutil::as_doubles((*out)[0]), (std::vector<double>{3, 2}));
  EXPECT_EQ((*out)[1].values<int32_t>(), (std::vector<int32_t>{1, 2}));
}

TEST(TopKKernelTest, HandlesEmptyRowsAndKZero) {
  absl::StatusOr<std::vector<HostTensor>> out =
      testutil::run_cpu_all(OpId::kTopKV2, {HostTensor::make<float>({0, 3}, {})}, top(2));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), testutil::S({0, 2}));
  out = testutil::run_cpu_all(OpId::kTopKV2, {HostTensor::make<float>({2, 0}, {})}, top(0));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].shape(), testutil::S({2, 0}));
}

TEST(TopKKernelTest, RejectsBadKAndScalarsWithTensorFlowsMessages) {
  const Shape row = testutil::S({1, 3}), scalar = testutil::S({});
  testutil::expect_invalid(infer_output(OpId::kTopKV2, {{&row, DType::kFloat32}}, top(5)),
                           "[TopKV2] input must have at least k columns. Had 3, needed 5");
  testutil::expect_invalid(infer_output(OpId::kTopKV2, {{&row, DType::kFloat32}}, top(-1)),
                           "[TopKV2] Need k >= 0, got -1");
  testutil::expect_invalid(infer_output(OpId::kTopKV2, {{&scalar, DType::kFloat32}}, top(1)),
                           "[TopKV2] input must be >= 1-D, got shape []");
  absl::StatusOr<OutputMeta> b = infer_output(OpId::kTopKV2, {{&row, DType::kBool}}, top(1));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mt
