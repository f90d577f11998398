// CPU kernels of MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad against the double reference
// of conv_reference.h, in NHWC and NCHW, with VALID, SAME and EXPLICIT padding, strides and
// odd sizes, on every float dtype; by hand: MaxPoolGrad's tie rule (a window's gradient goes
// to its first maximum in row-major order), a NaN, AvgPool's count without the padding, and
// empty batches and channels.
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/conv_reference.h"

namespace mt::conv_test {
namespace {

struct PoolCase {
  const char* name;
  std::vector<int64_t> input;  // N, H, W, C
  Window window;
};

Window pool_window(int64_t kh, int64_t kw, int64_t sh, int64_t sw, Padding p,
                   std::array<int64_t, 4> pads = {}) {
  Window w;
  w.kh = kh, w.kw = kw, w.sh = sh, w.sw = sw, w.padding = p;
  w.top = pads[0], w.bottom = pads[1], w.left = pads[2], w.right = pads[3];
  return w;
}

std::vector<PoolCase> pool_cases() {
  using P = Padding;
  return {
      {"VALID 2x2 strides 2", {2, 6, 7, 3}, pool_window(2, 2, 2, 2, P::kValid)},
      {"VALID 3x2 strides 1", {2, 5, 7, 2}, pool_window(3, 2, 1, 1, P::kValid)},
      {"VALID 3x3 strides 2 odd sizes", {2, 7, 9, 3}, pool_window(3, 3, 2, 2, P::kValid)},
      {"SAME 3x3 strides 1", {2, 5, 5, 2}, pool_window(3, 3, 1, 1, P::kSame)},
      {"SAME 3x3 strides 2", {2, 7, 9, 3}, pool_window(3, 3, 2, 2, P::kSame)},
      {"SAME 4x4 strides 3", {2, 7, 8, 2}, pool_window(4, 4, 3, 3, P::kSame)},
      {"SAME window larger than input", {2, 3, 2, 2}, pool_window(5, 4, 1, 2, P::kSame)},
      {"EXPLICIT 3x2", {2, 5, 6, 3}, pool_window(3, 2, 1, 2, P::kExplicit, {1, 2, 0, 1})},
      {"EXPLICIT 3x3 strides 2", {2, 6, 5, 2}, pool_window(3, 3, 2, 2, P::kExplicit, {2, 1, 1, 2})},
      {"1x1", {2, 3, 5, 4}, pool_window(1, 1, 1, 1, P::kValid)},
      {"many channels", {2, 15, 17, 16}, pool_window(3, 3, 2, 1, P::kSame)},
  };
}

// Runs every pool case in both data formats on every float dtype: `check(case, dtype, nchw,
// x, rng)` runs an op and compares it.
template <typename Check>
void for_each_pool_case(Check check) {
  std::mt19937_64 rng(13);
  for (const PoolCase& c : pool_cases()) {
    for (DType dtype : kFloatDTypeList) {
      for (bool nchw : {false, true}) {
        SCOPED_TRACE(absl::StrCat(c.name, " ", dtype_name(dtype), nchw ? " NCHW" : " NHWC"));
        check(c, dtype, nchw, random_array(rng, c.input, dtype), rng);
      }
    }
  }
}

// The most windows one input element is in.
int64_t overlap(const Window& w) { return ((w.kh + w.sh - 1) / w.sh) * ((w.kw + w.sw - 1) / w.sw); }

TEST(MaxPoolKernelTest, MatchesTheReferenceExactly) {
  for_each_pool_case(
      [](const PoolCase& c, DType dtype, bool nchw, const Array4& x, std::mt19937_64&) {
        const absl::StatusOr<HostTensor> y =
            run_cpu(OpId::kMaxPool, {tensor_of(x, dtype, nchw)}, attrs_of(c.window, nchw, true));
        const Array4 want = max_pool_ref(x, c.window);
        expect_near(y, want, Array4::zeros(want.d[0], want.d[1], want.d[2], want.d[3]), 0, nchw);
      });
}

TEST(MaxPoolKernelTest, GradientMatchesTheReference) {
  for_each_pool_case([](const PoolCase& c, DType dtype, bool nchw, const Array4& x,
                        std::mt19937_64& rng) {
    const OpAttrs attrs = attrs_of(c.window, nchw, true);
    const Array4 y = max_pool_ref(x, c.window);
    const Array4 dy = random_array(rng, {y.d[0], y.d[1], y.d[2], y.d[3]}, dtype);
    const absl::StatusOr<HostTensor> dx = run_cpu(
        OpId::kMaxPoolGrad,
        {tensor_of(x, dtype, nchw), tensor_of(y, dtype, nchw), tensor_of(dy, dtype, nchw)}, attrs);
    expect_near(dx, max_pool_grad_ref(x, dy, c.window), max_pool_grad_ref(x, abs_of(dy), c.window),
                overlap(c.window), nchw);
  });
}

TEST(AvgPoolKernelTest, MatchesTheReference) {
  for_each_pool_case(
      [](const PoolCase& c, DType dtype, bool nchw, const Array4& x, std::mt19937_64&) {
        const absl::StatusOr<HostTensor> y =
            run_cpu(OpId::kAvgPool, {tensor_of(x, dtype, nchw)}, attrs_of(c.window, nchw, true));
        expect_near(y, avg_pool_ref(x, c.window), avg_pool_ref(abs_of(x), c.window),
                    c.window.kh * c.window.kw, nchw);
      });
}

TEST(AvgPoolKernelTest, GradientMatchesTheReference) {
  for_each_pool_case(
      [](const PoolCase& c, DType dtype, bool nchw, const Array4& x, std::mt19937_64& rng) {
        OpAttrs attrs = attrs_of(c.window, nchw, true);
        attrs.dims = dims_of(x.d, nchw);
        const Plan p = plan_of(x.d[1], x.d[2], c.window);
        const Array4 dy = random_array(rng, {x.d[0], p.out_h, p.out_w, x.d[3]}, dtype);
        const absl::StatusOr<HostTensor> dx =
            run_cpu(OpId::kAvgPoolGrad, {tensor_of(dy, dtype, nchw)}, attrs);
        expect_near(dx, avg_pool_grad_ref(dy, c.window, x.d[1], x.d[2]),
                    avg_pool_grad_ref(abs_of(dy), c.window, x.d[1], x.d[2]), 2 * overlap(c.window),
                    nchw);
      });
}

// Random shapes and windows (each padding, strides up to 3), in float64 and float32: the
// four pool ops, on values with ties now and then (small integers).
TEST(PoolKernelTest, AllFourOpsMatchTheReferenceOnRandomWindows) {
  std::mt19937_64 rng(19);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int round = 0; round < 300; ++round) {
    const std::vector<int64_t> input = {pick(1, 2), pick(1, 9), pick(1, 9), pick(1, 4)};
    const Window w = random_window(rng, /*pool=*/true, input[1], input[2]);
    const Plan p = plan_of(input[1], input[2], w);
    for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
      for (bool nchw : {false, true}) {
        SCOPED_TRACE(absl::StrCat(absl::StrJoin(input, "x"), " ", describe(w), " ",
                                  dtype_name(dtype), nchw ? " NCHW" : " NHWC"));
        Array4 x = random_array(rng, input, dtype);
        if (round % 2 == 1) {
          for (double& e : x.v) e = std::round(e * 2);  // -2 to 2: many ties
        }
        const Array4 dy = random_array(rng, {input[0], p.out_h, p.out_w, input[3]}, dtype);
        OpAttrs attrs = attrs_of(w, nchw, /*pool=*/true);
        const HostTensor xt = tensor_of(x, dtype, nchw), dyt = tensor_of(dy, dtype, nchw);
        const Array4 y = max_pool_ref(x, w);
        const Array4 none = Array4::zeros(y.d[0], y.d[1], y.d[2], y.d[3]);
        expect_near(run_cpu(OpId::kMaxPool, {xt}, attrs), y, none, 0, nchw);
        expect_near(run_cpu(OpId::kMaxPoolGrad, {xt, tensor_of(y, dtype, nchw), dyt}, attrs),
                    max_pool_grad_ref(x, dy, w), max_pool_grad_ref(x, abs_of(dy), w), overlap(w),
                    nchw);
        expect_near(run_cpu(OpId::kAvgPool, {xt}, attrs), avg_pool_ref(x, w),
                    avg_pool_ref(abs_of(x), w), w.kh * w.kw, nchw);
        attrs.dims = dims_of(x.d, nchw);
        expect_near(run_cpu(OpId::kAvgPoolGrad, {dyt}, attrs),
                    avg_pool_grad_ref(dy, w, x.d[1], x.d[2]),
                    avg_pool_grad_ref(abs_of(dy), w, x.d[1], x.d[2]), 2 * overlap(w), nchw);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Small cases by hand.

// Note [Convolutions]: each window's gradient goes to its first maximum, in row-major order.
TEST(MaxPoolKernelTest, TheFirstMaximumOfAWindowGetsItsGradient) {
  OpAttrs attrs;
  attrs.ksize = attrs.strides = {1, 2, 2, 1};
  const HostTensor x = HostTensor::make<float>(S({1, 2, 4, 1}), {5, 5, 1, 7, 5, 2, 7, 7});
  const HostTensor y = HostTensor::make<float>(S({1, 1, 2, 1}), {5, 7});
  EXPECT_THAT(run_values(OpId::kMaxPool, {x}, attrs), ElementsAre(5, 7));
  EXPECT_THAT(run_values(OpId::kMaxPoolGrad,
                         {x, y, HostTensor::make<float>(S({1, 1, 2, 1}), {10, 20})}, attrs),
              ElementsAre(10, 0, 0, 20, 0, 0, 0, 0));
  // Overlapping windows over equal values: each window's top-left element.
  attrs.strides = {1, 1, 1, 1};
  const HostTensor ones = filled(S({1, 3, 3, 1}), 1);
  const HostTensor grad = HostTensor::make<float>(S({1, 2, 2, 1}), {1, 2, 3, 4});
  EXPECT_THAT(run_values(OpId::kMaxPoolGrad, {ones, filled(S({1, 2, 2, 1}), 1), grad}, attrs),
              ElementsAre(1, 2, 0, 3, 4, 0, 0, 0, 0));
  // NCHW, two channels: the rule holds in each plane.
  attrs.channels_first = true;
  attrs.ksize = {1, 1, 2, 2};
  const HostTensor planes = HostTensor::make<float>(S({1, 2, 2, 2}), {3, 3, 3, 3, 0, 1, 1, 0});
  EXPECT_THAT(run_values(OpId::kMaxPoolGrad,
                         {planes, HostTensor::make<float>(S({1, 2, 1, 1}), {3, 1}),
                          HostTensor::make<float>(S({1, 2, 1, 1}), {6, 8})},
                         attrs),
              ElementsAre(6, 0, 0, 0, 0, 8, 0, 0));
}

TEST(MaxPoolKernelTest, ANanInAWindowWins) {
  OpAttrs attrs;
  attrs.ksize = attrs.strides = {1, 2, 2, 1};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<double> y =
      run_values(OpId::kMaxPool,
                 {HostTensor::make<float>(S({1, 2, 4, 1}), {1, nan, 3, 4, 2, 0, 5, 1})}, attrs);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 5);
}

// Note [Convolutions]: an average divides by the elements the window read, not its size.
TEST(AvgPoolKernelTest, CountsOnlyTheElementsInsideTheInput) {
  OpAttrs attrs;
  attrs.ksize = {1, 3, 3, 1};
  attrs.padding = Padding::kSame;
  EXPECT_THAT(run_values(OpId::kAvgPool, {iota(S({1, 3, 3, 1}))}, attrs),
              ElementsAre(3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7));
  attrs.dims = {1, 3, 3, 1};
  const std::vector<double> dx =
      run_values(OpId::kAvgPoolGrad, {filled(S({1, 3, 3, 1}), 36)}, attrs);
  // A corner is in windows of 4, 6, 6 and 9 elements; the centre in all nine.
  ASSERT_EQ(dx.size(), 9u);
  EXPECT_NEAR(dx[0], 36. / 4 + 36. / 6 + 36. / 6 + 36. / 9, 1e-5);
  EXPECT_NEAR(dx[4], 4 * 36. / 4 + 4 * 36. / 6 + 36. / 9, 1e-5);
  // EXPLICIT padding is skipped as SAME's is.
  attrs.padding = Padding::kExplicit;
  attrs.ksize = {1, 2, 2, 1};
  attrs.explicit_paddings = {0, 0, 1, 0, 1, 0, 0, 0};
  EXPECT_THAT(run_values(OpId::kAvgPool, {iota(S({1, 2, 2, 1}))}, attrs),
              ElementsAre(1, 1.5, 2, 2.5));
}

TEST(PoolKernelTest, TakesEmptyBatchesAndChannels) {
  OpAttrs attrs;
  attrs.ksize = {1, 2, 2, 1};
  for (OpId op : {OpId::kMaxPool, OpId::kAvgPool}) {
    for (const Shape& shape : {S({0, 3, 3, 2}), S({2, 3, 3, 0})}) {
      const absl::StatusOr<HostTensor> y = run_cpu(op, {filled(shape, 0)}, attrs);
      ASSERT_TRUE(y.ok()) << y.status();
      EXPECT_EQ(y->shape(), S({shape.dim(0), 2, 2, shape.dim(3)}));
    }
  }
}

}  // namespace
}  // namespace mt::conv_test
