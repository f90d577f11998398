// CPU kernels of LayerNorm, AddLayerNorm and LayerNormGrad against a double reference of Note
// [Layer normalisation] (kernels/layer_norm_shape.cc) on every float dtype, over one and several
// trailing axes; the gradient against central differences of the reference; the shape
// function's errors.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/layer_norm.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::as_doubles;
using testutil::expect_invalid;
using testutil::run_cpu_all;

constexpr DType kFloats[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16};

// Returns `v` in `dtype` (rounded through float32 for the 2-byte floats).
HostTensor host_of(const Shape& shape, const std::vector<double>& v, DType dtype) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> t;
    for (double e : v) t.push_back(static_cast<T>(static_cast<float>(e)));
    if constexpr (std::is_same_v<T, double>) t.assign(v.begin(), v.end());
    return HostTensor::make<T>(shape, t);
  });
}

// Random values of `n` elements that `dtype` holds exactly.
std::vector<double> random_values(std::mt19937_64& rng, int64_t n, DType dtype, double lo,
                                  double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& e : v) e = dist(rng);
  return as_doubles(host_of(S({n}), v, dtype));
}

struct LnRef {
  std::vector<double> y, mean, inv_std;
};

// The reference forward over rows of `cols` elements.
LnRef ln_ref(const std::vector<double>& x, int64_t cols, const std::vector<double>& gamma,
             const std::vector<double>& beta, double epsilon) {
  const int64_t rows = static_cast<int64_t>(x.size()) / cols;
  LnRef r{x, {}, {}};
  for (int64_t i = 0; i < rows; ++i) {
    double sum = 0, sq = 0;
    for (int64_t j = 0; j < cols; ++j) sum += x[i * cols + j];
    const double m = sum / cols;
    for (int64_t j = 0; j < cols; ++j) sq += (x[i * cols + j] - m) * (x[i * cols + j] - m);
    const double inv = 1 / std::sqrt(sq / cols + epsilon);
    r.mean.push_back(m), r.inv_std.push_back(inv);
    for (int64_t j = 0; j < cols; ++j) {
      r.y[i * cols + j] = (x[i * cols + j] - m) * inv * gamma[j] + beta[j];
    }
  }
  return r;
}

// The reference gradient (Note [Layer normalisation]): dx, dgamma, dbeta.
struct LnGradRef {
  std::vector<double> dx, dgamma, dbeta;
};
LnGradRef ln_grad_ref(const std::vector<double>& dy, const std::vector<double>& x, int64_t cols,
                      const std::vector<double>& gamma, double epsilon) {
  const LnRef f = ln_ref(x, cols, gamma, std::vector<double>(cols), epsilon);
  LnGradRef r{x, std::vector<double>(cols), std::vector<double>(cols)};
  for (size_t i = 0; i < f.mean.size(); ++i) {
    double sg = 0, sgx = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t k = i * cols + j;
      const double xhat = (x[k] - f.mean[i]) * f.inv_std[i], g = dy[k] * gamma[j];
      sg += g, sgx += g * xhat;
      r.dgamma[j] += dy[k] * xhat, r.dbeta[j] += dy[k];
    }
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t k = i * cols + j;
      const double xhat = (x[k] - f.mean[i]) * f.inv_std[i];
      r.dx[k] = f.inv_std[i] * (dy[k] * gamma[j] - sg / cols - xhat * sgx / cols);
    }
  }
  return r;
}

OpAttrs ln_attrs(int64_t axis, double epsilon) {
  OpAttrs attrs;
  attrs.axis = axis;
  attrs.epsilon = epsilon;
  return attrs;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " element " << i;
  }
}

// The largest relative error of y or dx: one rounding to the dtype, after float32 (double)
// arithmetic.
double tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return 1e-12;
    case DType::kBFloat16:
      return 1.6e-2;
    case DType::kFloat16:
      return 2e-3;
    default:
      return 5e-6;
  }
}

