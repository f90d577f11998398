// CPU kernels of the element-wise ops of issue 19: Sqrt, Rsqrt, Square, Log, Log1p, Tanh,
// Sigmoid, Sign, Floor, Round, LogicalNot, Pow, Maximum, Minimum, SquaredDifference,
// FloorDiv, FloorMod, LogicalAnd and LogicalOr, against plain C++ references: every dtype
// of each row, NaN and Inf, broadcasting, 0-sized dimensions and the integer errors.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using ::testing::HasSubstr;
using testutil::as_doubles;

HostTensor run1(OpId op, const HostTensor& in) {
  absl::StatusOr<HostTensor> out = run_cpu(op, {in});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : HostTensor();
}

HostTensor run2(OpId op, const HostTensor& a, const HostTensor& b) {
  absl::StatusOr<HostTensor> out = run_cpu(op, {a, b});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : HostTensor();
}

// Returns n values in [low, high) followed by the special values of T (NaN, +-Inf, +-0,
// the smallest normal and a subnormal for floats).
template <typename T>
std::vector<T> sample(int n, double low, double high, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<T> out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<T>(dist(gen)));
  if constexpr (std::is_floating_point_v<T>) {
    using L = std::numeric_limits<T>;
    for (T v : {L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), T(-0.0), L::min(),
                L::denorm_min(), T(-1), T(1), T(0.5), T(1.5), T(2.5), T(-2.5), T(1e-6)}) {
      out.push_back(v);
    }
  }
  return out;
}

// Units in the last place between a and b (0 when both are NaN or equal).
template <typename T>
double ulps(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (a == b) return 0;
  if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) return INFINITY;
  const T scale = std::max(std::fabs(b), std::numeric_limits<T>::min());
  return std::fabs(a - b) / (scale * std::numeric_limits<T>::epsilon());
}

// Checks a unary float kernel against `ref` within `max_ulps` (0: exact, NaN equal to NaN).
template <typename T, typename Ref>
void expect_unary(OpId op, Ref ref, double max_ulps, double low, double high) {
  // 3000 elements: several Eigen blocks and vector tails.
  const std::vector<T> in = sample<T>(3000, low, high, 7);
  const HostTensor out = run1(op, HostTensor::make<T>({static_cast<int64_t>(in.size())}, in));
  const std::vector<T> got = out.values<T>();
  for (size_t i = 0; i < in.size(); ++i) {
    const T want = static_cast<T>(ref(in[i]));
    EXPECT_LE(ulps(got[i], want), max_ulps)
        << op_name(op) << "(" << in[i] << ") = " << got[i] << ", want " << want;
  }
}

template <typename T>
class FloatUnaryTest : public ::testing::Test {};
TYPED_TEST_SUITE(FloatUnaryTest, testutil::FloatTypes);

TYPED_TEST(FloatUnaryTest, ExactOpsMatchStd) {
  using T = TypeParam;
  expect_unary<T>(
      OpId::kSqrt, [](T x) { return std::sqrt(x); }, 0, -2, 100);
  expect_unary<T>(
      OpId::kRsqrt, [](T x) { return T(1) / std::sqrt(x); }, 0, -2, 100);
  expect_unary<T>(
      OpId::kSquare, [](T x) { return x * x; }, 0, -100, 100);
  expect_unary<T>(
      OpId::kFloor, [](T x) { return std::floor(x); }, 0, -100, 100);
  expect_unary<T>(
      OpId::kRound, [](T x) { return std::nearbyint(x); }, 0, -100, 100);
  expect_unary<T>(
      OpId::kSign, [](T x) { return x > 0   ? T(1)
                                    : x < 0 ? T(-1)
                                            : x; }, 0, -3, 3);
}

TYPED_TEST(FloatUnaryTest, TranscendentalOpsWithinFewUlps) {
  using T = TypeParam;
  expect_unary<T>(
      OpId::kLog, [](T x) { return std::log(x); }, 4, -1, 1e6);
  expect_unary<T>(
      OpId::kLog1p, [](T x) { return std::log1p(x); }, 4, -1.5, 100);
  expect_unary<T>(
      OpId::kTanh, [](T x) { return std::tanh(x); }, 4, -12, 12);
  expect_unary<T>(
      OpId::kErf, [](T x) { return std::erf(static_cast<double>(x)); }, 4, -6, 6);
  expect_unary<T>(
      OpId::kSin, [](T x) { return std::sin(static_cast<double>(x)); }, 4, -100, 100);
  expect_unary<T>(
      OpId::kCos, [](T x) { return std::cos(static_cast<double>(x)); }, 4, -100, 100);
  expect_unary<T>(
      OpId::kSigmoid, [](T x) { return 1 / (1 + std::exp(-static_cast<double>(x))); }, 4, -120,
      120);
}

