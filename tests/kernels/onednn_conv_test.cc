// oneDNN's convolutions (kernels/cpu/onednn_conv.h) beside the runtime's own kernels and the
// double reference of conv_reference.h: random shapes, windows and channel counts in NHWC
// and NCHW, float32 and bfloat16, with finite values and with infinities and NaNs (Note
// [Padding never multiplies] in kernels/cpu/conv_kernels.cc), and from several threads at
// once. Every test is skipped where oneDNN is off (MT_ONEDNN_CONV=0, or a build without it).
#include "kernels/cpu/onednn_conv.h"

#include <cmath>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/conv_geometry.h"
#include "kernels/cpu/cpu_isa.h"
#include "tests/kernels/conv_reference.h"

namespace mt::conv_test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A random convolution: a batch of 1 to 3 images up to 12 x 12, channel counts that are and
// are not multiples of oneDNN's vector blocks, and random_window's windows.
struct Case {
  std::vector<int64_t> input;   // N, H, W, C
  std::vector<int64_t> filter;  // H, W, I, O
  Window window;
  Plan plan;
};

Case random_case(std::mt19937_64& rng) {
  static constexpr int64_t kChannels[] = {1, 2, 3, 4, 8, 16, 17, 32};
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c;
  c.input = {pick(1, 3), pick(1, 12), pick(1, 12), kChannels[pick(0, 7)]};
  c.window = random_window(rng, /*pool=*/false, c.input[1], c.input[2]);
  c.filter = {c.window.kh, c.window.kw, c.input[3], kChannels[pick(0, 7)]};
  c.plan = plan_of(c.input[1], c.input[2], c.window);
  return c;
}

std::string describe(const Case& c, DType dtype, bool nchw) {
  return absl::StrCat(absl::StrJoin(c.input, "x"), " filter ", absl::StrJoin(c.filter, "x"), " ",
                      describe(c.window), " ", dtype_name(dtype), nchw ? " NCHW" : " NHWC");
}

// One op of a case: the op, its inputs and attributes, and its reference (and the reference on
// magnitudes, for the tolerance).
struct OpRun {
  OpId op;
  std::vector<HostTensor> inputs;
  OpAttrs attrs;
  Array4 want, mag;
  int64_t terms;
  bool writes_filter;
};

std::vector<OpRun> op_runs(const Case& c, DType dtype, bool nchw, const Array4& x, const Array4& f,
                           const Array4& dy) {
  const Window& w = c.window;
  const HostTensor xt = tensor_of(x, dtype, nchw), ft = tensor_of(f, dtype, false),
                   dyt = tensor_of(dy, dtype, nchw);
  OpAttrs attrs = attrs_of(w, nchw, /*pool=*/false);
  std::vector<OpRun> runs;
  runs.push_back({OpId::kConv2D,
                  {xt, ft},
                  attrs,
                  conv_ref(x, f, w),
                  conv_ref(abs_of(x), abs_of(f), w),
                  w.kh * w.kw * x.d[3],
                  false});
  attrs.dims = dims_of(x.d, nchw);
  runs.push_back({OpId::kConv2DBackpropInput,
                  {ft, dyt},
                  attrs,
                  conv_input_ref(f, dy, w, x.d[1], x.d[2]),
                  conv_input_ref(abs_of(f), abs_of(dy), w, x.d[1], x.d[2]),
                  w.kh * w.kw * f.d[3],
                  false});
  attrs.dims = {f.d[0], f.d[1], f.d[2], f.d[3]};
  runs.push_back({OpId::kConv2DBackpropFilter,
                  {xt, dyt},
                  attrs,
                  conv_filter_ref(x, dy, w),
                  conv_filter_ref(abs_of(x), abs_of(dy), w),
                  x.d[0] * c.plan.out_h * c.plan.out_w,
                  true});
  return runs;
}