// Shape `dims` normalised from `axis`: y, mean and inv_std against the reference.
void check_forward(const Shape& shape, int64_t axis, double epsilon) {
  std::mt19937_64 rng(11);
  const internal::LayerNormLayout l = internal::layer_norm_layout(shape, axis);
  const int begin = internal::layer_norm_begin_axis(shape.rank(), axis);
  std::vector<int64_t> lead, norm;
  for (int i = 0; i < shape.rank(); ++i) (i < begin ? lead : norm).push_back(shape.dim(i));
  for (DType dtype : kFloats) {
    SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", shape.to_string(), " axis ", axis));
    const DType u = internal::layer_norm_stats_dtype(dtype);
    const std::vector<double> x = random_values(rng, l.rows * l.cols, dtype, -3, 5);
    const std::vector<double> gamma = random_values(rng, l.cols, u, -2, 2);
    const std::vector<double> beta = random_values(rng, l.cols, u, -1, 1);
    const Shape params = Shape::make(norm).value(), stats = Shape::make(lead).value();
    const absl::StatusOr<std::vector<HostTensor>> out =
        run_cpu_all(OpId::kLayerNorm,
                    {host_of(shape, x, dtype), host_of(params, gamma, u), host_of(params, beta, u)},
                    ln_attrs(axis, epsilon));
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 3u);
    EXPECT_EQ((*out)[0].shape(), shape);
    EXPECT_EQ((*out)[1].shape(), stats);
    EXPECT_EQ((*out)[1].dtype(), u);
    const LnRef want = ln_ref(x, l.cols, gamma, beta, epsilon);
    const double stat_tol = u == DType::kFloat64 ? 1e-12 : 1e-6;
    // y's error grows with |xhat * gamma| (x - mean rounded to float32 first).
    expect_close(as_doubles((*out)[0]), want.y, 4 * tolerance(dtype), "y");
    expect_close(as_doubles((*out)[1]), want.mean, stat_tol, "mean");
    expect_close(as_doubles((*out)[2]), want.inv_std, stat_tol, "inv_std");
  }
}

TEST(LayerNormKernelTest, MatchesTheReferenceOverTheLastAxis) {
  check_forward(S({3, 5}), -1, 1e-3);
}

TEST(LayerNormKernelTest, MatchesTheReferenceOverTrailingAxes) {
  check_forward(S({2, 3, 4}), -2, 1e-5);
  check_forward(S({2, 3, 4}), 1, 1e-5);  // the same axis from the front
  check_forward(S({6}), 0, 1e-3);        // one row: the statistics are scalars
}

TEST(LayerNormKernelTest, ManyRowsAndLongRowsSplitAcrossThreads) {
  check_forward(S({300, 37}), -1, 1e-3);
  check_forward(S({5, 3000}), -1, 1e-3);
}

TEST(LayerNormKernelTest, RowOfOneElementGivesBeta) {
  const absl::StatusOr<std::vector<HostTensor>> out =
      run_cpu_all(OpId::kLayerNorm,
                  {HostTensor::make<float>({2, 1}, {3.0f, -7.0f}),
                   HostTensor::make<float>({1}, {2.0f}), HostTensor::make<float>({1}, {0.5f})},
                  ln_attrs(-1, 1e-3));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].values<float>(), (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ((*out)[1].values<float>(), (std::vector<float>{3.0f, -7.0f}));
  EXPECT_NEAR((*out)[2].values<float>()[0], 1 / std::sqrt(1e-3), 1e-3);
}

TEST(LayerNormKernelTest, ZeroEpsilonOnAConstantRowIsNaNAsTheFormula) {
  const absl::StatusOr<std::vector<HostTensor>> out = run_cpu_all(
      OpId::kLayerNorm,
      {HostTensor::make<float>({1, 2}, {1.0f, 1.0f}), HostTensor::make<float>({2}, {1.0f, 1.0f}),
       HostTensor::make<float>({2}, {0.0f, 0.0f})},
      ln_attrs(-1, 0));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isinf((*out)[2].values<float>()[0]));
  EXPECT_TRUE(std::isnan((*out)[0].values<float>()[0]));  // 0 * inf
}

TEST(LayerNormKernelTest, NoRowsGiveEmptyOutputs) {
  const absl::StatusOr<std::vector<HostTensor>> out =
      run_cpu_all(OpId::kLayerNorm,
                  {HostTensor::make<float>({0, 3}, {}), HostTensor::make<float>({3}, {1, 1, 1}),
                   HostTensor::make<float>({3}, {0, 0, 0})},
                  ln_attrs(-1, 1e-3));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].shape(), S({0}));
  // LayerNormGrad: dgamma and dbeta of no rows are zeros.
  const absl::StatusOr<std::vector<HostTensor>> grad =
      run_cpu_all(OpId::kLayerNormGrad,
                  {HostTensor::make<float>({0, 3}, {}), HostTensor::make<float>({0, 3}, {}),
                   HostTensor::make<float>({3}, {1, 1, 1}), HostTensor::make<float>({0}, {}),
                   HostTensor::make<float>({0}, {})},
                  ln_attrs(-1, 1e-3));
  ASSERT_TRUE(grad.ok()) << grad.status();
  EXPECT_EQ((*grad)[1].values<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ((*grad)[2].values<float>(), (std::vector<float>{0, 0, 0}));
}

