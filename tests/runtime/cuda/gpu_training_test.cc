// Variables, gradients and optimizers on a GPU: the variables' ops in place on the GPU,
// UnsortedSegmentSum against the CPU, gradients of a small network on the GPU against the
// same on the CPU, and placements of the gradient ops. Every test skips itself without a GPU.
#include <cmath>
#include <cstdlib>

#include "gmock/gmock.h"
#include "runtime/eager/tensor_impl.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

class GpuTrainingTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty())
      GTEST_SKIP() << "needs a GPU: none is visible";
  }
};

std::vector<float> host(const Tensor& t) {
  DeviceScope cpu("/CPU:0");
  return cast(t, DType::kFloat32).to_vector<float>();
}

TEST_F(GpuTrainingTest, VariablesLiveOnTheGpuAndAssignInPlace) {
  Variable v(constant({1.f, 2.f, 3.f}));  // default placement: GPU:0
  EXPECT_NE(v.device().find("GPU:0"), std::string::npos) << v.device();
  const void* data = v.state()->value.impl()->data;
  {
    DeviceScope cpu("/CPU:0");  // pinned to the variable's device all the same
    v.assign_add(constant({1.f, 1.f, 1.f}));
    v.assign_sub(constant({0.5f, 0.5f, 0.5f}));
  }
  EXPECT_EQ(v.state()->value.impl()->data, data);
  EXPECT_EQ(host(v), (std::vector<float>{1.5f, 2.5f, 3.5f}));
  const Tensor held = v.read_value();
  v.assign(constant({7.f, 8.f, 9.f}));  // copy on write: `held` keeps its values
  EXPECT_EQ(host(held), (std::vector<float>{1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(host(v), (std::vector<float>{7.f, 8.f, 9.f}));
}

TEST_F(GpuTrainingTest, UnsortedSegmentSumMatchesTheCpu) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                      DType::kBFloat16, DType::kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    std::vector<float> data(1000 * 3);
    std::vector<int64_t> ids(1000);
    for (int i = 0; i < 3000; ++i) data[i] = static_cast<float>(i % 7 - 3);
    for (int i = 0; i < 1000; ++i) ids[i] = (i * 37) % 13 - 1;  // -1 drops the row
    std::vector<float> results[2];
    for (int d = 0; d < 2; ++d) {
      DeviceScope scope(d == 0 ? "/GPU:0" : "/CPU:0");
      const Tensor x = cast(constant(data, {1000, 3}), dtype);
      results[d] = host(unsorted_segment_sum(x, constant(ids, {1000}), 12));
    }
    EXPECT_EQ(results[0], results[1]);
  }
}

// Gradients of a dense layer with softmax cross-entropy, on one device.
std::vector<std::vector<float>> layer_gradients(const char* device) {
  DeviceScope scope(device);
  Variable w(reshape(constant({0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f}), {3, 2}));
  Variable b(constant({0.01f, -0.02f}));
  const Tensor x = reshape(constant({1.f, 2.f, 3.f, -1.f, 0.5f, 2.f, 0.f, 1.f, -2.f}), {3, 3});
  GradientTape tape;
  const Tensor logits = nn::bias_add(matmul(x, w), b);
  const Tensor loss =
      reduce_mean(nn::sparse_softmax_cross_entropy_with_logits(constant({0, 1, 1}), tanh(logits)));
  const std::vector<const Variable*> sources = {&w, &b};
  const std::vector<Tensor> g = tape.gradient(loss, sources);
  EXPECT_NE(g[0].device().find(device + 1), std::string::npos) << g[0].device();
  return {host(g[0]), host(g[1])};
}

TEST_F(GpuTrainingTest, GradientsOnTheGpuMatchTheCpu) {
  const auto gpu = layer_gradients("/GPU:0");
  const auto cpu = layer_gradients("/CPU:0");
  for (size_t k = 0; k < gpu.size(); ++k) {
    ASSERT_EQ(gpu[k].size(), cpu[k].size());
    for (size_t i = 0; i < gpu[k].size(); ++i) EXPECT_NEAR(gpu[k][i], cpu[k][i], 1e-6);
  }
}

TEST_F(GpuTrainingTest, AdamStepsMatchTheCpu) {
  std::vector<float> results[2];
  for (int d = 0; d < 2; ++d) {
    DeviceScope scope(d == 0 ? "/GPU:0" : "/CPU:0");
    Variable v(constant({1.f, -2.f, 3.f}));
    optimizers::Adam adam(0.1);
    for (int step = 0; step < 10; ++step) {
      GradientTape tape;
      const Tensor loss = reduce_sum(square(v));
      const std::vector<const Variable*> sources = {&v};
      adam.apply_gradients({{tape.gradient(loss, sources)[0], v}});
    }
    results[d] = host(v);
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(results[0][i], results[1][i], 1e-6);
}

// The fused step (ResourceApplyAdam) on each float dtype, over more elements than one block
// of threads, against the CPU's: the same arithmetic, up to the GPU's fused multiply-adds.
TEST_F(GpuTrainingTest, FusedAdamOnEveryFloatDtypeMatchesTheCpu) {
  constexpr int64_t kN = 100003;
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16}) {
    std::vector<float> results[2];
    for (int d = 0; d < 2; ++d) {
      DeviceScope scope(d == 0 ? "/GPU:0" : "/CPU:0");
      Variable v(cast(random::stateless_normal({kN}, {1, 2}), dtype));
      const Tensor g = cast(random::stateless_normal({kN}, {3, 4}), dtype);
      optimizers::Adam adam(0.01);
      debugging::set_log_device_placement(d == 0);
      for (int step = 0; step < 3; ++step) adam.apply_gradients({{g, v}});
      debugging::set_log_device_placement(false);
      results[d] = host(v);
    }
    EXPECT_THAT(log(), ::testing::Contains("Executing op ResourceApplyAdam in device "
                                           "/job:localhost/replica:0/task:0/device:GPU:0"));
    const double tolerance = dtype == DType::kBFloat16  ? 1e-2
                             : dtype == DType::kFloat16 ? 2e-3
                                                        : 1e-5;
    int64_t far = 0;
    for (int64_t i = 0; i < kN; ++i) {
      far += std::fabs(results[0][i] - results[1][i]) > tolerance * (1 + std::fabs(results[1][i]));
    }
    EXPECT_EQ(far, 0) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace mt