// Expects `got` to hold the reference's values (expect_near: NaN and infinities exactly).
void expect_matches(const absl::StatusOr<HostTensor>& got, const OpRun& r, bool nchw) {
  SCOPED_TRACE(op_name(r.op));
  expect_near(got, r.want, r.mag, r.terms, nchw, r.writes_filter);
}

// The geometry the kernel of `r` computes.
internal::ConvGeometry geometry_of(const OpRun& r) {
  const Shape dims = Shape::make(r.attrs.dims).value();
  absl::StatusOr<internal::ConvGeometry> g =
      r.op == OpId::kConv2D
          ? internal::conv_geometry(r.op, r.inputs[0].shape(), r.inputs[1].shape(), r.attrs)
      : r.op == OpId::kConv2DBackpropInput
          ? internal::conv_geometry(r.op, dims, r.inputs[0].shape(), r.attrs)
          : internal::conv_geometry(r.op, r.inputs[0].shape(), dims, r.attrs);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

// Whether the windows end at the padded input's end along both axes, the shapes oneDNN takes
// (Note [When oneDNN runs a convolution]).
bool windows_end_at_the_end(const internal::ConvGeometry& g) {
  return (g.out_h - 1) * g.stride_h + (g.filter_h - 1) * g.dilation_h + 1 - g.pad_top >= g.in_h &&
         (g.out_w - 1) * g.stride_w + (g.filter_w - 1) * g.dilation_w + 1 - g.pad_left >= g.in_w;
}

// Random cases, each op with oneDNN and with the runtime's own kernels, against the
// reference; then oneDNN called directly, which must take every float32 case whose windows
// end at the padded input's end and give the kernel's bits.
TEST(OnednnConvTest, AgreesWithTheRuntimesKernelsOnRandomShapes) {
  if (!cpu::onednn_conv_enabled()) GTEST_SKIP() << "oneDNN's convolutions are off";
  const OnednnConvs every_size(true);
  std::mt19937_64 rng(23);
  int taken = 0;
  for (int round = 0; round < 150; ++round) {
    const Case c = random_case(rng);
    for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
      for (bool nchw : {false, true}) {
        SCOPED_TRACE(describe(c, dtype, nchw));
        const Array4 x = random_array(rng, c.input, dtype), f = random_array(rng, c.filter, dtype);
        const Array4 dy =
            random_array(rng, {c.input[0], c.plan.out_h, c.plan.out_w, c.filter[3]}, dtype);
        for (const OpRun& r : op_runs(c, dtype, nchw, x, f, dy)) {
          absl::StatusOr<HostTensor> own, by_onednn;
          {
            OnednnConvs off(false);
            own = run_cpu(r.op, r.inputs, r.attrs);
          }
          by_onednn = run_cpu(r.op, r.inputs, r.attrs);
          expect_matches(own, r, nchw);
          expect_matches(by_onednn, r, nchw);
          ASSERT_TRUE(by_onednn.ok());
          const internal::ConvGeometry g = geometry_of(r);
          HostTensor out = HostTensor::uninitialized(by_onednn->shape(), dtype);
          const absl::StatusOr<bool> done = cpu::onednn_conv(
              r.op, g, dtype, {r.inputs[0].data(), r.inputs[1].data()}, out.data());
          ASSERT_TRUE(done.ok()) << done.status();
          if (dtype == DType::kFloat32) {
            EXPECT_EQ(*done, windows_end_at_the_end(g)) << op_name(r.op);
          }
          if (!*done) continue;
          ++taken;
          EXPECT_EQ(testutil::as_doubles(out), testutil::as_doubles(*by_onednn))
              << op_name(r.op) << " by oneDNN directly and through its kernel";
        }
      }
    }
  }
  EXPECT_GT(taken, 300);
}