// AddLayerNorm is AddV2 then LayerNorm, bit for bit, in every dtype; sum is the add.
TEST(AddLayerNormKernelTest, EqualsTheAddThenLayerNorm) {
  std::mt19937_64 rng(13);
  for (const Shape& shape : {S({3, 5}), S({40, 37}), S({2, 3000})}) {
    const internal::LayerNormLayout l = internal::layer_norm_layout(shape, -1);
    for (DType dtype : kFloats) {
      SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", shape.to_string()));
      const DType u = internal::layer_norm_stats_dtype(dtype);
      const HostTensor x = host_of(shape, random_values(rng, l.rows * l.cols, dtype, -3, 3), dtype);
      const HostTensor r = host_of(shape, random_values(rng, l.rows * l.cols, dtype, -1, 1), dtype);
      const HostTensor gamma = host_of(S({l.cols}), random_values(rng, l.cols, u, -2, 2), u);
      const HostTensor beta = host_of(S({l.cols}), random_values(rng, l.cols, u, -1, 1), u);
      const OpAttrs attrs = ln_attrs(-1, 1e-3);
      const absl::StatusOr<std::vector<HostTensor>> fused =
          run_cpu_all(OpId::kAddLayerNorm, {x, r, gamma, beta}, attrs);
      ASSERT_TRUE(fused.ok()) << fused.status();
      ASSERT_EQ(fused->size(), 4u);
      const absl::StatusOr<HostTensor> sum = run_cpu(OpId::kAddV2, {x, r});
      ASSERT_TRUE(sum.ok()) << sum.status();
      const absl::StatusOr<std::vector<HostTensor>> norm =
          run_cpu_all(OpId::kLayerNorm, {*sum, gamma, beta}, attrs);
      ASSERT_TRUE(norm.ok()) << norm.status();
      EXPECT_EQ(as_doubles((*fused)[1]), as_doubles(*sum));
      EXPECT_EQ(as_doubles((*fused)[0]), as_doubles((*norm)[0]));
      EXPECT_EQ(as_doubles((*fused)[2]), as_doubles((*norm)[1]));
      EXPECT_EQ(as_doubles((*fused)[3]), as_doubles((*norm)[2]));
    }
  }
}

// sum(y * w) of the reference, for the central differences.
double weighted_loss(const std::vector<double>& x, int64_t cols, const std::vector<double>& gamma,
                     const std::vector<double>& beta, const std::vector<double>& w) {
  const LnRef r = ln_ref(x, cols, gamma, beta, 1e-3);
  double loss = 0;
  for (size_t i = 0; i < w.size(); ++i) loss += r.y[i] * w[i];
  return loss;
}

// The float64 kernel against central differences; `dims` normalised from `axis`.
void check_gradient(const Shape& shape, int64_t axis) {
  std::mt19937_64 rng(5);
  const internal::LayerNormLayout l = internal::layer_norm_layout(shape, axis);
  const int64_t n = l.rows * l.cols;
  std::vector<double> x = random_values(rng, n, DType::kFloat64, -2, 2);
  const std::vector<double> w = random_values(rng, n, DType::kFloat64, -1, 1);
  std::vector<double> gamma = random_values(rng, l.cols, DType::kFloat64, -2, 2);
  std::vector<double> beta = random_values(rng, l.cols, DType::kFloat64, -1, 1);
  const LnRef fwd = ln_ref(x, l.cols, gamma, beta, 1e-3);
  const Shape params = S({l.cols}), stats = S({l.rows});
  std::vector<int64_t> param_dims, stat_dims;
  const int begin = internal::layer_norm_begin_axis(shape.rank(), axis);
  for (int i = 0; i < shape.rank(); ++i)
    (i < begin ? stat_dims : param_dims).push_back(shape.dim(i));
  const absl::StatusOr<std::vector<HostTensor>> out =
      run_cpu_all(OpId::kLayerNormGrad,
                  {host_of(shape, w, DType::kFloat64), host_of(shape, x, DType::kFloat64),
                   host_of(Shape::make(param_dims).value(), gamma, DType::kFloat64),
                   host_of(Shape::make(stat_dims).value(), fwd.mean, DType::kFloat64),
                   host_of(Shape::make(stat_dims).value(), fwd.inv_std, DType::kFloat64)},
                  ln_attrs(axis, 1e-3));
  ASSERT_TRUE(out.ok()) << out.status();
  const double h = 1e-6;
  auto diff = [&](std::vector<double>* v, size_t i) {
    const double keep = (*v)[i];
    (*v)[i] = keep + h;
    const double up = weighted_loss(x, l.cols, gamma, beta, w);
    (*v)[i] = keep - h;
    const double down = weighted_loss(x, l.cols, gamma, beta, w);
    (*v)[i] = keep;
    return (up - down) / (2 * h);
  };
  std::vector<double> dx(n), dgamma(l.cols), dbeta(l.cols);
  for (int64_t i = 0; i < n; ++i) dx[i] = diff(&x, i);
  for (int64_t j = 0; j < l.cols; ++j) dgamma[j] = diff(&gamma, j), dbeta[j] = diff(&beta, j);
  expect_close(as_doubles((*out)[0]), dx, 1e-7, "dx");
  expect_close(as_doubles((*out)[1]), dgamma, 1e-7, "dgamma");
  expect_close(as_doubles((*out)[2]), dbeta, 1e-7, "dbeta");
}

