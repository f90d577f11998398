// CPU kernels of Softmax and LogSoftmax: small rows by hand, random shapes (0-sized
// dimensions included) of every dtype against a double reference, non-finite rows, and the
// errors of the shape function.
#include <cmath>
#include <limits>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Returns softmax (or log_softmax) over the last axis of `x`, computed in double.
std::vector<double> reference(const std::vector<double>& x, int64_t cols, bool log) {
  std::vector<double> y(x.size());
  for (size_t r = 0; cols > 0 && r < x.size() / cols; ++r) {
    const double* in = &x[r * cols];
    double max = -kInf, sum = 0;
    for (int64_t c = 0; c < cols; ++c) max = std::max(max, in[c]);
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(in[c] - max);
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] = log ? in[c] - max - std::log(sum) : std::exp(in[c] - max) / sum;
    }
  }
  return y;
}

HostTensor from_doubles(const Shape& shape, DType dtype, const std::vector<double>& v) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> t;
    for (double x : v) t.push_back(static_cast<T>(static_cast<float>(x)));
    if constexpr (std::is_same_v<T, double>) {
      for (size_t i = 0; i < v.size(); ++i) t[i] = v[i];
    }
    return HostTensor::make<T>(shape, t);
  });
}

std::vector<double> run(OpId op, const HostTensor& x) {
  absl::StatusOr<HostTensor> out = run_cpu(op, {x});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ(out->shape(), x.shape());
  EXPECT_EQ(out->dtype(), x.dtype());
  return testutil::as_doubles(*out);
}

// The tolerance of one dtype: float32 and float64 a few ulp per term of the row sum; the
// 2-byte floats compute in float32 and round once (Note [Half kernels on the CPU]).
double tolerance(DType dtype, int64_t cols) {
  switch (dtype) {
    case DType::kFloat64:
      return 1e-15 * (8 + cols);
    case DType::kFloat32:
      return 1e-7 * (8 + cols);
    case DType::kBFloat16:
      return 1.0 / 128;
    default:
      return 1.0 / 1024;
  }
}

constexpr DType kFloatDTypeList[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                                     DType::kFloat16};

TEST(SoftmaxKernelTest, ComputesSmallRowsByHand) {
  const HostTensor x = HostTensor::make<float>({2, 3}, {1, 2, 3, 0, 0, 0});
  const std::vector<double> y = run(OpId::kSoftmax, x);
  const double e = std::exp(1.0), sum = 1 + e + e * e;
  const std::vector<double> want = {1 / sum, e / sum, e * e / sum, 1. / 3, 1. / 3, 1. / 3};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-7) << i;
  const std::vector<double> l = run(OpId::kLogSoftmax, x);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(l[i], std::log(want[i]), 1e-6) << i;
}

TEST(SoftmaxKernelTest, MatchesTheReferenceOnRandomShapesOfEveryDtype) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-5, 5);
  const Shape shapes[] = {S({1}),       S({9}),       S({0}),        S({0, 4}),
                          S({4, 0}),    S({3, 1}),    S({2, 3, 17}), S({33, 64}),
                          S({5, 1000}), S({2, 4096}), S({2, 0, 3})};
  for (OpId op : {OpId::kSoftmax, OpId::kLogSoftmax}) {
    for (DType dtype : kFloatDTypeList) {
      for (const Shape& shape : shapes) {
        SCOPED_TRACE(absl::StrCat(op_name(op), " ", dtype_name(dtype), " ", shape.to_string()));
        std::vector<double> v(shape.num_elements());
        for (double& x : v) x = dist(rng);
        const HostTensor x = from_doubles(shape, dtype, v);
        const int64_t cols = shape.dim(shape.rank() - 1);
        const std::vector<double> want =
            reference(testutil::as_doubles(x), cols, op == OpId::kLogSoftmax);
        const std::vector<double> got = run(op, x);
        ASSERT_EQ(got.size(), want.size());
        const double tol = tolerance(dtype, cols);
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << i;
        }
      }
    }
  }
}

TEST(SoftmaxKernelTest, LargeLogitsDoNotOverflow) {
  const HostTensor x = HostTensor::make<float>({1, 2}, {1000, 1000});
  EXPECT_THAT(run(OpId::kSoftmax, x), ElementsAre(0.5, 0.5));
  const HostTensor y = HostTensor::make<float>({1, 2}, {0, -1000});
  EXPECT_THAT(run(OpId::kLogSoftmax, y), ElementsAre(0, -1000));
}

// TensorFlow's CPU kernels: NaN or +Inf anywhere in a row, or a row of -Inf only, gives a
// row of NaN; a -Inf beside finite values gives 0 (log: -Inf).
TEST(SoftmaxKernelTest, NonFiniteRowsAsTensorFlow) {
  for (DType dtype : kFloatDTypeList) {
    SCOPED_TRACE(dtype_name(dtype));
    const HostTensor x =
        from_doubles(S({5, 2}), dtype, {kNaN, 1, kInf, 1, -kInf, -kInf, -kInf, 0, kInf, kInf});
    const std::vector<double> y = run(OpId::kSoftmax, x);
    for (int i : {0, 1, 2, 3, 4, 5, 8, 9}) EXPECT_TRUE(std::isnan(y[i])) << i;
    EXPECT_EQ(y[6], 0);
    EXPECT_EQ(y[7], 1);
    const std::vector<double> l = run(OpId::kLogSoftmax, x);
    for (int i : {0, 1, 2, 3, 4, 5, 8, 9}) EXPECT_TRUE(std::isnan(l[i])) << i;
    EXPECT_EQ(l[6], -kInf);
    EXPECT_EQ(l[7], 0);
  }
}

TEST(SoftmaxKernelTest, RejectsScalarsAndNonFloatingDtypes) {
  for (OpId op : {OpId::kSoftmax, OpId::kLogSoftmax}) {
    const std::string name = op_name(op);
    absl::StatusOr<HostTensor> scalar = run_cpu(op, {HostTensor::make<float>({}, {1})});
    ASSERT_FALSE(scalar.ok());
    EXPECT_EQ(scalar.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(scalar.status().message(),
              "[" + name + "] logits must have >= 1 dimension, got shape ()");
    absl::StatusOr<HostTensor> ints = run_cpu(op, {HostTensor::make<int32_t>({2}, {1, 2})});
    ASSERT_FALSE(ints.ok());
    EXPECT_EQ(ints.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(ints.status().message(),
              "[" + name +
                  "] dtype int32 is not supported; expected one of float32, float64, bfloat16, "
                  "float16");
  }
}

}  // namespace
}  // namespace mt
