// CPU kernels of FusedBatchNormV3 and FusedBatchNormGradV3 against a double reference of
// Note [Batch normalisation] (kernels/batch_norm_shape.cc), training and inference, NHWC
// and NCHW, on every float dtype; the gradient against central differences of the
// reference; the shape function's errors.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/batch_norm.h"
#include "tests/kernels/conv_reference.h"

namespace mt::conv_test {
namespace {

using testutil::as_doubles;
using testutil::run_cpu_all;

// Per-channel vectors and the attributes of one call.
struct BnCall {
  std::vector<double> scale, offset, mean, var;
  double epsilon = 0.001, factor = 1;
  bool training = true;
};

struct BnRef {
  Array4 y;
  std::vector<double> batch_mean, batch_var, saved_mean, saved_var;
};

// The reference: the batch's statistics over N, H, W in double, then y.
BnRef bn_ref(const Array4& x, const BnCall& call) {
  const int64_t c_n = x.d[3], n = x.d[0] * x.d[1] * x.d[2];
  BnRef r{x, call.mean, call.var, call.mean, call.var};
  if (call.training) {
    for (int64_t c = 0; c < c_n; ++c) {
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < n; ++i) sum += x.v[i * c_n + c];
      const double m = sum / n;
      for (int64_t i = 0; i < n; ++i) sq += (x.v[i * c_n + c] - m) * (x.v[i * c_n + c] - m);
      const double v = sq / n, unbiased = n > 1 ? sq / (n - 1) : v;
      const double f = call.factor;
      r.saved_mean[c] = m, r.saved_var[c] = v;
      r.batch_mean[c] = f == 1 ? m : (1 - f) * call.mean[c] + f * m;
      r.batch_var[c] = f == 1 ? unbiased : (1 - f) * call.var[c] + f * unbiased;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < c_n; ++c) {
      const double m = r.saved_mean[c], v = r.saved_var[c];
      r.y.v[i * c_n + c] =
          (x.v[i * c_n + c] - m) / std::sqrt(v + call.epsilon) * call.scale[c] + call.offset[c];
    }
  }
  return r;
}

DType stats_dtype(DType x) { return internal::batch_norm_stats_dtype(x); }

HostTensor vector_tensor(const std::vector<double>& v, DType dtype) {
  const Shape shape = S({static_cast<int64_t>(v.size())});
  if (dtype == DType::kFloat64) return HostTensor::make<double>(shape, v);
  return HostTensor::make<float>(shape, std::vector<float>(v.begin(), v.end()));
}

OpAttrs bn_attrs(const BnCall& call, bool nchw) {
  OpAttrs attrs;
  attrs.epsilon = call.epsilon;
  attrs.exponential_avg_factor = call.factor;
  attrs.is_training = call.training;
  attrs.channels_first = nchw;
  return attrs;
}

std::vector<double> random_vector(std::mt19937_64& rng, int64_t n, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& e : v) e = static_cast<float>(dist(rng));
  return v;
}

BnCall random_call(std::mt19937_64& rng, int64_t channels, bool training, double factor) {
  BnCall call;
  call.scale = random_vector(rng, channels, -2, 2);
  call.offset = random_vector(rng, channels, -1, 1);
  call.mean = random_vector(rng, channels, -0.5, 0.5);
  call.var = random_vector(rng, channels, 0.5, 1.5);
  call.training = training;
  call.factor = factor;
  return call;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " element " << i;
  }
}

// The largest relative error each dtype's y may have: the statistics in double, the
// normalisation in the statistics' dtype, one rounding to x's.
double y_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return 1e-12;
    case DType::kBFloat16:
      return 1.6e-2;
    case DType::kFloat16:
      return 2e-3;
    default:
      return 2e-6;
  }
}

void check_forward(const std::vector<int64_t>& dims, bool training, double factor) {
  std::mt19937_64 rng(7);
  for (DType dtype : kFloatDTypeList) {
    for (bool nchw : {false, true}) {
      SCOPED_TRACE(absl::StrCat(dtype_name(dtype), nchw ? " NCHW" : " NHWC",
                                training ? " training" : " inference", " factor ", factor));
      const Array4 x = random_array(rng, dims, dtype);
      const BnCall call = random_call(rng, dims[3], training, factor);
      const DType u = stats_dtype(dtype);
      const absl::StatusOr<std::vector<HostTensor>> out = run_cpu_all(
          OpId::kFusedBatchNormV3,
          {tensor_of(x, dtype, nchw), vector_tensor(call.scale, u), vector_tensor(call.offset, u),
           vector_tensor(call.mean, u), vector_tensor(call.var, u)},
          bn_attrs(call, nchw));
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->size(), 5u);
      const BnRef want = bn_ref(x, call);
      const double stat_tol = u == DType::kFloat64 ? 1e-13 : 1e-6;
      expect_close(array_of((*out)[0], nchw).v, want.y.v, y_tolerance(dtype), "y");
      expect_close(as_doubles((*out)[1]), want.batch_mean, stat_tol, "batch_mean");
      expect_close(as_doubles((*out)[2]), want.batch_var, stat_tol, "batch_variance");
      expect_close(as_doubles((*out)[3]), want.saved_mean, stat_tol, "reserve_space_1");
      expect_close(as_doubles((*out)[4]), want.saved_var, stat_tol, "reserve_space_2");
    }
  }
}