TEST(LayerNormGradKernelTest, MatchesCentralDifferences) {
  check_gradient(S({3, 5}), -1);
  check_gradient(S({2, 3, 2}), -2);
  check_gradient(S({4, 1}), -1);  // a row of one element: dx is zero
}

// Every dtype against the reference formula, over many rows (dgamma's blocks) and long ones.
TEST(LayerNormGradKernelTest, MatchesTheReferenceInEveryDtype) {
  std::mt19937_64 rng(9);
  for (const Shape& shape : {S({3, 5}), S({300, 37}), S({3, 2000})}) {
    const internal::LayerNormLayout l = internal::layer_norm_layout(shape, -1);
    for (DType dtype : kFloats) {
      SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", shape.to_string()));
      const DType u = internal::layer_norm_stats_dtype(dtype);
      const std::vector<double> x = random_values(rng, l.rows * l.cols, dtype, -3, 3);
      const std::vector<double> dy = random_values(rng, l.rows * l.cols, dtype, -1, 1);
      const std::vector<double> gamma = random_values(rng, l.cols, u, -2, 2);
      const LnRef f = ln_ref(x, l.cols, gamma, std::vector<double>(l.cols), 1e-3);
      // The statistics as the forward kernel hands them over, in u.
      const HostTensor mean = host_of(S({l.rows}), f.mean, u);
      const HostTensor inv = host_of(S({l.rows}), f.inv_std, u);
      const absl::StatusOr<std::vector<HostTensor>> out =
          run_cpu_all(OpId::kLayerNormGrad,
                      {host_of(shape, dy, dtype), host_of(shape, x, dtype),
                       host_of(S({l.cols}), gamma, u), mean, inv},
                      ln_attrs(-1, 1e-3));
      ASSERT_TRUE(out.ok()) << out.status();
      const LnGradRef want = ln_grad_ref(dy, x, l.cols, gamma, 1e-3);
      const double tol = dtype == DType::kFloat64 ? 1e-11 : 8 * tolerance(dtype);
      expect_close(as_doubles((*out)[0]), want.dx, tol, "dx");
      // Sums over rows: relative to the sum of magnitudes (at most rows), float32 arithmetic.
      const double sum_tol = (u == DType::kFloat64 ? 1e-11 : 1e-5) * l.rows;
      expect_close(as_doubles((*out)[1]), want.dgamma, sum_tol, "dgamma");
      expect_close(as_doubles((*out)[2]), want.dbeta, sum_tol, "dbeta");
    }
  }
}

// The metas of a LayerNorm call: x, then gamma and beta of `params` and `dtype`.
absl::StatusOr<OutputMeta> infer_ln(const Shape& x, DType x_dtype, const Shape& params, DType dtype,
                                    OpAttrs attrs) {
  static std::vector<Shape>* shapes = new std::vector<Shape>(2);
  (*shapes)[0] = x, (*shapes)[1] = params;
  const TensorMeta in[] = {
      {&(*shapes)[0], x_dtype}, {&(*shapes)[1], dtype}, {&(*shapes)[1], DType::kFloat32}};
  return infer_output(OpId::kLayerNorm, in, attrs);
}

