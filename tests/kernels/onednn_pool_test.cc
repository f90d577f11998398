// oneDNN's pools (Note [oneDNN's pools] in kernels/cpu/onednn/onednn_pool.cc) beside the
// runtime's own kernels and the double reference of conv_reference.h: random windows over
// random shapes in NHWC and NCHW, float32 and bfloat16, with infinities and NaNs in the input
// or the gradient. Every test is skipped where oneDNN is off (MT_ONEDNN_CONV=0, or a build
// without it).
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kernels/conv_geometry.h"
#include "kernels/cpu/onednn_conv.h"
#include "tests/kernels/conv_reference.h"

namespace mt::conv_test {
namespace {

// One pool op of a case: its inputs and attributes, and its reference (and the reference on
// magnitudes) where the input has no NaN (the reference's maximum skips one; ours wins).
struct PoolRun {
  OpId op;
  std::vector<HostTensor> inputs;
  OpAttrs attrs;
  Array4 want, mag;
  int64_t terms;
};

// The most windows one input element is in.
int64_t overlap(const Window& w) { return ((w.kh + w.sh - 1) / w.sh) * ((w.kw + w.sw - 1) / w.sw); }

std::vector<PoolRun> pool_runs(const Window& w, DType dtype, bool nchw, const Array4& x,
                               const Array4& dy) {
  const HostTensor xt = tensor_of(x, dtype, nchw), dyt = tensor_of(dy, dtype, nchw);
  OpAttrs attrs = attrs_of(w, nchw, /*pool=*/true);
  std::vector<PoolRun> runs;
  OnednnConvs off(false);  // MaxPoolGrad's second input: the runtime's own pool
  const absl::StatusOr<HostTensor> y = run_cpu(OpId::kMaxPool, {xt}, attrs);
  EXPECT_TRUE(y.ok()) << y.status();
  runs.push_back({OpId::kMaxPool, {xt}, attrs, max_pool_ref(x, w), max_pool_ref(abs_of(x), w), 0});
  runs.push_back({OpId::kMaxPoolGrad,
                  {xt, *y, dyt},
                  attrs,
                  max_pool_grad_ref(x, dy, w),
                  max_pool_grad_ref(x, abs_of(dy), w),
                  overlap(w)});
  runs.push_back(
      {OpId::kAvgPool, {xt}, attrs, avg_pool_ref(x, w), avg_pool_ref(abs_of(x), w), w.kh * w.kw});
  attrs.dims = dims_of(x.d, nchw);
  runs.push_back({OpId::kAvgPoolGrad,
                  {dyt},
                  attrs,
                  avg_pool_grad_ref(dy, w, x.d[1], x.d[2]),
                  avg_pool_grad_ref(abs_of(dy), w, x.d[1], x.d[2]),
                  overlap(w)});
  return runs;
}

bool has_nan(const Array4& a) {
  for (double v : a.v) {
    if (std::isnan(v)) return true;
  }
  return false;
}

// Expects two results of one op to hold the same values: the same bits, or both NaN.
void expect_same(const absl::StatusOr<HostTensor>& a, const absl::StatusOr<HostTensor>& b) {
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  const std::vector<double> x = testutil::as_doubles(*a), y = testutil::as_doubles(*b);
  ASSERT_EQ(x.size(), y.size());
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i]))) && ++bad <= 5) {
      ADD_FAILURE() << "element " << i << ": " << x[i] << " vs " << y[i];
    }
  }
}

// Random windows over random shapes, each of the four ops with oneDNN and with the runtime's
// own kernels: against the reference, or where the input holds a NaN (which the reference's
// maximum skips), the max pools against each other. A third of the rounds put infinities and
// a NaN in the input, a third in the gradient. oneDNN called directly takes every float32
// case without a non-finite value and gives the kernel's bits.
TEST(OnednnPoolTest, AgreesWithTheRuntimesKernelsOnRandomWindows) {
  if (!cpu::onednn_conv_enabled()) GTEST_SKIP() << "oneDNN's pools are off";
  const OnednnConvs every_size(true);
  static constexpr int64_t kChannels[] = {1, 2, 3, 8, 16, 17, 32};
  std::mt19937_64 rng(43);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {inf, -inf, std::numeric_limits<double>::quiet_NaN()};
  int taken = 0;
  for (int round = 0; round < 150; ++round) {
    const std::vector<int64_t> input = {pick(1, 3), pick(1, 12), pick(1, 12),
                                        kChannels[pick(0, 6)]};
    const Window w = random_window(rng, /*pool=*/true, input[1], input[2]);
    const Plan p = plan_of(input[1], input[2], w);
    const int where = round % 3;  // nowhere, the input, the gradient
    for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
      for (bool nchw : {false, true}) {
        SCOPED_TRACE(absl::StrCat(absl::StrJoin(input, "x"), " ", describe(w), " ",
                                  dtype_name(dtype), nchw ? " NCHW" : " NHWC",
                                  " non-finite values in operand ", where));
        Array4 x = random_array(rng, input, dtype);
        Array4 dy = random_array(rng, {input[0], p.out_h, p.out_w, input[3]}, dtype);
        if (where > 0) {
          Array4& target = where == 1 ? x : dy;
          for (double special : specials) target.v[rng() % target.v.size()] = special;
        }
        for (const PoolRun& r : pool_runs(w, dtype, nchw, x, dy)) {
          SCOPED_TRACE(op_name(r.op));
          absl::StatusOr<HostTensor> own;
          {
            OnednnConvs off(false);
            own = run_cpu(r.op, r.inputs, r.attrs);
          }
          const absl::StatusOr<HostTensor> by_onednn = run_cpu(r.op, r.inputs, r.attrs);
          const bool max = r.op == OpId::kMaxPool || r.op == OpId::kMaxPoolGrad;
          if (max && has_nan(x)) {
            expect_same(by_onednn, own);
          } else {
            expect_near(own, r.want, r.mag, r.terms, nchw);
            expect_near(by_onednn, r.want, r.mag, r.terms, nchw);
          }
          if (where > 0 || dtype != DType::kFloat32 || !by_onednn.ok()) continue;
          const absl::StatusOr<internal::ConvGeometry> g = internal::pool_geometry(
              r.op,
              r.op == OpId::kAvgPoolGrad ? Shape::make(r.attrs.dims).value() : r.inputs[0].shape(),
              r.attrs);
          ASSERT_TRUE(g.ok()) << g.status();
          std::vector<const void*> inputs;
          for (const HostTensor& t : r.inputs) inputs.push_back(t.data());
          HostTensor out = HostTensor::uninitialized(by_onednn->shape(), dtype);
          const absl::StatusOr<bool> done = cpu::onednn_conv(r.op, *g, dtype, inputs, out.data());
          ASSERT_TRUE(done.ok()) << done.status();
          EXPECT_TRUE(*done);
          if (!*done) continue;
          ++taken;
          expect_same(out, *by_onednn);
        }
      }
    }
  }
  EXPECT_GT(taken, 300);
}

}  // namespace
}  // namespace mt::conv_test
