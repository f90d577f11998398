// bfloat16 and float16 through the public API on GPU:0: each op runs on the GPU (its own
// kernel, no fallback to a CPU), sums and MatMul accumulate in float32, and element-wise
// results are the float32 result rounded once (Note [Half arithmetic on the GPU] in
// kernels/cuda/half_math.h). The conformance suite (tests/kernels/cuda/) covers the kernels
// case by case; this checks what a user sees. Skips itself without a GPU.
#include <cmath>
#include <vector>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

constexpr char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";
constexpr DType kHalfDTypes[] = {DType::kBFloat16, DType::kFloat16};

class GpuHalfTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty()) GTEST_SKIP() << "needs a GPU";
  }
};

// Returns the values of a bfloat16 or float16 tensor as floats (exact).
std::vector<float> floats(const Tensor& t) {
  std::vector<float> out;
  if (t.dtype() == DType::kBFloat16) {
    for (bfloat16 v : t.to_vector<bfloat16>()) out.push_back(static_cast<float>(v));
  } else {
    for (float16 v : t.to_vector<float16>()) out.push_back(static_cast<float>(v));
  }
  return out;
}

// Returns x rounded to `dtype` (nearest, ties to even), as a float.
float round_to(float x, DType dtype) {
  return dtype == DType::kBFloat16 ? static_cast<float>(bfloat16(x))
                                   : static_cast<float>(float16(x));
}

// In a 2-byte accumulator a sum of ones stops growing at 2^8 (bfloat16) or 2^11 (float16);
// in float32 it reaches 4096, which both dtypes hold exactly.
TEST_F(GpuHalfTest, SumMeanAndMatMulAccumulateInFloat32) {
  DeviceScope gpu("/GPU:0");
  for (DType dtype : kHalfDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor row = ones({1, 4096}, dtype), column = ones({4096, 1}, dtype);
    Tensor sum = reduce_sum(row), mean = reduce_mean(row), product = matmul(row, column);
    for (const Tensor& t : {sum, mean, product}) EXPECT_EQ(t.device(), kGpu0);
    EXPECT_EQ(floats(sum), std::vector<float>{4096});
    EXPECT_EQ(floats(mean), std::vector<float>{1});
    EXPECT_EQ(floats(product), std::vector<float>{4096});
    EXPECT_EQ(floats(add_n(std::vector<Tensor>(3, row)))[4095], 3.f);
  }
}

TEST_F(GpuHalfTest, ElementwiseOpsRoundTheFloat32ResultOnce) {
  const std::vector<float> a = {0.1f, -1.7f, 3.3f, 0.f, -0.f, 250.5f, 7e-3f, -2.f};
  const std::vector<float> b = {0.3f, 3.f, -0.7f, 1.9f};  // broadcast along rows of a
  DeviceScope gpu("/GPU:0");
  for (DType dtype : kHalfDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor x = constant(a, {2, 4}, dtype), y = constant(b, {4}, dtype);
    const std::vector<float> xs = floats(x), ys = floats(y);
    struct Binary {
      Tensor (*op)(const Tensor&, const Tensor&);
      float (*ref)(float, float);
    };
    const Binary binaries[] = {{add, [](float p, float q) { return p + q; }},
                               {sub, [](float p, float q) { return p - q; }},
                               {mul, [](float p, float q) { return p * q; }},
                               {div, [](float p, float q) { return p / q; }}};
    for (const Binary& f : binaries) {
      Tensor z = f.op(x, y);
      EXPECT_EQ(z.device(), kGpu0);
      std::vector<float> want;
      for (size_t i = 0; i < xs.size(); ++i)
        want.push_back(round_to(f.ref(xs[i], ys[i % 4]), dtype));
      EXPECT_EQ(floats(z), want);
    }
    std::vector<float> neg_want, abs_want, relu_want;
    for (float v : xs) {
      neg_want.push_back(-v);
      abs_want.push_back(std::fabs(v));
      relu_want.push_back(v < 0 ? 0.f : v);
    }
    EXPECT_EQ(floats(neg(x)), neg_want);
    EXPECT_EQ(floats(abs(x)), abs_want);
    EXPECT_EQ(floats(relu(x)), relu_want);
    const std::vector<float> e = floats(exp(x));
    const double u = dtype == DType::kBFloat16 ? 0x1p-8 : 0x1p-11;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = round_to(std::exp(xs[i]), dtype);  // inf past float16's range
      if (std::isinf(want)) {
        EXPECT_EQ(e[i], want) << i;
      } else {
        EXPECT_NEAR(e[i], want, 2 * u * std::fabs(want)) << i;  // at most one ulp apart
      }
    }
  }
}

// 1 + 2^-8 lies halfway between bfloat16's 1 and 1 + 2^-7: it rounds to the even one, 1;
// 1 + 3 x 2^-8 to 1 + 2^-6. float16 keeps both; 1 + 2^-11 is its halfway case.
TEST_F(GpuHalfTest, CastsRoundToNearestEvenOnTheGpu) {
  DeviceScope gpu("/GPU:0");
  Tensor x = constant({1 + 0x1p-8f, 1 + 3 * 0x1p-8f, 1 + 0x1p-11f, -2.5f});
  Tensor b = cast(x, DType::kBFloat16), h = cast(x, DType::kFloat16);
  EXPECT_EQ(b.device(), kGpu0);
  EXPECT_EQ(h.device(), kGpu0);
  EXPECT_EQ(floats(b), (std::vector<float>{1, 1 + 0x1p-6f, 1, -2.5f}));
  EXPECT_EQ(floats(h), (std::vector<float>{1 + 0x1p-8f, 1 + 3 * 0x1p-8f, 1, -2.5f}));
  EXPECT_EQ(cast(b, DType::kFloat32).to_vector<float>(), floats(b));
  EXPECT_EQ(cast(h, DType::kInt32).to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 1, -2}));
  EXPECT_EQ(floats(cast(h, DType::kBFloat16)), (std::vector<float>{1, 1 + 0x1p-6f, 1, -2.5f}));
}

TEST_F(GpuHalfTest, FillAndIdentityStayOnTheGpu) {
  DeviceScope gpu("/GPU:0");
  for (DType dtype : kHalfDTypes) {
    Tensor f = fill({1001}, -3.25, dtype);
    Tensor copy = identity(f);
    EXPECT_EQ(copy.device(), kGpu0);
    EXPECT_EQ(floats(copy), std::vector<float>(1001, -3.25f));
  }
}

}  // namespace
}  // namespace mt