TEST(ElementwiseKernelTest, RoundsHalfToEven) {
  const HostTensor in = HostTensor::make<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f});
  EXPECT_THAT(run1(OpId::kRound, in).values<float>(), ElementsAre(0, 2, 2, -0.f, -2, -2));
}

TEST(ElementwiseKernelTest, SignKeepsNaNAndZeroSign) {
  const HostTensor in = HostTensor::make<double>({3}, {NAN, -0.0, 0.0});
  const std::vector<double> out = run1(OpId::kSign, in).values<double>();
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::signbit(out[1]));
  EXPECT_FALSE(std::signbit(out[2]));
}

TEST(ElementwiseKernelTest, LogOfSubnormalAndSigmoidTails) {
  const float sub = std::numeric_limits<float>::denorm_min();
  const HostTensor in = HostTensor::make<float>({2}, {sub, 0.f});
  EXPECT_THAT(run1(OpId::kLog, in).values<float>(), ElementsAre(std::log(sub), -INFINITY));
  const HostTensor s = HostTensor::make<float>({3}, {-100.f, 100.f, -INFINITY});
  const std::vector<float> sig = run1(OpId::kSigmoid, s).values<float>();
  EXPECT_NEAR(sig[0], 3.72e-44f, 1e-45f);  // a subnormal result keeps its digits
  EXPECT_EQ(sig[1], 1.f);
  EXPECT_EQ(sig[2], 0.f);
}

template <typename T>
class NumericElementwiseTest : public ::testing::Test {};
TYPED_TEST_SUITE(NumericElementwiseTest, testutil::NumericTypes);

TYPED_TEST(NumericElementwiseTest, UnaryOfEveryNumericDtype) {
  using T = TypeParam;
  const HostTensor in = HostTensor::make<T>({2, 3}, vec<T>({1, -2, 0, 3, -4, 5}));
  EXPECT_EQ(run1(OpId::kSquare, in).values<T>(), vec<T>({1, 4, 0, 9, 16, 25}));
  EXPECT_EQ(run1(OpId::kSign, in).values<T>(), vec<T>({1, -1, 0, 1, -1, 1}));
  EXPECT_EQ(run1(OpId::kRound, in).values<T>(), vec<T>({1, -2, 0, 3, -4, 5}));
  EXPECT_EQ(run1(OpId::kSquare, HostTensor::make<T>({0, 3}, {})).shape(), S({0, 3}));
}

TYPED_TEST(NumericElementwiseTest, BinaryOfEveryNumericDtype) {
  using T = TypeParam;
  const HostTensor a = HostTensor::make<T>({2, 3}, vec<T>({7, -7, 7, -7, 0, 3}));
  const HostTensor b = HostTensor::make<T>({3}, vec<T>({2, 2, -2}));
  EXPECT_EQ(run2(OpId::kMaximum, a, b).values<T>(), vec<T>({7, 2, 7, 2, 2, 3}));
  EXPECT_EQ(run2(OpId::kMinimum, a, b).values<T>(), vec<T>({2, -7, -2, -7, 0, -2}));
  EXPECT_EQ(run2(OpId::kSquaredDifference, a, b).values<T>(), vec<T>({25, 81, 81, 81, 4, 25}));
  EXPECT_EQ(run2(OpId::kFloorDiv, a, b).values<T>(), vec<T>({3, -4, -4, -4, 0, -2}));
  EXPECT_EQ(run2(OpId::kFloorMod, a, b).values<T>(), vec<T>({1, 1, -1, 1, 0, -1}));
  const HostTensor e = HostTensor::make<T>({2, 1}, vec<T>({2, 3}));
  EXPECT_EQ(run2(OpId::kPow, a, e).values<T>(), vec<T>({49, 49, 49, -343, 0, 27}));
  const HostTensor empty = HostTensor::make<T>({0, 3}, {});
  EXPECT_EQ(run2(OpId::kFloorDiv, empty, b).shape(), S({0, 3}));
}

// Python's floor division and modulo, in a wider type.
int64_t py_floordiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

TEST(ElementwiseKernelTest, IntegerFloorDivAndModMatchPython) {
  std::vector<int32_t> a, b;
  for (int x = -9; x <= 9; ++x) {
    for (int y = -4; y <= 4; ++y) {
      if (y == 0) continue;
      a.push_back(x);
      b.push_back(y);
    }
  }
  const int64_t n = static_cast<int64_t>(a.size());
  const HostTensor ta = HostTensor::make<int32_t>({n}, a), tb = HostTensor::make<int32_t>({n}, b);
  const std::vector<int32_t> q = run2(OpId::kFloorDiv, ta, tb).values<int32_t>();
  const std::vector<int32_t> r = run2(OpId::kFloorMod, ta, tb).values<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(q[i], py_floordiv(a[i], b[i])) << a[i] << " // " << b[i];
    EXPECT_EQ(r[i], a[i] - py_floordiv(a[i], b[i]) * b[i]) << a[i] << " % " << b[i];
  }
}

