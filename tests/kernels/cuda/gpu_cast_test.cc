// Cast of NaN and infinities to integers gives the same on the GPU as on the CPU: it
// saturates and maps NaN to 0 (docs/bad-input.md, Note [Float to integer casts] in
// kernels/cpu/isa/cast_loops.cc; the GPU kernel is kernels/cuda/cast_kernels.cu). Skips
// itself without a GPU.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

class GpuCastTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty()) GTEST_SKIP() << "needs a GPU";
  }
};

TEST_F(GpuCastTest, NanAndInfinitiesOnAGpuCastAsOnTheCpu) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {NAN, kInf, -kInf, 1e10f, -2.5f};
  const std::vector<int32_t> expected = {0, std::numeric_limits<int32_t>::max(),
                                         std::numeric_limits<int32_t>::min(),
                                         std::numeric_limits<int32_t>::max(), -2};
  Tensor on_cpu;
  {
    DeviceScope cpu("/CPU:0");
    on_cpu = cast(constant(values, {5}), DType::kInt32);
  }
  DeviceScope gpu("/GPU:0");
  Tensor x = constant(values, {5});
  ASSERT_EQ(x.device(), "/job:localhost/replica:0/task:0/device:GPU:0");
  Tensor y = cast(x, DType::kInt32);
  EXPECT_EQ(y.device(), x.device());  // the GPU kernel ran
  EXPECT_EQ(y.to_vector<int32_t>(), expected);
  EXPECT_EQ(on_cpu.to_vector<int32_t>(), expected);
  EXPECT_EQ(cast(x, DType::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{0, std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min(), 10000000000, -2}));
}

}  // namespace
}  // namespace mt
