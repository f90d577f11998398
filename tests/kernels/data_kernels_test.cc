// CPU kernels of _EagerConst, Identity, Fill and Cast, run through the registry.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

template <typename T>
class DataKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(DataKernelTest, testutil::AllTypes);

TYPED_TEST(DataKernelTest, EagerConstAndIdentityCopyTheInput) {
  using T = TypeParam;
  const std::vector<T> values = vec<T>({1, 0, 3, 0, 5, 7});
  const HostTensor in = HostTensor::make<T>({2, 3}, values);
  for (OpId op : {OpId::kEagerConst, OpId::kIdentity}) {
    absl::StatusOr<HostTensor> out = run_cpu(op, {in});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape(), in.shape());
    EXPECT_EQ(out->values<T>(), values) << op_name(op);
  }
}

TYPED_TEST(DataKernelTest, CopiesHandleZeroElements) {
  using T = TypeParam;
  const HostTensor in = HostTensor::make<T>({0, 4}, {});
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kIdentity, {in});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape().num_elements(), 0);
}

TYPED_TEST(DataKernelTest, FillReadsTheValueFieldOfItsDtype) {
  using T = TypeParam;
  OpAttrs attrs;
  attrs.value = {.f = 1.5, .i = -9, .b = true};
  absl::StatusOr<HostTensor> out =
      run_cpu(OpId::kFill, {HostTensor::meta({2, 2}, dtype_of<T>())}, attrs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), Shape::make({2, 2}).value());
  const T expected = std::is_same_v<T, bool>       ? T(true)
                     : std::is_floating_point_v<T> ? T(1.5)
                                                   : T(-9);
  EXPECT_THAT(out->values<T>(), ElementsAre(expected, expected, expected, expected));
  attrs.value = {.f = 0, .i = 0, .b = false};
  out = run_cpu(OpId::kFill, {HostTensor::meta({3}, dtype_of<T>())}, attrs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->values<T>(), ElementsAre(T(0), T(0), T(0)));
}

TYPED_TEST(DataKernelTest, FillHandlesScalarsAndZeroElements) {
  using T = TypeParam;
  OpAttrs attrs;
  attrs.value = {.f = 1, .i = 1, .b = true};
  absl::StatusOr<HostTensor> scalar =
      run_cpu(OpId::kFill, {HostTensor::meta({}, dtype_of<T>())}, attrs);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_THAT(scalar->values<T>(), ElementsAre(T(1)));
  absl::StatusOr<HostTensor> empty =
      run_cpu(OpId::kFill, {HostTensor::meta({3, 0}, dtype_of<T>())}, attrs);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape().num_elements(), 0);
}

// The source values of the cast matrix, by kind of source dtype.
HostTensor cast_source(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return HostTensor::make<float>({4}, {0, 1, -2.75f, 3.5f});
    case DType::kFloat64:
      return HostTensor::make<double>({4}, {0, 1, -2.75, 3.5});
    case DType::kInt32:
      return HostTensor::make<int32_t>({4}, {0, 1, -2, 3});
    case DType::kInt64:
      return HostTensor::make<int64_t>({4}, {0, 1, -2, 3});
    case DType::kBool:
      return HostTensor::make<bool>({4}, {false, true, false, true});
    case DType::kBFloat16:
      return HostTensor::make<bfloat16>({4}, vec<bfloat16>({0, 1, -2.75, 3.5}));
    case DType::kFloat16:
      return HostTensor::make<float16>({4}, vec<float16>({0, 1, -2.75, 3.5}));
  }
  return HostTensor();
}

// The expected result of casting cast_source(src) to dst, worked out by hand.
std::vector<double> cast_expected(DType src, DType dst) {
  if (src == DType::kBool) return {0, 1, 0, 1};
  if (dst == DType::kBool) return {0, 1, 1, 1};
  if (is_floating(src) && is_floating(dst)) return {0, 1, -2.75, 3.5};
  return {0, 1, -2, 3};  // integers, or floats truncated toward zero
}

TEST(CastKernelTest, CastsEveryDtypePair) {
  for (int s = 0; s < kNumDTypes; ++s) {
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType src = static_cast<DType>(s), dst = static_cast<DType>(d);
      OpAttrs attrs;
      attrs.dst_dtype = dst;
      absl::StatusOr<HostTensor> out = run_cpu(OpId::kCast, {cast_source(src)}, attrs);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->dtype(), dst);
      EXPECT_EQ(testutil::as_doubles(*out), cast_expected(src, dst))
          << dtype_name(src) << " -> " << dtype_name(dst);
    }
  }
}

template <typename Src, typename Dst>
std::vector<Dst> cast_values(const std::vector<Src>& values) {
  OpAttrs attrs;
  attrs.dst_dtype = dtype_of<Dst>();
  const HostTensor in =
      HostTensor::make<Src>(Shape::make({int64_t(values.size())}).value(), values);
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kCast, {in}, attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? out->values<Dst>() : std::vector<Dst>();
}

TEST(CastKernelTest, SaturatesOutOfRangeFloatsAndMapsNaNToZero) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
  EXPECT_THAT((cast_values<float, int32_t>)({NAN, 1e10f, -1e10f, kInf, -kInf, 2147483520.f,
                                             -2147483648.f, -0.5f}),
              ElementsAre(0, kMax32, kMin32, kMax32, kMin32, 2147483520, kMin32, 0));
  EXPECT_THAT((cast_values<double, int32_t>)({2147483647.9, -2147483648.9, -2147483647.9}),
              ElementsAre(kMax32, kMin32, -2147483647));
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
  EXPECT_THAT((cast_values<double, int64_t>)({NAN, 1e19, -1e19, 9.2e18}),
              ElementsAre(0, kMax64, kMin64, int64_t{9200000000000000000}));
  EXPECT_THAT((cast_values<float, bool>)({NAN, -0.0f, 0.25f}), ElementsAre(true, false, true));
}

TEST(CastKernelTest, NarrowsIntegersModularly) {
  EXPECT_THAT((cast_values<int64_t, int32_t>)({(int64_t{1} << 32) + 5, int64_t{1} << 31, -1}),
              ElementsAre(5, std::numeric_limits<int32_t>::min(), -1));
  EXPECT_THAT((cast_values<int32_t, float>)({16777217}), ElementsAre(16777216.f));
  EXPECT_THAT((cast_values<double, float>)({1e300}),
              ElementsAre(std::numeric_limits<float>::infinity()));
}

}  // namespace
}  // namespace mt
