// LayerNorm, AddLayerNorm and LayerNormGrad on a GPU against the CPU through the runtime: every
// float dtype, each kernel path of Note [Layer norm on the GPU] (rows held by a warp in packs or
// element by element, rows of a block, rows too long for the scratch's partial rows, many
// rows per warp, no rows), over one and two trailing axes; the errors; the gradient
// GradientTape takes on each device, first and second order. The CPU kernels are checked
// against a reference in tests/kernels/layer_norm_kernels_test.cc. Every test skips itself
// when no GPU is visible.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/runtime/cuda/gpu_kernel_test.h"

namespace mt {
namespace {

using testing::count;
using testing::expect_same;
using testing::host;
using testing::kFloats;

class GpuLayerNormTest : public testing::GpuKernelTest {};

// A CPU tensor of `dtype` holding multiples of 1/8 in [-11/8, 11/8] plus `offset`.
Tensor input(DType dtype, const Ints& shape, int seed, float offset = 0) {
  DeviceScope cpu("/CPU:0");
  std::vector<float> v(count(shape));
  for (int64_t i = 0; i < count(shape); ++i) {
    v[i] = static_cast<float>((i * 7 + seed * 13) % 23 - 11) / 8 + offset;
  }
  return cast(internal::from_vector(v, shape), dtype);
}

double tolerance(DType dtype) {
  return dtype == DType::kFloat64 ? 1e-12 : dtype == DType::kFloat32 ? 1e-5 : 1e-2;
}

struct Case {
  Ints shape;
  int64_t axis;
};

void expect_forward_and_gradient(DType dtype, const Case& c) {
  const DType u = dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  const int begin = static_cast<int>(c.axis < 0 ? c.axis + c.shape.size() : c.axis);
  const Ints lead(c.shape.begin(), c.shape.begin() + begin);
  const Ints params(c.shape.begin() + begin, c.shape.end());
  const Tensor x = input(dtype, c.shape, 1, 0.5f), dy = input(dtype, c.shape, 2);
  const Tensor gamma = input(u, params, 3, 1), beta = input(u, params, 4);
  const nn::LayerNormOptions o{c.axis, 1e-5};
  const std::string what =
      absl::StrCat(dtype_name(dtype), " (", absl::StrJoin(c.shape, ", "), ") axis ", c.axis);
  const double tol = tolerance(dtype);
  expect_same(what + " forward",
              [&] {
                const nn::LayerNormResult r = nn::layer_norm(x, gamma, beta, o);
                return std::vector<Tensor>{r.y, r.mean, r.inv_std};
              },
              {tol, dtype == DType::kFloat64 ? 1e-12 : 1e-5});
  // Both devices differentiate at the CPU's statistics.
  nn::LayerNormResult stats;
  {
    DeviceScope cpu("/CPU:0");
    stats = nn::layer_norm(x, gamma, beta, o);
  }
  // dgamma and dbeta sum over the rows, in another order on each device.
  const double sums = dtype == DType::kFloat64 ? 1e-11 : 1e-4 * std::sqrt(count(lead) + 1.0);
  expect_same(what + " gradient",
              [&] {
                const nn::LayerNormGradResult g =
                    nn::layer_norm_grad(dy, x, gamma, stats.mean, stats.inv_std, o);
                return std::vector<Tensor>{g.dx, g.dgamma, g.dbeta};
              },
              {dtype == DType::kFloat32 ? 1e-4 : tol, sums});
}

TEST_F(GpuLayerNormTest, ForwardAndGradientMatchTheCpu) {
  const Case cases[] = {
      {{5, 7}, -1},      // a warp per row, element by element
      {{8, 768}, -1},    // packs of 16 bytes (GPT-2's width)
      {{3, 33}, -1},     // rows not a whole number of packs
      {{2, 3, 8}, -2},   // two trailing axes
      {{300, 64}, -1},   // several warps and blocks of partial rows
      {{2000, 24}, -1},  // many rows per warp
      {{4, 1024}, -1},   // the longest rows a warp holds (float32, the 2-byte floats)
      {{4, 2048}, -1},   // a block per row
      {{2, 5001}, -1},   // a block per row, element by element
      {{1, 1}, -1},      // one element: y is beta, dx zero
      {{0, 16}, -1},     // no rows: dgamma and dbeta zeros
  };
  for (DType dtype : kFloats) {
    for (const Case& c : cases) expect_forward_and_gradient(dtype, c);
  }
  // Rows too long for one partial row of dgamma and dbeta in the scratch (1 MiB).
  expect_forward_and_gradient(DType::kFloat32, {{2, 140000}, -1});
}

TEST_F(GpuLayerNormTest, AddLayerNormMatchesTheCpu) {
  for (DType dtype : kFloats) {
    const DType u = dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    for (const Ints& shape : {Ints{5, 7}, Ints{64, 768}, Ints{3, 2048}, Ints{0, 8}}) {
      const Tensor x = input(dtype, shape, 1, 0.5f), r = input(dtype, shape, 2);
      const Tensor gamma = input(u, {shape[1]}, 3, 1), beta = input(u, {shape[1]}, 4);
      const double tol = tolerance(dtype);
      expect_same(absl::StrCat(dtype_name(dtype), " (", absl::StrJoin(shape, ", "), ")"),
                  [&] {
                    const nn::AddLayerNormResult a = nn::add_layer_norm(x, r, gamma, beta);
                    return std::vector<Tensor>{a.y, a.sum, a.mean, a.inv_std};
                  },
                  {tol, 0, dtype == DType::kFloat64 ? 1e-12 : 1e-5});
    }
  }
}

TEST_F(GpuLayerNormTest, BadInputIsTheOpsOwnErrorOnTheGpu) {
  DeviceScope scope("/GPU:0");
  const Tensor x = input(DType::kFloat32, {2, 5}, 1);
  const Tensor four = input(DType::kFloat32, {4}, 2), five = input(DType::kFloat32, {5}, 3);
  try {
    nn::layer_norm(x, four, five);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              "[LayerNorm] gamma must have the shape of the normalised axes of x, (5,), got (4,)");
  }
}

// The tape's gradients of y and of the statistics, and a second-order gradient (the composite
// path of grad_layer_norm.cc), on each device.
TEST_F(GpuLayerNormTest, TapeGradientsMatchTheCpu) {
  const Tensor x = input(DType::kFloat32, {6, 40}, 1, 0.25f);
  const Tensor gamma = input(DType::kFloat32, {40}, 2, 1), beta = input(DType::kFloat32, {40}, 3);
  const Tensor w = input(DType::kFloat32, {6, 40}, 4);
  expect_same("tape",
              [&] {
                GradientTape tape;
                tape.watch(x), tape.watch(gamma), tape.watch(beta);
                const nn::LayerNormResult r = nn::layer_norm(x, gamma, beta);
                const Tensor loss =
                    reduce_sum(mul(r.y, w)) + reduce_sum(r.mean) + reduce_sum(r.inv_std);
                return tape.gradient(loss, {x, gamma, beta});
              },
              {1e-4});
  expect_same("second order",
              [&] {
                GradientTape outer;
                outer.watch(x);
                Tensor dx;
                {
                  GradientTape inner;
                  inner.watch(x);
                  const Tensor loss = reduce_sum(mul(nn::layer_norm(x, gamma, beta).y, w));
                  dx = inner.gradient(loss, {x})[0];
                }
                return outer.gradient(reduce_sum(mul(dx, dx)), {x});
              },
              {1e-3});
}

}  // namespace
}  // namespace mt
