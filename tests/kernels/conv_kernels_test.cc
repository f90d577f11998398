// CPU kernels of Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter against the double
// reference of conv_reference.h, in NHWC and NCHW, with VALID, SAME and EXPLICIT padding,
// strides, dilations and odd sizes, on every float dtype; small cases by hand (which pin the
// reference's reading of Note [Convolutions] too) and empty sums.
#include <array>
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

struct ConvCase {
  const char* name;
  std::vector<int64_t> input;   // N, H, W, C
  std::vector<int64_t> filter;  // H, W, I, O
  Window window;                // its kh and kw are the filter's
};

Window conv_window(int64_t sh, int64_t sw, int64_t dh, int64_t dw, Padding p,
                   std::array<int64_t, 4> pads = {}) {
  Window w;
  w.sh = sh, w.sw = sw, w.dh = dh, w.dw = dw, w.padding = p;
  w.top = pads[0], w.bottom = pads[1], w.left = pads[2], w.right = pads[3];
  return w;
}

std::vector<ConvCase> conv_cases() {
  using P = Padding;
  std::vector<ConvCase> cases = {
      {"VALID 3x3", {2, 7, 5, 3}, {3, 3, 3, 4}, conv_window(1, 1, 1, 1, P::kValid)},
      {"VALID strides 2", {2, 9, 7, 2}, {3, 2, 2, 3}, conv_window(2, 2, 1, 1, P::kValid)},
      {"VALID strides (2, 1) dilations (1, 2)",
       {2, 9, 7, 2},
       {3, 2, 2, 3},
       conv_window(2, 1, 1, 2, P::kValid)},
      {"VALID 1x1 strides 2", {2, 5, 7, 3}, {1, 1, 3, 2}, conv_window(2, 2, 1, 1, P::kValid)},
      {"SAME 3x3", {2, 5, 7, 3}, {3, 3, 3, 2}, conv_window(1, 1, 1, 1, P::kSame)},
      {"SAME strides 2 odd sizes", {2, 7, 9, 3}, {3, 3, 3, 4}, conv_window(2, 2, 1, 1, P::kSame)},
      {"SAME even filter", {2, 5, 5, 2}, {4, 2, 2, 3}, conv_window(1, 1, 1, 1, P::kSame)},
      {"SAME dilations 2", {2, 7, 7, 2}, {3, 3, 2, 2}, conv_window(1, 1, 2, 2, P::kSame)},
      {"SAME strides 3 dilations 2", {2, 8, 7, 2}, {2, 3, 2, 2}, conv_window(3, 2, 2, 2, P::kSame)},
      {"SAME filter larger than input",
       {2, 3, 2, 2},
       {5, 4, 2, 2},
       conv_window(1, 1, 1, 1, P::kSame)},
      {"EXPLICIT", {2, 5, 6, 3}, {2, 3, 3, 2}, conv_window(2, 2, 1, 1, P::kExplicit, {1, 2, 0, 3})},
      {"EXPLICIT dilations 2",
       {2, 5, 5, 2},
       {3, 3, 2, 3},
       conv_window(1, 2, 2, 2, P::kExplicit, {2, 1, 3, 0})},
      {"many channels", {2, 17, 19, 8}, {3, 3, 8, 16}, conv_window(1, 2, 1, 1, P::kSame)},
  };
  for (ConvCase& c : cases) c.window.kh = c.filter[0], c.window.kw = c.filter[1];
  return cases;
}

// Runs every conv case in both data formats on every float dtype: `check(case, dtype, nchw,
// x, f, rng)` runs an op and compares it.
template <typename Check>
void for_each_conv_case(Check check) {
  std::mt19937_64 rng(11);
  for (const ConvCase& c : conv_cases()) {
    for (DType dtype : kFloatDTypeList) {
      for (bool nchw : {false, true}) {
        SCOPED_TRACE(absl::StrCat(c.name, " ", dtype_name(dtype), nchw ? " NCHW" : " NHWC"));
        const Array4 x = random_array(rng, c.input, dtype);
        const Array4 f = random_array(rng, c.filter, dtype);
        check(c, dtype, nchw, x, f, rng);
      }
    }
  }
}

TEST(Conv2DKernelTest, MatchesTheReferenceInBothLayoutsOnEveryFloatDtype) {
  for_each_conv_case([](const ConvCase& c, DType dtype, bool nchw, const Array4& x, const Array4& f,
                        std::mt19937_64&) {
    const absl::StatusOr<HostTensor> y =
        run_cpu(OpId::kConv2D, {tensor_of(x, dtype, nchw), tensor_of(f, dtype, false)},
                attrs_of(c.window, nchw, /*pool=*/false));
    const int64_t terms = c.filter[0] * c.filter[1] * c.filter[2];
    expect_near(y, conv_ref(x, f, c.window), conv_ref(abs_of(x), abs_of(f), c.window), terms, nchw);
  });
}

