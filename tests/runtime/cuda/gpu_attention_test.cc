// DotProductAttention and DotProductAttentionGrad on a GPU against the CPU through the runtime:
// every float dtype; each tile size of Note [Attention on the GPU] (depths padded to 32, 64,
// 128 and 256, so 4, 2 or 1 rows a thread by dtype); causal or not, with fewer or more queries
// than keys and counts that are not whole tiles; grouped kv heads; depths that differ; no keys
// (o = 0, lse = -inf, zero gradients), no queries, no batch; depths past the GPU's limit; the
// tape's gradients, first and second order. The CPU kernels are checked against a reference
// in tests/kernels/attention_kernels_test.cc. Every test skips itself when no GPU is visible.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/runtime/cuda/gpu_kernel_test.h"

namespace mt {
namespace {

using testing::count;
using testing::expect_same;
using testing::host;
using testing::kFloats;

class GpuAttentionTest : public testing::GpuKernelTest {};

// A CPU tensor of `dtype` holding multiples of 1/8 in [-11/8, 11/8], times `factor`.
Tensor input(DType dtype, const Ints& shape, int seed, float factor = 1) {
  DeviceScope cpu("/CPU:0");
  std::vector<float> v(count(shape));
  for (int64_t i = 0; i < count(shape); ++i) {
    v[i] = static_cast<float>((i * 7 + seed * 13) % 23 - 11) / 8 * factor;
  }
  return cast(internal::from_vector(v, shape), dtype);
}

double tolerance(DType dtype) {
  return dtype == DType::kFloat64 ? 1e-12 : dtype == DType::kFloat32 ? 2e-5 : 1e-2;
}

// q (b, t, h, d), k (b, s, hk, d), v (b, s, hk, dv).
struct Case {
  int64_t b, t, s, h, hk, d, dv;
  bool causal;
  std::string str() const {
    return absl::StrCat("b", b, " t", t, " s", s, " h", h, "/", hk, " d", d, "/", dv,
                        causal ? " causal" : "");
  }
};

void expect_forward_and_gradient(DType dtype, const Case& c) {
  const Tensor q = input(dtype, {c.b, c.t, c.h, c.d}, 1, 0.5f);
  const Tensor k = input(dtype, {c.b, c.s, c.hk, c.d}, 2, 0.5f);
  const Tensor v = input(dtype, {c.b, c.s, c.hk, c.dv}, 3);
  const Tensor d_o = input(dtype, {c.b, c.t, c.h, c.dv}, 4);
  const nn::DotProductAttentionOptions o{std::nullopt, c.causal};
  const std::string what = absl::StrCat(dtype_name(dtype), " ", c.str());
  const double tol = tolerance(dtype);
  expect_same(what + " forward",
              [&] {
                const nn::DotProductAttentionResult r = nn::dot_product_attention(q, k, v, o);
                return std::vector<Tensor>{r.o, r.lse};
              },
              {tol, dtype == DType::kFloat64 ? 1e-12 : 1e-5});
  // Both devices differentiate at the CPU's o and lse.
  nn::DotProductAttentionResult fwd;
  {
    DeviceScope cpu("/CPU:0");
    fwd = nn::dot_product_attention(q, k, v, o);
  }
  expect_same(what + " gradient",
              [&] {
                const nn::DotProductAttentionGradResult g =
                    nn::dot_product_attention_grad(d_o, q, k, v, fwd.o, fwd.lse, o);
                return std::vector<Tensor>{g.dq, g.dk, g.dv};
              },
              {dtype == DType::kFloat32 ? 1e-4 : tol});
}

TEST_F(GpuAttentionTest, ForwardAndGradientMatchTheCpu) {
  const Case cases[] = {
      {2, 64, 64, 2, 2, 64, 64, true},    // GPT-2's depth, whole tiles
      {2, 70, 50, 3, 3, 64, 64, false},   // partial tiles, more queries than keys
      {1, 50, 130, 2, 2, 64, 64, true},   // fewer queries than keys
      {1, 130, 50, 2, 2, 64, 64, true},   // more: the last rows see every key
      {1, 37, 41, 4, 2, 16, 16, false},   // depth 32's tiles, two heads per kv head
      {1, 37, 41, 4, 1, 32, 24, true},    // one kv head, a value depth that differs
      {1, 33, 65, 2, 2, 96, 80, false},   // depth 128's tiles
      {1, 65, 33, 2, 1, 128, 128, true},  // the largest depth of 128's tiles
      {1, 40, 40, 1, 1, 200, 256, true},  // depth 256's tiles
      {2, 3, 1, 1, 1, 8, 8, true},        // one key: every row is v's row
      {1, 5, 0, 2, 1, 8, 4, false},       // no keys: o = 0, lse = -inf, dq = 0
      {1, 5, 0, 2, 1, 8, 4, true},       {1, 0, 6, 2, 2, 8, 8, true},  // no queries: dk = dv = 0
      {0, 4, 4, 2, 2, 8, 8, false},                                    // no batch
  };
  for (DType dtype : kFloats) {
    for (const Case& c : cases) expect_forward_and_gradient(dtype, c);
  }
  // Many tiles of GPT-2's shape, float32 and bfloat16.
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    expect_forward_and_gradient(dtype, {2, 300, 300, 4, 4, 64, 64, true});
  }
}

TEST_F(GpuAttentionTest, BadInputIsTheOpsOwnErrorOnTheGpu) {
  DeviceScope scope("/GPU:0");
  const Tensor q = input(DType::kFloat32, {1, 3, 4, 8}, 1);
  const Tensor k = input(DType::kFloat32, {1, 5, 3, 8}, 2),
               v = input(DType::kFloat32, {1, 5, 3, 8}, 3);
  const Error e = testing::expect_error([&] { nn::dot_product_attention(q, k, v); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(e.what()),
            "[DotProductAttention] the heads of k and v must divide those of q, got 3 and 4 "
            "(shapes (1, 3, 4, 8) and (1, 5, 3, 8))");
}

TEST_F(GpuAttentionTest, DepthsPast256AreUnimplemented) {
  const Tensor q = input(DType::kFloat32, {1, 2, 1, 320}, 1);
  const Tensor k = input(DType::kFloat32, {1, 2, 1, 320}, 2),
               v = input(DType::kFloat32, {1, 2, 1, 8}, 3);
  DeviceScope scope("/GPU:0");
  const Error e = testing::expect_error([&] { nn::dot_product_attention(q, k, v); });
  EXPECT_EQ(e.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(std::string(e.what()),
            "[DotProductAttention] the GPU kernels take depths up to 256, got 320; run the op on "
            "the CPU");
}

// The tape's gradients of o (the DotProductAttentionGrad row), of o and lse and a second-order
// gradient (the composite path of grad_attention.cc), on each device.
TEST_F(GpuAttentionTest, TapeGradientsMatchTheCpu) {
  const Tensor q = input(DType::kFloat32, {2, 9, 4, 16}, 1, 0.5f);
  const Tensor k = input(DType::kFloat32, {2, 11, 2, 16}, 2, 0.5f);
  const Tensor v = input(DType::kFloat32, {2, 11, 2, 8}, 3);
  const Tensor w = input(DType::kFloat32, {2, 9, 4, 8}, 4);
  const nn::DotProductAttentionOptions causal{std::nullopt, true};
  expect_same("tape",
              [&] {
                GradientTape tape;
                tape.watch(q), tape.watch(k), tape.watch(v);
                const Tensor loss =
                    reduce_sum(mul(nn::dot_product_attention(q, k, v, causal).o, w));
                return tape.gradient(loss, {q, k, v});
              },
              {1e-4});
  expect_same("tape through lse",
              [&] {
                GradientTape tape;
                tape.watch(q), tape.watch(k), tape.watch(v);
                const nn::DotProductAttentionResult r = nn::dot_product_attention(q, k, v, causal);
                return tape.gradient(reduce_sum(mul(r.o, w)) + reduce_sum(r.lse), {q, k, v});
              },
              {1e-4});
  expect_same("second order",
              [&] {
                GradientTape outer;
                outer.watch(q);
                Tensor dq;
                {
                  GradientTape inner;
                  inner.watch(q);
                  const Tensor loss =
                      reduce_sum(mul(nn::dot_product_attention(q, k, v, causal).o, w));
                  dq = inner.gradient(loss, {q})[0];
                }
                return outer.gradient(reduce_sum(mul(dq, dq)), {q});
              },
              {1e-3});
}

}  // namespace
}  // namespace mt
