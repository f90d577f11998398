// CPU kernel of Cumsum, run through the registry: every numeric dtype, each axis, exclusive
// and reverse against a plain reference in double, long lines split across threads, and
// each error with TensorFlow's message.
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

OpAttrs scan(int64_t axis, bool exclusive = false, bool reverse = false) {
  OpAttrs a;
  a.axis = axis;
  a.exclusive = exclusive;
  a.reverse = reverse;
  return a;
}

// The reference: the running sums of `x` (row-major `dims`) along `axis`, in double.
std::vector<double> reference(const std::vector<double>& x, const std::vector<int64_t>& dims,
                              int axis, bool exclusive, bool reverse) {
  int64_t inner = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t len = dims[axis];
  std::vector<double> out(x.size());
  for (int64_t line = 0; len > 0 && line < static_cast<int64_t>(x.size()) / len; ++line) {
    const int64_t base = line / inner * len * inner + line % inner;
    double sum = 0;
    for (int64_t k = 0; k < len; ++k) {
      const int64_t at = base + (reverse ? len - 1 - k : k) * inner;
      if (!exclusive) sum += x[at];
      out[at] = sum;
      if (exclusive) sum += x[at];
    }
  }
  return out;
}

template <typename T>
class CumsumKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(CumsumKernelTest, testutil::NumericTypes);

TYPED_TEST(CumsumKernelTest, SumsAlongEachAxisBothWays) {
  using T = TypeParam;
  const std::vector<int64_t> dims = {2, 3, 4};
  std::vector<double> x(24);
  std::vector<T> values(24);
  for (int i = 0; i < 24; ++i) values[i] = static_cast<T>(x[i] = (i * 7) % 11 - 5);
  const HostTensor in = HostTensor::make<T>({2, 3, 4}, values);
  for (int axis = -3; axis < 3; ++axis) {
    for (bool exclusive : {false, true}) {
      for (bool reverse : {false, true}) {
        absl::StatusOr<HostTensor> out =
            run_cpu(OpId::kCumsum, {in}, scan(axis, exclusive, reverse));
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ(out->shape(), S({2, 3, 4}));
        EXPECT_EQ(testutil::as_doubles(*out),
                  reference(x, dims, axis < 0 ? axis + 3 : axis, exclusive, reverse))
            << axis << " " << exclusive << " " << reverse;
      }
    }
  }
}

TEST(CumsumKernelTest, LongLinesAcrossThreadsMatchDouble) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::vector<int64_t> dims = {3, 5000, 7};
  std::vector<double> x(3 * 5000 * 7);
  std::vector<double> values(x.size());
  for (size_t i = 0; i < x.size(); ++i) values[i] = x[i] = u(gen);
  const HostTensor in = HostTensor::make<double>({3, 5000, 7}, values);
  for (int axis : {0, 1, 2}) {
    absl::StatusOr<HostTensor> out = run_cpu(OpId::kCumsum, {in}, scan(axis, false, true));
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> want = reference(x, dims, axis, false, true);
    const std::vector<double> got = out->values<double>();
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-9) << i;
  }
}

TEST(CumsumKernelTest, TwoByteFloatsRoundEachSumOnce) {
  const HostTensor in = HostTensor::make<float16>(
      {4}, {float16(1.f), float16(0.0004f), float16(0.0004f), float16(0.0004f)});
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kCumsum, {in}, scan(0));
  ASSERT_TRUE(out.ok()) << out.status();
  // In float16 1 + 0.0004 rounds back to 1 at every step; summed in float32, the sums
  // from the second on round to the next float16 above 1 (1 + 2^-10).
  const std::vector<double> got = testutil::as_doubles(*out);
  EXPECT_EQ(got[0], 1.0);
  EXPECT_EQ(got[1], 1.0);
  EXPECT_EQ(got[2], 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(got[3], 1.0 + std::ldexp(1.0, -10));
}

TEST(CumsumKernelTest, HandlesZeroSizedAxes) {
  absl::StatusOr<HostTensor> out =
      run_cpu(OpId::kCumsum, {HostTensor::make<int32_t>({2, 0, 3}, {})}, scan(1));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), S({2, 0, 3}));
}

TEST(CumsumKernelTest, RejectsAxesOutOfRangeAndBool) {
  const Shape matrix = S({2, 3}), scalar = S({});
  testutil::expect_invalid(infer_output(OpId::kCumsum, {{&matrix, DType::kFloat32}}, scan(2)),
                           "[Cumsum] ScanOp: Expected scan axis in the range [-2, 2), but got 2");
  testutil::expect_invalid(infer_output(OpId::kCumsum, {{&scalar, DType::kFloat32}}, scan(0)),
                           "[Cumsum] ScanOp: Expected scan axis in the range [0, 0), but got 0");
  absl::StatusOr<OutputMeta> b = infer_output(OpId::kCumsum, {{&matrix, DType::kBool}}, scan(0));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mt
