// CPU kernel of MatrixBandPart, run through the registry: every dtype against a plain
// reference of the band, batches, empty matrices, and each error with TensorFlow's message.
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

OpAttrs band(int64_t lower, int64_t upper) {
  OpAttrs a;
  a.dims = {lower, upper};
  return a;
}

// The reference: element (b, r, c) of a [batch, rows, cols] input of 1 + i, or 0 off the band.
std::vector<double> reference(int64_t batch, int64_t rows, int64_t cols, int64_t lower,
                              int64_t upper) {
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const bool keep = (lower < 0 || r - c <= lower) && (upper < 0 || c - r <= upper);
        out.push_back(keep ? static_cast<double>(1 + (b * rows + r) * cols + c) : 0.0);
      }
    }
  }
  return out;
}

template <typename T>
class BandPartKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(BandPartKernelTest, testutil::NumericTypes);

TYPED_TEST(BandPartKernelTest, KeepsTheBandOfEveryMatrix) {
  using T = TypeParam;
  std::vector<T> values(2 * 3 * 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(1 + i);
  const HostTensor in = HostTensor::make<T>({2, 3, 4}, values);
  for (int64_t lower : {-1, 0, 1, 3}) {
    for (int64_t upper : {-1, 0, 2, 4}) {
      absl::StatusOr<HostTensor> out = run_cpu(OpId::kMatrixBandPart, {in}, band(lower, upper));
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->shape(), S({2, 3, 4}));
      EXPECT_EQ(testutil::as_doubles(*out), reference(2, 3, 4, lower, upper))
          << lower << " " << upper;
    }
  }
}

TEST(BandPartKernelTest, TakesBoolAndTwoByteFloats) {
  const HostTensor b = HostTensor::make<bool>({2, 2}, {true, true, true, true});
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kMatrixBandPart, {b}, band(0, -1));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->values<bool>(), (std::vector<bool>{true, true, false, true}));
  const HostTensor h = HostTensor::make<bfloat16>(
      {2, 2}, {bfloat16(1.5f), bfloat16(2.f), bfloat16(3.f), bfloat16(4.f)});
  out = run_cpu(OpId::kMatrixBandPart, {h}, band(-1, 0));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(testutil::as_doubles(*out), (std::vector<double>{1.5, 0, 3, 4}));
}

TEST(BandPartKernelTest, HandlesEmptyMatrices) {
  absl::StatusOr<HostTensor> out =
      run_cpu(OpId::kMatrixBandPart, {HostTensor::make<float>({3, 0, 2}, {})}, band(0, 0));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), S({3, 0, 2}));
}

TEST(BandPartKernelTest, RejectsBadRanksAndBounds) {
  const Shape vector = S({2}), matrix = S({3, 4});
  testutil::expect_invalid(
      infer_output(OpId::kMatrixBandPart, {{&vector, DType::kFloat32}}, band(1, -1)),
      "[MatrixBandPart] input must be at least 2-dim, received shape: [2]");
  testutil::expect_invalid(
      infer_output(OpId::kMatrixBandPart, {{&matrix, DType::kFloat32}}, band(4, 0)),
      "[MatrixBandPart] num_lower must be negative or less or equal to number of rows (3) got: 4");
  testutil::expect_invalid(
      infer_output(OpId::kMatrixBandPart, {{&matrix, DType::kInt32}}, band(2, 5)),
      "[MatrixBandPart] num_upper must be negative or less or equal to number of columns (4) "
      "got: 5");
}

}  // namespace
}  // namespace mt