// Note [Padding never multiplies]: infinities and NaNs in the input, the filter or the
// output's gradient give the reference's values with oneDNN on, windows over padding
// included: where a tap in the padding would multiply a non-finite value the kernels leave
// oneDNN, whose im2col implementations would make a NaN of it.
TEST(OnednnConvTest, NonFiniteValuesGiveTheReferencesValues) {
  if (!cpu::onednn_conv_enabled()) GTEST_SKIP() << "oneDNN's convolutions are off";
  const OnednnConvs every_size(true);
  std::mt19937_64 rng(29);
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {inf, -inf, std::numeric_limits<double>::quiet_NaN()};
  for (int round = 0; round < 150; ++round) {
    const Case c = random_case(rng);
    const int where = static_cast<int>(rng() % 3);  // input, filter or output gradient
    for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
      for (bool nchw : {false, true}) {
        SCOPED_TRACE(absl::StrCat(describe(c, dtype, nchw), " non-finite in operand ", where));
        Array4 x = random_array(rng, c.input, dtype), f = random_array(rng, c.filter, dtype);
        Array4 dy = random_array(rng, {c.input[0], c.plan.out_h, c.plan.out_w, c.filter[3]}, dtype);
        Array4& target = where == 0 ? x : where == 1 ? f : dy;
        if (target.v.empty()) continue;
        for (double special : specials) target.v[rng() % target.v.size()] = special;
        for (const OpRun& r : op_runs(c, dtype, nchw, x, f, dy)) {
          expect_matches(run_cpu(r.op, r.inputs, r.attrs), r, nchw);
        }
      }
    }
  }
}

// A case of its own: TensorFlow's CPU values for an infinite weight at the corner of a SAME
// 3x3 filter over 16 channels in both layouts, the shape of Conv2DKernelTest's by-hand case
// with channels enough for oneDNN's blocked kernels.
TEST(OnednnConvTest, PaddingNeverMultipliesAnInfiniteWeightInEitherLayout) {
  if (!cpu::onednn_conv_enabled()) GTEST_SKIP() << "oneDNN's convolutions are off";
  const OnednnConvs every_size(true);
  Case c;
  c.input = {2, 5, 5, 16};
  c.filter = {3, 3, 16, 16};
  c.window.kh = c.window.kw = 3;
  c.window.padding = Padding::kSame;
  c.plan = plan_of(5, 5, c.window);
  std::mt19937_64 rng(31);
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    for (bool nchw : {false, true}) {
      SCOPED_TRACE(describe(c, dtype, nchw));
      const Array4 x = random_array(rng, c.input, dtype);
      Array4 f = random_array(rng, c.filter, dtype);
      Array4 dy = random_array(rng, {2, 5, 5, 16}, dtype);
      f.at(0, 0, 3, 5) = std::numeric_limits<double>::infinity();
      dy.at(1, 0, 0, 7) = -std::numeric_limits<double>::infinity();
      for (const OpRun& r : op_runs(c, dtype, nchw, x, f, dy)) {
        expect_matches(run_cpu(r.op, r.inputs, r.attrs), r, nchw);
      }
    }
  }
}

