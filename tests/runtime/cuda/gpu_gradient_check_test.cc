// The central-difference gradient checks of every differentiable op (gradient_check.h), run
// on the GPU: inputs, forward ops and gradient ops all on GPU:0, in float64.
#include "tests/runtime/gradient_check.h"

namespace mt::testing {
namespace {

class GpuGradientCheckTest : public GradientCheckTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    GradientCheckTest::SetUp();
    if (config::list_physical_devices("GPU").empty())
      GTEST_SKIP() << "needs a GPU: none is visible";
  }
};

TEST_F(GpuGradientCheckTest, MathGradientsMatchFiniteDifferencesOnTheGpu) {
  for (const GradCase& c : math_grad_cases()) check(c, "/GPU:0");
}

TEST_F(GpuGradientCheckTest, ArrayGradientsMatchFiniteDifferencesOnTheGpu) {
  for (const GradCase& c : array_grad_cases()) check(c, "/GPU:0");
}

}  // namespace
}  // namespace mt::testing