TEST(FusedBatchNormKernelTest, TrainingMatchesTheReferenceInBothLayouts) {
  check_forward({2, 3, 5, 4}, true, 1);
}

TEST(FusedBatchNormKernelTest, TrainingBlendsTheRunningStatisticsWithTheFactor) {
  check_forward({3, 4, 2, 3}, true, 0.3);
}

TEST(FusedBatchNormKernelTest, InferenceUsesTheGivenStatistics) {
  check_forward({2, 3, 5, 4}, false, 0.3);
}

TEST(FusedBatchNormKernelTest, ManyBlocksSumAsOne) {
  // Outer rows span many blocks (and threads): the sums must still match the reference.
  check_forward({4, 37, 29, 3}, true, 1);
}

TEST(FusedBatchNormKernelTest, OneElementPerChannelHasZeroVariance) {
  const BnCall call{{2.0}, {0.5}, {}, {}};
  const absl::StatusOr<std::vector<HostTensor>> out = run_cpu_all(
      OpId::kFusedBatchNormV3,
      {HostTensor::make<float>({1, 1, 1, 1}, {3.0f}), vector_tensor(call.scale, DType::kFloat32),
       vector_tensor(call.offset, DType::kFloat32), vector_tensor({}, DType::kFloat32),
       vector_tensor({}, DType::kFloat32)},
      bn_attrs(call, false));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].values<float>(), std::vector<float>{0.5f});
  EXPECT_EQ((*out)[1].values<float>(), std::vector<float>{3.0f});
  EXPECT_EQ((*out)[2].values<float>(), std::vector<float>{0.0f});
}

// sum(y * w) of the reference, for the central differences.
double weighted_loss(const Array4& x, const BnCall& call, const std::vector<double>& w) {
  const BnRef r = bn_ref(x, call);
  double loss = 0;
  for (size_t i = 0; i < w.size(); ++i) loss += r.y.v[i] * w[i];
  return loss;
}

void check_gradient(bool training) {
  std::mt19937_64 rng(3);
  const std::vector<int64_t> dims = {2, 3, 2, 3};
  for (bool nchw : {false, true}) {
    SCOPED_TRACE(absl::StrCat(nchw ? "NCHW" : "NHWC", training ? " training" : " inference"));
    const Array4 x = random_array(rng, dims, DType::kFloat64);
    const Array4 w = random_array(rng, dims, DType::kFloat64);
    BnCall call = random_call(rng, dims[3], training, 1);
    const BnRef fwd = bn_ref(x, call);
    const absl::StatusOr<std::vector<HostTensor>> out = run_cpu_all(
        OpId::kFusedBatchNormGradV3,
        {tensor_of(w, DType::kFloat64, nchw), tensor_of(x, DType::kFloat64, nchw),
         vector_tensor(call.scale, DType::kFloat64), vector_tensor(fwd.saved_mean, DType::kFloat64),
         vector_tensor(fwd.saved_var, DType::kFloat64)},
        bn_attrs(call, nchw));
    ASSERT_TRUE(out.ok()) << out.status();
    const double h = 1e-6;
    std::vector<double> dx(x.v.size()), dscale(dims[3]), doffset(dims[3]);
    for (size_t i = 0; i < x.v.size(); ++i) {
      Array4 plus = x, minus = x;
      plus.v[i] += h, minus.v[i] -= h;
      dx[i] = (weighted_loss(plus, call, w.v) - weighted_loss(minus, call, w.v)) / (2 * h);
    }
    for (int64_t c = 0; c < dims[3]; ++c) {
      for (std::vector<double>* param : {&call.scale, &call.offset}) {
        const double keep = (*param)[c];
        (*param)[c] = keep + h;
        const double up = weighted_loss(x, call, w.v);
        (*param)[c] = keep - h;
        const double down = weighted_loss(x, call, w.v);
        (*param)[c] = keep;
        (param == &call.scale ? dscale : doffset)[c] = (up - down) / (2 * h);
      }
    }
    expect_close(array_of((*out)[0], nchw).v, dx, 1e-7, "x_backprop");
    expect_close(as_doubles((*out)[1]), dscale, 1e-7, "scale_backprop");
    expect_close(as_doubles((*out)[2]), doffset, 1e-7, "offset_backprop");
  }
}

