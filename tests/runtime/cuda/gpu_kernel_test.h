#pragma once
// The fixture of the GPU-against-CPU kernel tests (gpu_conv_test.cc, gpu_batch_norm_test.cc,
// gpu_layer_norm_test.cc): small tensors stay unpinned so that every op runs the kernel of
// the device its scope names, and each test skips itself when no GPU is visible.

#include <cstdint>
#include <cstdlib>

#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {

inline constexpr DType kFloats[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                                    DType::kFloat16};

class GpuKernelTest : public RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    setenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING", "0", 1);  // compare kernels
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty())
      GTEST_SKIP() << "needs a GPU: none is visible";
  }
  void TearDown() override {
    RuntimeTest::TearDown();
    unsetenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING");
  }
};

// The number of elements of `shape`.
inline int64_t count(const Ints& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace mt::testing