TEST(ElementwiseKernelTest, LowestIntegerByMinusOneWraps) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const HostTensor a = HostTensor::make<int64_t>({1}, {kMin});
  const HostTensor b = HostTensor::make<int64_t>({1}, {-1});
  EXPECT_THAT(run2(OpId::kFloorDiv, a, b).values<int64_t>(), ElementsAre(kMin));
  EXPECT_THAT(run2(OpId::kFloorMod, a, b).values<int64_t>(), ElementsAre(0));
}

TEST(ElementwiseKernelTest, IntegerPowWrapsAndAcceptsZeroExponent) {
  const HostTensor a = HostTensor::make<int32_t>({4}, {2, -3, 0, 5});
  const HostTensor b = HostTensor::make<int32_t>({4}, {31, 3, 0, 0});
  EXPECT_THAT(run2(OpId::kPow, a, b).values<int32_t>(),
              ElementsAre(std::numeric_limits<int32_t>::min(), -27, 1, 1));
}

TEST(ElementwiseKernelTest, FloatFloorDivAndModFollowTensorFlow) {
  const HostTensor a = HostTensor::make<double>({5}, {7.5, -7.5, 1.0, 5.0, -0.0});
  const HostTensor b = HostTensor::make<double>({5}, {2.0, 2.0, 0.0, -3.0, 1.0});
  const std::vector<double> q = run2(OpId::kFloorDiv, a, b).values<double>();
  EXPECT_THAT(q, ElementsAre(3.0, -4.0, INFINITY, -2.0, -0.0));
  const std::vector<double> r = run2(OpId::kFloorMod, a, b).values<double>();
  EXPECT_EQ(r[0], 1.5);
  EXPECT_EQ(r[1], 0.5);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(r[3], -1.0);
}

// Within 1 ulp of std::pow: float32 Pow is vectorised (Note [Vectorised pow]; its own test,
// pow_float_test.cc, covers the ranges and special values).
TEST(ElementwiseKernelTest, FloatPowMatchesStd) {
  const std::vector<float> base = sample<float>(500, -4, 4, 3);
  const std::vector<float> expo = sample<float>(500, -3, 3, 4);
  const int64_t n = static_cast<int64_t>(base.size());
  const std::vector<float> got =
      run2(OpId::kPow, HostTensor::make<float>({n}, base), HostTensor::make<float>({n}, expo))
          .values<float>();
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_LE(ulps(got[i], std::pow(base[i], expo[i])), 1) << base[i] << " ** " << expo[i];
  }
}

TEST(ElementwiseKernelTest, MaximumAndMinimumPropagateNaN) {
  const HostTensor a = HostTensor::make<float>({3}, {NAN, 1.f, -INFINITY});
  const HostTensor b = HostTensor::make<float>({3}, {1.f, NAN, 2.f});
  const std::vector<float> mx = run2(OpId::kMaximum, a, b).values<float>();
  const std::vector<float> mn = run2(OpId::kMinimum, a, b).values<float>();
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]) && std::isnan(mn[0]) && std::isnan(mn[1]));
  EXPECT_EQ(mx[2], 2.f);
  EXPECT_EQ(mn[2], -INFINITY);
}

TEST(ElementwiseKernelTest, LogicalOpsOnBool) {
  const HostTensor a = HostTensor::make<bool>({2, 2}, {false, false, true, true});
  const HostTensor b = HostTensor::make<bool>({2, 2}, {false, true, false, true});
  EXPECT_THAT(run2(OpId::kLogicalAnd, a, b).values<bool>(), ElementsAre(false, false, false, true));
  EXPECT_THAT(run2(OpId::kLogicalOr, a, b).values<bool>(), ElementsAre(false, true, true, true));
  EXPECT_THAT(run1(OpId::kLogicalNot, a).values<bool>(), ElementsAre(true, true, false, false));
  const HostTensor column = HostTensor::make<bool>({2, 1}, {true, false});
  EXPECT_THAT(run2(OpId::kLogicalAnd, b, column).values<bool>(),
              ElementsAre(false, true, false, false));
}