// One primitive serves calls from several threads at once, each with its scratchpad: every
// thread gets the bits of a call made alone.
TEST(OnednnConvTest, RunsOnSeveralThreadsAtOnce) {
  if (!cpu::onednn_conv_enabled()) GTEST_SKIP() << "oneDNN's convolutions are off";
  const OnednnConvs every_size(true);
  Case c;
  c.input = {4, 16, 16, 32};
  c.filter = {3, 3, 32, 32};
  c.window.kh = c.window.kw = 3;
  c.window.padding = Padding::kSame;
  c.plan = plan_of(16, 16, c.window);
  std::mt19937_64 rng(37);
  const Array4 x = random_array(rng, c.input, DType::kFloat32);
  const Array4 f = random_array(rng, c.filter, DType::kFloat32);
  const Array4 dy = random_array(rng, {4, 16, 16, 32}, DType::kFloat32);
  const std::vector<OpRun> runs = op_runs(c, DType::kFloat32, false, x, f, dy);
  std::vector<std::vector<double>> alone;
  for (const OpRun& r : runs)
    alone.push_back(testutil::as_doubles(*run_cpu(r.op, r.inputs, r.attrs)));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const size_t k = (t + i) % runs.size();
        const absl::StatusOr<HostTensor> out = run_cpu(runs[k].op, runs[k].inputs, runs[k].attrs);
        if (!out.ok() || testutil::as_doubles(*out) != alone[k]) ++mismatches[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

// Note [When oneDNN runs a convolution], "Layouts": a 3x3 SAME layer in either layout runs
// oneDNN's direct JIT kernels, not its im2col GEMM, at AVX2 and AVX-512 (the baseline level
// has only the GEMM).
TEST(OnednnConvTest, RunsItsJitKernelsInEitherLayout) {
  if (!cpu::onednn_conv_enabled()) GTEST_SKIP() << "oneDNN's convolutions are off";
  const OnednnConvs every_size(true);
  if (cpu::cpu_isa() == cpu::CpuIsa::kBaseline) GTEST_SKIP() << "baseline ISA level";
  Case c;
  c.input = {2, 9, 9, 16};
  c.filter = {3, 3, 16, 24};
  c.window.kh = c.window.kw = 3;
  c.window.padding = Padding::kSame;
  c.plan = plan_of(9, 9, c.window);
  std::mt19937_64 rng(41);
  const Array4 x = random_array(rng, c.input, DType::kFloat32);
  const Array4 f = random_array(rng, c.filter, DType::kFloat32);
  const Array4 dy = random_array(rng, {2, 9, 9, 24}, DType::kFloat32);
  for (bool nchw : {false, true}) {
    for (const OpRun& r : op_runs(c, DType::kFloat32, nchw, x, f, dy)) {
      expect_matches(run_cpu(r.op, r.inputs, r.attrs), r, nchw);
      const std::string implementation = cpu::onednn_implementation(r.op, geometry_of(r));
      EXPECT_THAT(implementation, AllOf(Not(IsEmpty()), Not(HasSubstr("gemm"))))
          << op_name(r.op) << (nchw ? " NCHW" : " NHWC");
    }
  }
}

// A call with little work stays on the runtime's kernels, faster there (Note [When oneDNN
// runs a convolution]), unless a test asks for every size.
TEST(OnednnConvTest, LeavesSmallCallsToTheRuntimesKernels) {
  if (!cpu::onednn_conv_enabled()) GTEST_SKIP() << "oneDNN's convolutions are off";
  internal::ConvGeometry g;  // 1x1 over 4x4x4: 256 multiply-adds
  g.batch = g.filter_h = g.filter_w = 1;
  g.in_h = g.in_w = g.in_c = g.out_h = g.out_w = g.out_c = 4;
  std::vector<float> x(64, 1), f(16, 1), y(64, 0);
  absl::StatusOr<bool> done =
      cpu::onednn_conv(OpId::kConv2D, g, DType::kFloat32, {x.data(), f.data()}, y.data());
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(*done);
  const OnednnConvs every_size(true);
  done = cpu::onednn_conv(OpId::kConv2D, g, DType::kFloat32, {x.data(), f.data()}, y.data());
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(*done);
  EXPECT_EQ(y, std::vector<float>(64, 4));
}

TEST(OnednnConvTest, TakesNothingWhenSwitchedOff) {
  OnednnConvs off(false);
  internal::ConvGeometry g;
  g.batch = g.in_h = g.in_w = g.in_c = g.filter_h = g.filter_w = g.out_h = g.out_w = g.out_c = 1;
  float a = 1, b = 2, out = 0;
  const absl::StatusOr<bool> done =
      cpu::onednn_conv(OpId::kConv2D, g, DType::kFloat32, {&a, &b}, &out);
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(*done);
  EXPECT_EQ(out, 0);
}

}  // namespace
}  // namespace mt::conv_test
