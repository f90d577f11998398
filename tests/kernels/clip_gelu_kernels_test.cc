// CPU kernels of ClipByValue and Gelu, run through the registry: ClipByValue on every
// numeric dtype with scalar, row and full bounds (NaN stays, min > max gives min), its
// shape and dtype errors; Gelu exact and in tanh form against TensorFlow 2.21's values
// (tf.nn.gelu), the 2-byte floats rounded once from float32, and integers refused.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::as_doubles;
using testutil::expect_invalid;

template <typename T>
class ClipKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(ClipKernelTest, testutil::NumericTypes);

TYPED_TEST(ClipKernelTest, LimitsEachElementWithBroadcastBounds) {
  using T = TypeParam;
  const HostTensor t = HostTensor::make<T>({2, 3}, {T(-5), T(0), T(5), T(1), T(2), T(3)});
  const HostTensor lo = HostTensor::make<T>({}, {T(-1)});
  const HostTensor hi = HostTensor::make<T>({3}, {T(1), T(4), T(2)});
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kClipByValue, {t, lo, hi});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), S({2, 3}));
  EXPECT_EQ(as_doubles(*out), (std::vector<double>{-1, 0, 2, 1, 2, 2}));
  // A min above the max: every element is the min (TensorFlow's order, max then min).
  absl::StatusOr<HostTensor> crossed = run_cpu(
      OpId::kClipByValue, {t, HostTensor::make<T>({}, {T(3)}), HostTensor::make<T>({}, {T(2)})});
  ASSERT_TRUE(crossed.ok()) << crossed.status();
  EXPECT_EQ(as_doubles(*crossed), (std::vector<double>(6, 3)));
}

TEST(ClipKernelTest, NanStaysNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  absl::StatusOr<HostTensor> out = run_cpu(
      OpId::kClipByValue, {HostTensor::make<float>({3}, {1.f, nan, 3.f}),
                           HostTensor::make<float>({}, {0.f}), HostTensor::make<float>({}, {2.f})});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> v = out->values<float>();
  EXPECT_EQ(v[0], 1.f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 2.f);
}

TEST(ClipKernelTest, BoundsMustBroadcastToTWithoutGrowingIt) {
  const Shape t = S({3}), two = S({2}), scalar = S({}), grown = S({2, 3});
  const DType f = DType::kFloat32;
  expect_invalid(infer_output(OpId::kClipByValue, {{&t, f}, {&two, f}, {&scalar, f}}, OpAttrs()),
                 "[ClipByValue] clip_value_min and clip_value_max must broadcast to the shape of "
                 "t without growing it. t shape: [3] clip_value_min shape: [2] clip_value_max "
                 "shape: []");
  expect_invalid(infer_output(OpId::kClipByValue, {{&t, f}, {&scalar, f}, {&grown, f}}, OpAttrs()),
                 "[ClipByValue] clip_value_min and clip_value_max must broadcast to the shape of "
                 "t without growing it. t shape: [3] clip_value_min shape: [] clip_value_max "
                 "shape: [2,3]");
  expect_invalid(infer_output(OpId::kClipByValue, {{&t, f}, {&scalar, DType::kInt32}, {&scalar, f}},
                              OpAttrs()),
                 "[ClipByValue] dtypes differ: float32 vs int32");
}

OpAttrs gelu_attrs(bool approximate) {
  OpAttrs a;
  a.approximate = approximate;
  return a;
}

// TensorFlow 2.21: tf.nn.gelu(x) and tf.nn.gelu(x, approximate=True) in float64. Its erf
// and tanh (Eigen's) are within 5e-9 of the C library's, which the kernel uses: Phi(-1) is
// 0.158655253931457, TensorFlow gives 0.158655258072610.
const std::vector<double> kX = {-3, -1, -0.5, 0, 0.5, 1, 3};
const std::vector<double> kExact = {
    -0.004049694777521031, -0.15865525807260966, -0.1542687708693288, 0.0,
    0.3457312291306712,    0.8413447419273903,   2.995950305222479};
const std::vector<double> kTanh = {
    -0.0036373923237909, -0.15880800972132364, -0.15428599020775666, 0.0,
    0.3457140097922433,  0.8411919902786764,   2.9963626076762093};

TEST(GeluKernelTest, Float64MatchesTensorFlow) {
  for (bool approximate : {false, true}) {
    absl::StatusOr<HostTensor> out =
        run_cpu(OpId::kGelu, {HostTensor::make<double>({7}, kX)}, gelu_attrs(approximate));
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> got = out->values<double>();
    const std::vector<double>& want = approximate ? kTanh : kExact;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 5e-9) << i;
    }
  }
}

TEST(GeluKernelTest, Float32AndTwoByteFloatsRoundOnce) {
  std::vector<float> x32(kX.begin(), kX.end());
  absl::StatusOr<HostTensor> f32 =
      run_cpu(OpId::kGelu, {HostTensor::make<float>({7}, x32)}, gelu_attrs(false));
  ASSERT_TRUE(f32.ok()) << f32.status();
  const std::vector<float> got = f32->values<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], kExact[i], 1e-6) << i;
  // bfloat16 -1, 0.5, 1.5: TensorFlow gives -0.158203, 0.345703, 1.39844.
  const HostTensor bf =
      HostTensor::make<bfloat16>({3}, {bfloat16(-1.f), bfloat16(0.5f), bfloat16(1.5f)});
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kGelu, {bf}, gelu_attrs(false));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(as_doubles(*out), (std::vector<double>{-0.158203125, 0.345703125, 1.3984375}));
  // float16, tanh form: TensorFlow gives -0.1589, 0.3457, 1.398, rounding after each of its
  // ops; the kernel rounds once, to the float16 nearest the value, 1.3994 for 1.5 (an ulp
  // above TensorFlow's 1.3984).
  const HostTensor h =
      HostTensor::make<float16>({3}, {float16(-1.f), float16(0.5f), float16(1.5f)});
  absl::StatusOr<HostTensor> tanh_out = run_cpu(OpId::kGelu, {h}, gelu_attrs(true));
  ASSERT_TRUE(tanh_out.ok()) << tanh_out.status();
  const std::vector<double> t = as_doubles(*tanh_out);
  const double want[] = {-0.1588134765625, 0.345703125, 1.3994140625};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t[i], want[i]) << i;
}

TEST(GeluKernelTest, RefusesIntegers) {
  const Shape v = S({2});
  absl::StatusOr<OutputMeta> r = infer_output(OpId::kGelu, {{&v, DType::kInt32}}, OpAttrs());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mt