TEST(ElementwiseKernelTest, BroadcastsAgainstReference) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> value(-50, 50);
  std::vector<int64_t> va(4 * 1 * 5), vb(3 * 1);
  for (auto& v : va) v = value(gen);
  for (auto& v : vb) v = value(gen) | 1;  // odd: never zero
  const HostTensor a = HostTensor::make<int64_t>({4, 1, 5}, va);
  const HostTensor b = HostTensor::make<int64_t>({3, 1}, vb);
  for (OpId op : {OpId::kFloorDiv, OpId::kFloorMod, OpId::kMaximum, OpId::kSquaredDifference}) {
    const HostTensor out = run2(op, a, b);
    ASSERT_EQ(out.shape(), S({4, 3, 5}));
    const std::vector<int64_t> got = out.values<int64_t>();
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) {
        for (int k = 0; k < 5; ++k) {
          const int64_t x = va[i * 5 + k], y = vb[j];
          const int64_t want = op == OpId::kFloorDiv   ? py_floordiv(x, y)
                               : op == OpId::kFloorMod ? x - py_floordiv(x, y) * y
                               : op == OpId::kMaximum  ? std::max(x, y)
                                                       : (x - y) * (x - y);
          EXPECT_EQ(got[(i * 3 + j) * 5 + k], want) << op_name(op);
        }
      }
    }
  }
}

// Note [Half loops]: each 2-byte result has the bits of the float32 kernel's result on the
// widened input, rounded once.
template <typename H>
void expect_half_matches_float(OpId op, bool binary) {
  std::vector<H> ha, hb;
  std::vector<float> fa, fb;
  for (float v : sample<float>(700, -6, 6, 5)) {
    ha.push_back(H(v));
    fa.push_back(static_cast<float>(H(v)));
  }
  for (float v : sample<float>(700, 0.5, 3, 6)) {
    hb.push_back(H(v));
    fb.push_back(static_cast<float>(H(v)));
  }
  const int64_t n = static_cast<int64_t>(ha.size());
  const HostTensor h_out =
      binary ? run2(op, HostTensor::make<H>({n}, ha), HostTensor::make<H>({n}, hb))
             : run1(op, HostTensor::make<H>({n}, ha));
  const HostTensor f_out =
      binary ? run2(op, HostTensor::make<float>({n}, fa), HostTensor::make<float>({n}, fb))
             : run1(op, HostTensor::make<float>({n}, fa));
  const std::vector<H> got = h_out.values<H>();
  const std::vector<float> want = f_out.values<float>();
  for (int64_t i = 0; i < n; ++i) {
    const H w(want[i]);
    EXPECT_TRUE(got[i].bits == w.bits ||
                (std::isnan(want[i]) && std::isnan(static_cast<float>(got[i]))))
        << op_name(op) << " " << static_cast<float>(got[i]) << " vs " << want[i];
  }
}

template <typename H>
class HalfElementwiseTest : public ::testing::Test {};
using HalfTypes = ::testing::Types<bfloat16, float16>;
TYPED_TEST_SUITE(HalfElementwiseTest, HalfTypes);

TYPED_TEST(HalfElementwiseTest, MatchesFloat32RoundedOnce) {
  for (OpId op : {OpId::kSqrt, OpId::kRsqrt, OpId::kSquare, OpId::kLog, OpId::kLog1p, OpId::kTanh,
                  OpId::kSigmoid, OpId::kSign, OpId::kFloor, OpId::kRound}) {
    expect_half_matches_float<TypeParam>(op, false);
  }
  for (OpId op : {OpId::kPow, OpId::kMaximum, OpId::kMinimum, OpId::kSquaredDifference,
                  OpId::kFloorDiv, OpId::kFloorMod}) {
    expect_half_matches_float<TypeParam>(op, true);
  }
}

// Note [Integer division by zero] in kernels/cpu/binary_kernels.cc.
TEST(ElementwiseKernelTest, IntegerDivisionByZeroIsInvalidArgument) {
  const HostTensor a = HostTensor::make<int32_t>({2}, {1, 2});
  const HostTensor b = HostTensor::make<int32_t>({2}, {1, 0});
  for (OpId op : {OpId::kFloorDiv, OpId::kFloorMod}) {
    absl::StatusOr<HostTensor> out = run_cpu(op, {a, b});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(out.status().message(), absl::StrCat("[", op_name(op), "] Integer division by zero"));
  }
  const HostTensor empty = HostTensor::make<int32_t>({0, 2}, {});
  EXPECT_TRUE(run_cpu(OpId::kFloorDiv, {empty, b}).ok());  // nothing is divided
}

TEST(ElementwiseKernelTest, IntegerToNegativePowerIsInvalidArgument) {
  const HostTensor a = HostTensor::make<int64_t>({2}, {2, 2});
  const HostTensor b = HostTensor::make<int64_t>({2}, {1, -1});
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kPow, {a, b});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "[Pow] Integers to negative integer powers are not allowed");
}

TEST(ElementwiseKernelTest, RejectsUnsupportedDtypes) {
  const HostTensor i = HostTensor::make<int32_t>({1}, {4});
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kSqrt, {i});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("[Sqrt] dtype int32 is not supported"));
  const HostTensor f = HostTensor::make<float>({1}, {1.f});
  out = run_cpu(OpId::kLogicalAnd, {f, f});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "[LogicalAnd] dtype float32 is not supported; expected one of bool");
}

}  // namespace
}  // namespace mt