TEST(LayerNormShapeTest, RejectsBadShapesDtypesAxesAndEpsilon) {
  const OpAttrs attrs = ln_attrs(-1, 1e-3);
  constexpr DType f32 = DType::kFloat32;
  EXPECT_TRUE(infer_ln(S({2, 3}), f32, S({3}), f32, attrs).ok());
  EXPECT_TRUE(infer_ln(S({2, 3}), DType::kBFloat16, S({3}), f32, attrs).ok());
  expect_invalid(
      infer_ln(S({2, 3}), f32, S({4}), f32, attrs),
      "[LayerNorm] gamma must have the shape of the normalised axes of x, (3,), got (4,)");
  expect_invalid(infer_ln(S({2, 3}), f32, S({2, 3}), f32, attrs),
                 "[LayerNorm] gamma must have the shape of the normalised axes of x, (3,), got "
                 "(2, 3)");
  expect_invalid(infer_ln(S({2, 3}), DType::kFloat16, S({3}), DType::kFloat16, attrs),
                 "[LayerNorm] gamma must be float32 for x of this dtype, got float16");
  expect_invalid(infer_ln(S({2, 3}), DType::kInt32, S({3}), f32, attrs),
                 "[LayerNorm] dtype int32 is not supported; expected one of float32, float64, "
                 "bfloat16, float16");
  expect_invalid(infer_ln(S({}), f32, S({}), f32, attrs),
                 "[LayerNorm] x must have >= 1 dimension, got shape ()");
  expect_invalid(infer_ln(S({2, 3}), f32, S({3}), f32, ln_attrs(2, 1e-3)),
                 "[LayerNorm] axis 2 is out of range for x of shape (2, 3) (rank 2)");
  expect_invalid(infer_ln(S({2, 3}), f32, S({3}), f32, ln_attrs(-3, 1e-3)),
                 "[LayerNorm] axis -3 is out of range for x of shape (2, 3) (rank 2)");
  expect_invalid(infer_ln(S({2, 0}), f32, S({0}), f32, attrs),
                 "[LayerNorm] the normalised axes of x must have elements, got shape (2, 0) with "
                 "axis -1");
  expect_invalid(infer_ln(S({2, 3}), f32, S({3}), f32, ln_attrs(-1, -1e-3)),
                 "[LayerNorm] epsilon must be a finite number >= 0, got -0.001");
  expect_invalid(
      infer_ln(S({2, 3}), f32, S({3}), f32, ln_attrs(-1, std::numeric_limits<double>::quiet_NaN())),
      "[LayerNorm] epsilon must be a finite number >= 0, got nan");
}

TEST(LayerNormShapeTest, AddLayerNormRejectsAResidualOfAnotherShapeOrDtype) {
  const Shape x = S({2, 3}), other = S({3, 2}), params = S({3});
  auto infer = [&](const Shape& residual, DType dtype) {
    const TensorMeta in[] = {{&x, DType::kFloat32},
                             {&residual, dtype},
                             {&params, DType::kFloat32},
                             {&params, DType::kFloat32}};
    return infer_output(OpId::kAddLayerNorm, in, ln_attrs(-1, 1e-3));
  };
  EXPECT_TRUE(infer(x, DType::kFloat32).ok());
  expect_invalid(infer(other, DType::kFloat32),
                 "[AddLayerNorm] x and residual must have the same shape, got (2, 3) and (3, 2)");
  expect_invalid(infer(x, DType::kFloat64), "[AddLayerNorm] dtypes differ: float32 vs float64");
}

TEST(LayerNormShapeTest, GradRejectsMismatchedInputs) {
  const Shape x = S({2, 3}), params = S({3}), stats = S({2}), bad = S({3});
  auto infer = [&](const Shape& dy, DType dy_dtype, const Shape& mean) {
    const TensorMeta in[] = {{&dy, dy_dtype},
                             {&x, DType::kFloat32},
                             {&params, DType::kFloat32},
                             {&mean, DType::kFloat32},
                             {&stats, DType::kFloat32}};
    return infer_output(OpId::kLayerNormGrad, in, ln_attrs(-1, 1e-3));
  };
  EXPECT_TRUE(infer(x, DType::kFloat32, stats).ok());
  expect_invalid(infer(S({3, 2}), DType::kFloat32, stats),
                 "[LayerNormGrad] x and dy must have the same shape, got (2, 3) and (3, 2)");
  expect_invalid(infer(x, DType::kFloat64, stats),
                 "[LayerNormGrad] dtypes differ: float64 vs float32");
  expect_invalid(
      infer(x, DType::kFloat32, bad),
      "[LayerNormGrad] mean must have the shape of the leading axes of x, (2,), got (3,)");
}

}  // namespace
}  // namespace mt