TEST(FusedBatchNormGradKernelTest, TrainingMatchesCentralDifferences) { check_gradient(true); }

TEST(FusedBatchNormGradKernelTest, InferenceMatchesCentralDifferences) { check_gradient(false); }

// Inference's x_backprop is dy * scale / sqrt(var + epsilon): an inf or NaN in x reaches
// only scale_backprop (TensorFlow 2.21: dx [0.9995004, 1.9997501], dscale [inf, nan]).
TEST(FusedBatchNormGradKernelTest, InferenceXBackpropDoesNotReadX) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  BnCall call{{1.0, 2.0}, {0.0, 0.0}, {0.0, 0.0}, {1.0, 4.0}};
  call.training = false;
  const absl::StatusOr<std::vector<HostTensor>> out = run_cpu_all(
      OpId::kFusedBatchNormGradV3,
      {HostTensor::make<float>({1, 1, 1, 2}, {1.0f, 2.0f}),
       HostTensor::make<float>({1, 1, 1, 2}, {inf, nan}),
       vector_tensor(call.scale, DType::kFloat32), vector_tensor(call.mean, DType::kFloat32),
       vector_tensor(call.var, DType::kFloat32)},
      bn_attrs(call, false));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> dx = (*out)[0].values<float>();
  EXPECT_NEAR(dx[0], 0.9995004f, 1e-6);
  EXPECT_NEAR(dx[1], 1.9997501f, 1e-6);
  const std::vector<float> dscale = (*out)[1].values<float>();
  EXPECT_EQ(dscale[0], inf);
  EXPECT_TRUE(std::isnan(dscale[1]));
  EXPECT_EQ((*out)[2].values<float>(), (std::vector<float>{1.0f, 2.0f}));
}

// The metas of a FusedBatchNormV3 call: x of `x`, scale and offset of `c` channels, mean
// and variance of `stats` elements.
absl::StatusOr<OutputMeta> infer_bn(const Shape& x, int64_t c, int64_t stats, OpAttrs attrs,
                                    DType scale_dtype = DType::kFloat32) {
  static std::vector<Shape>* shapes = new std::vector<Shape>(3);
  (*shapes)[0] = x, (*shapes)[1] = S({c}), (*shapes)[2] = S({stats});
  const TensorMeta in[] = {{&(*shapes)[0], DType::kFloat32},
                           {&(*shapes)[1], scale_dtype},
                           {&(*shapes)[1], DType::kFloat32},
                           {&(*shapes)[2], DType::kFloat32},
                           {&(*shapes)[2], DType::kFloat32}};
  return infer_output(OpId::kFusedBatchNormV3, in, attrs);
}

TEST(FusedBatchNormShapeTest, RejectsBadRanksSizesAndDtypes) {
  using testutil::expect_invalid;
  OpAttrs attrs;
  EXPECT_TRUE(infer_bn(S({2, 3, 4, 5}), 5, 5, attrs).ok());
  EXPECT_TRUE(infer_bn(S({2, 3, 4, 5}), 5, 0, attrs).ok());  // training, factor 1
  expect_invalid(infer_bn(S({3, 4, 5}), 5, 5, attrs),
                 "[FusedBatchNormV3] x must be 4-dimensional, got shape (3, 4, 5)");
  expect_invalid(infer_bn(S({2, 3, 4, 5}), 3, 5, attrs),
                 "[FusedBatchNormV3] scale must have the same number of elements as the "
                 "channels of x, got 3 and 5");
  expect_invalid(infer_bn(S({2, 3, 4, 5}), 5, 5, attrs, DType::kFloat16),
                 "[FusedBatchNormV3] scale must be float32, got float16");
  attrs.exponential_avg_factor = 0.5;
  expect_invalid(infer_bn(S({2, 3, 4, 5}), 5, 0, attrs),
                 "[FusedBatchNormV3] When exponential_avg_factor != 1, mean must have the same "
                 "number of elements as the channels of x, got 0 and 5");
  attrs.is_training = false;
  expect_invalid(infer_bn(S({2, 3, 4, 5}), 5, 0, attrs),
                 "[FusedBatchNormV3] When is_training=false, mean must have the same number of "
                 "elements as the channels of x, got 0 and 5");
  attrs.channels_first = true;
  expect_invalid(infer_bn(S({2, 3, 4, 5}), 5, 5, attrs),
                 "[FusedBatchNormV3] scale must have the same number of elements as the "
                 "channels of x, got 5 and 3");
}

}  // namespace
}  // namespace mt::conv_test