TEST(Conv2DBackpropKernelTest, InputGradientMatchesTheReference) {
  for_each_conv_case([](const ConvCase& c, DType dtype, bool nchw, const Array4& x, const Array4& f,
                        std::mt19937_64& rng) {
    const Plan p = plan_of(x.d[1], x.d[2], c.window);
    const Array4 dy = random_array(rng, {x.d[0], p.out_h, p.out_w, f.d[3]}, dtype);
    OpAttrs attrs = attrs_of(c.window, nchw, /*pool=*/false);
    attrs.dims = dims_of(x.d, nchw);
    const absl::StatusOr<HostTensor> dx =
        run_cpu(OpId::kConv2DBackpropInput,
                {tensor_of(f, dtype, false), tensor_of(dy, dtype, nchw)}, attrs);
    const int64_t terms = c.filter[0] * c.filter[1] * c.filter[3];
    expect_near(dx, conv_input_ref(f, dy, c.window, x.d[1], x.d[2]),
                conv_input_ref(abs_of(f), abs_of(dy), c.window, x.d[1], x.d[2]), terms, nchw);
  });
}

TEST(Conv2DBackpropKernelTest, FilterGradientMatchesTheReference) {
  for_each_conv_case([](const ConvCase& c, DType dtype, bool nchw, const Array4& x, const Array4& f,
                        std::mt19937_64& rng) {
    const Plan p = plan_of(x.d[1], x.d[2], c.window);
    const Array4 dy = random_array(rng, {x.d[0], p.out_h, p.out_w, f.d[3]}, dtype);
    OpAttrs attrs = attrs_of(c.window, nchw, /*pool=*/false);
    attrs.dims = {f.d[0], f.d[1], f.d[2], f.d[3]};
    const absl::StatusOr<HostTensor> df =
        run_cpu(OpId::kConv2DBackpropFilter,
                {tensor_of(x, dtype, nchw), tensor_of(dy, dtype, nchw)}, attrs);
    const int64_t terms = x.d[0] * p.out_h * p.out_w;
    expect_near(df, conv_filter_ref(x, dy, c.window),
                conv_filter_ref(abs_of(x), abs_of(dy), c.window), terms, nchw, /*filter=*/true);
  });
}

