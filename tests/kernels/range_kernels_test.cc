// CPU kernel and shape function of Range, run through the registry: every numeric dtype
// against start + i * delta in double, the length of integer and float ranges as
// TensorFlow computes it, and each error with TensorFlow's message.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/range.h"
#include "kernels/shape_fns.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

// `v` as both fields; the integer one only where int64 holds `v` (a float range's bounds
// may not fit, and converting them would be undefined).
Scalar number(double v) {
  const bool fits = v >= -9223372036854775808.0 && v < 9223372036854775808.0;
  return Scalar{v, fits ? static_cast<int64_t>(v) : 0, v != 0};
}

OpAttrs range_attrs(double start, double limit, double delta) {
  OpAttrs a;
  a.start = number(start);
  a.limit = number(limit);
  a.delta = number(delta);
  return a;
}

absl::StatusOr<HostTensor> run_range(DType dtype, double start, double limit, double delta) {
  absl::StatusOr<int64_t> n =
      internal::range_size(dtype, number(start), number(limit), number(delta));
  if (!n.ok()) return n.status();
  HostTensor out = HostTensor::meta({*n}, dtype);
  return run_cpu(OpId::kRange, {out}, range_attrs(start, limit, delta));
}

template <typename T>
class RangeKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(RangeKernelTest, testutil::NumericTypes);

TYPED_TEST(RangeKernelTest, CountsUpAndDown) {
  const DType dtype = dtype_of<TypeParam>();
  absl::StatusOr<HostTensor> up = run_range(dtype, 1, 10, 3);
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(testutil::as_doubles(*up), (std::vector<double>{1, 4, 7}));
  absl::StatusOr<HostTensor> down = run_range(dtype, 10, 1, -3);
  ASSERT_TRUE(down.ok()) << down.status();
  EXPECT_EQ(testutil::as_doubles(*down), (std::vector<double>{10, 7, 4}));
  absl::StatusOr<HostTensor> empty = run_range(dtype, 2, 2, 1);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), S({0}));
}

TEST(RangeKernelTest, FloatsAreStartPlusIDeltaRoundedOnce) {
  absl::StatusOr<HostTensor> out = run_range(DType::kFloat32, 0, 1, 0.1);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> got = out->values<float>();
  ASSERT_EQ(got.size(), 10u);  // 1 / 0.1f in float32 is 10 (9.99999985 rounds up)
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(got[i], static_cast<float>(i * static_cast<double>(0.1f))) << i;
  }
  out = run_range(DType::kFloat64, 0.5, 2.2, 0.5);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->values<double>(), (std::vector<double>{0.5, 1, 1.5, 2}));
  out = run_range(DType::kBFloat16, 0, 300, 100);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(testutil::as_doubles(*out), (std::vector<double>{0, 100, 200}));
}

TEST(RangeKernelTest, LengthsFollowTensorFlow) {
  const auto size = [](DType d, double s, double l, double delta) {
    return internal::range_size(d, number(s), number(l), number(delta)).value();
  };
  EXPECT_EQ(size(DType::kInt32, 0, 5, 2), 3);
  EXPECT_EQ(size(DType::kInt64, 0, -5, -2), 3);
  EXPECT_EQ(size(DType::kFloat32, 0, 0.3, 0.1), 3);  // in float32; 4 in double
  EXPECT_EQ(size(DType::kFloat64, 0, 0.3, 0.1), 3);
  EXPECT_EQ(size(DType::kFloat32, 1, 5, 1.5), 3);
}

TEST(RangeKernelTest, RejectsZeroAndWrongSignedDeltas) {
  const auto error = [](DType d, double s, double l, double delta) {
    absl::StatusOr<int64_t> n = internal::range_size(d, number(s), number(l), number(delta));
    EXPECT_FALSE(n.ok());
    EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(n.status().message());
  };
  EXPECT_EQ(error(DType::kInt32, 0, 5, 0), "[Range] Requires delta != 0: 0");
  EXPECT_EQ(error(DType::kFloat32, 0, 5, 0), "[Range] Requires delta != 0: 0");
  EXPECT_EQ(error(DType::kInt32, 5, 0, 1), "[Range] Requires start <= limit when delta > 0: 5/0");
  EXPECT_EQ(error(DType::kFloat64, 0, 5, -1),
            "[Range] Requires start >= limit when delta < 0: 0/5");
  EXPECT_EQ(error(DType::kFloat32, 0, 1e30, 1e-10),
            "[Range] Requires ((limit - start) / delta) <= 9223372036854775807");
  EXPECT_EQ(error(DType::kBool, 0, 1, 1),
            internal::dtype_not_supported(OpId::kRange, DType::kBool).message());
  // The output the wrapper sized must hold the range.
  const Shape two = S({2});
  testutil::expect_invalid(
      infer_output(OpId::kRange, {{&two, DType::kInt32}}, range_attrs(0, 3, 1)),
      "[Range] output shape [2] does not hold the range's 3 elements");
}

}  // namespace
}  // namespace mt