// Random shapes and windows (each padding, strides and dilations up to 3), in float64 and
// float32: Conv2D and both backprops.
TEST(Conv2DKernelTest, AllThreeOpsMatchTheReferenceOnRandomWindows) {
  std::mt19937_64 rng(17);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int round = 0; round < 300; ++round) {
    const std::vector<int64_t> input = {pick(1, 2), pick(1, 9), pick(1, 9), pick(1, 4)};
    const Window w = random_window(rng, /*pool=*/false, input[1], input[2]);
    const std::vector<int64_t> filter = {w.kh, w.kw, input[3], pick(1, 4)};
    const Plan p = plan_of(input[1], input[2], w);
    for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
      for (bool nchw : {false, true}) {
        SCOPED_TRACE(absl::StrCat(absl::StrJoin(input, "x"), " ", describe(w), " ",
                                  dtype_name(dtype), nchw ? " NCHW" : " NHWC"));
        const Array4 x = random_array(rng, input, dtype), f = random_array(rng, filter, dtype);
        const Array4 dy = random_array(rng, {input[0], p.out_h, p.out_w, filter[3]}, dtype);
        OpAttrs attrs = attrs_of(w, nchw, /*pool=*/false);
        const HostTensor xt = tensor_of(x, dtype, nchw), ft = tensor_of(f, dtype, false),
                         dyt = tensor_of(dy, dtype, nchw);
        expect_near(run_cpu(OpId::kConv2D, {xt, ft}, attrs), conv_ref(x, f, w),
                    conv_ref(abs_of(x), abs_of(f), w), w.kh * w.kw * input[3], nchw);
        attrs.dims = dims_of(x.d, nchw);
        expect_near(run_cpu(OpId::kConv2DBackpropInput, {ft, dyt}, attrs),
                    conv_input_ref(f, dy, w, x.d[1], x.d[2]),
                    conv_input_ref(abs_of(f), abs_of(dy), w, x.d[1], x.d[2]),
                    w.kh * w.kw * filter[3], nchw);
        attrs.dims = {f.d[0], f.d[1], f.d[2], f.d[3]};
        expect_near(run_cpu(OpId::kConv2DBackpropFilter, {xt, dyt}, attrs),
                    conv_filter_ref(x, dy, w), conv_filter_ref(abs_of(x), abs_of(dy), w),
                    input[0] * p.out_h * p.out_w, nchw,
                    /*filter=*/true);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Small cases by hand.

TEST(Conv2DKernelTest, ComputesSmallCasesByHand) {
  OpAttrs valid;
  EXPECT_THAT(run_values(OpId::kConv2D, {iota(S({1, 3, 3, 1})), filled(S({2, 2, 1, 1}), 1)}, valid),
              ElementsAre(12, 16, 24, 28));
  OpAttrs same;
  same.padding = Padding::kSame;
  EXPECT_THAT(run_values(OpId::kConv2D, {iota(S({1, 3, 3, 1})), filled(S({3, 3, 1, 1}), 1)}, same),
              ElementsAre(12, 21, 16, 27, 45, 33, 24, 39, 28));
  // SAME, 3x3 over 4x4 at strides 2: one row and column of padding, after (the extra one).
  same.strides = {1, 2, 2, 1};
  EXPECT_THAT(run_values(OpId::kConv2D, {iota(S({1, 4, 4, 1})), filled(S({3, 3, 1, 1}), 1)}, same),
              ElementsAre(54, 45, 72, 54));
  // Dilations 2: x[r, c] + x[r, c + 2] + x[r + 2, c] + x[r + 2, c + 2] of x = 5 r + c.
  OpAttrs dilated;
  dilated.dilations = {1, 2, 2, 1};
  EXPECT_THAT(
      run_values(OpId::kConv2D, {iota(S({1, 5, 5, 1}), 0), filled(S({2, 2, 1, 1}), 1)}, dilated),
      ElementsAre(24, 28, 32, 44, 48, 52, 64, 68, 72));
  // Two input channels to one output channel with weights 1 and 10; NCHW reads the planes.
  OpAttrs nchw;
  nchw.channels_first = true;
  const HostTensor w = HostTensor::make<float>(S({1, 1, 2, 1}), {1, 10});
  EXPECT_THAT(run_values(OpId::kConv2D, {iota(S({1, 2, 1, 2})), w}, nchw), ElementsAre(31, 42));
  EXPECT_THAT(run_values(OpId::kConv2D, {iota(S({1, 1, 2, 2})), w}, valid), ElementsAre(21, 43));
}

TEST(Conv2DBackpropKernelTest, ComputesSmallCasesByHand) {
  // The gradients of the first case above with dy = 1: how many windows read each input,
  // and the sum of the elements each filter tap read.
  OpAttrs attrs;
  attrs.dims = {1, 3, 3, 1};
  EXPECT_THAT(run_values(OpId::kConv2DBackpropInput,
                         {filled(S({2, 2, 1, 1}), 1), filled(S({1, 2, 2, 1}), 1)}, attrs),
              ElementsAre(1, 2, 1, 2, 4, 2, 1, 2, 1));
  attrs.dims = {2, 2, 1, 1};
  EXPECT_THAT(run_values(OpId::kConv2DBackpropFilter,
                         {iota(S({1, 3, 3, 1})), filled(S({1, 2, 2, 1}), 1)}, attrs),
              ElementsAre(12, 16, 24, 28));
}

// Note [Padding never multiplies]: a tap in the padding adds nothing, even where the value
// it would multiply is infinite (zero times it would be NaN). TensorFlow 2.21 gives these.
template <typename T>
void expect_padding_never_multiplies() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<T> w(9, T(1));
  w[0] = std::numeric_limits<T>::infinity();
  const HostTensor ones = HostTensor::make<T>(S({1, 3, 3, 1}), std::vector<T>(9, T(1)));
  const HostTensor weights = HostTensor::make<T>(S({3, 3, 1, 1}), w);
  OpAttrs same;
  same.padding = Padding::kSame;
  EXPECT_THAT(run_values(OpId::kConv2D, {ones, weights}, same),
              ElementsAre(4, 6, 4, 6, inf, inf, 4, inf, inf));
  OpAttrs filter = same;
  filter.dims = {3, 3, 1, 1};
  const HostTensor dy = HostTensor::make<T>(S({1, 3, 3, 1}), w);
  EXPECT_THAT(run_values(OpId::kConv2DBackpropFilter, {ones, dy}, filter),
              ElementsAre(4, 6, 4, 6, inf, inf, 4, inf, inf));
  OpAttrs input = same;
  input.dims = {1, 3, 3, 1};
  EXPECT_THAT(run_values(OpId::kConv2DBackpropInput, {weights, ones}, input),
              ElementsAre(inf, inf, 4, inf, inf, 6, 4, 6, 4));
}

TEST(Conv2DKernelTest, PaddingNeverMultipliesAnInfiniteWeight) {
  expect_padding_never_multiplies<float>();
  expect_padding_never_multiplies<double>();
}

TEST(Conv2DKernelTest, WritesZerosForAnEmptySum) {
  // No input channels: every output element is an empty sum (the buffer starts poisoned).
  EXPECT_THAT(run_values(OpId::kConv2D, {filled(S({1, 2, 2, 0}), 0), filled(S({1, 1, 0, 2}), 0)},
                         OpAttrs{}),
              ElementsAre(0, 0, 0, 0, 0, 0, 0, 0));
  OpAttrs attrs;
  attrs.dims = {1, 2, 2, 0};
  EXPECT_TRUE(run_values(OpId::kConv2DBackpropInput,
                         {filled(S({1, 1, 0, 2}), 0), filled(S({1, 2, 2, 2}), 1)}, attrs)
                  .empty());
  // An empty batch: a filter gradient of zeros.
  attrs.dims = {2, 2, 1, 1};
  EXPECT_THAT(run_values(OpId::kConv2DBackpropFilter,
                         {filled(S({0, 3, 3, 1}), 0), filled(S({0, 2, 2, 1}), 0)}, attrs),
              ElementsAre(0, 0, 0, 0));
}

}  // namespace
}  // namespace mt::conv_test
