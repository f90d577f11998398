#pragma once
// The fixture of the GPU-against-CPU kernel tests (gpu_conv_test.cc, gpu_batch_norm_test.cc,
// gpu_layer_norm_test.cc, gpu_attention_test.cc) and their comparison of one op's outputs on
// both devices: small tensors stay unpinned so that every op runs the kernel of
// the device its scope names, and each test skips itself when no GPU is visible.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

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

// `t`'s values as doubles, read on the CPU.
inline std::vector<double> host(const Tensor& t) {
  DeviceScope cpu("/CPU:0");
  return cast(t, DType::kFloat64).to_vector<double>();
}

// Runs `op` under /GPU:0 and /CPU:0 and expects the same outputs (infinities and NaN equal to
// themselves), output i within tols[i] (the last for the rest), relative to 1 + |cpu|.
template <typename Op>
inline void expect_same(const std::string& what, Op op, std::vector<double> tols) {
  SCOPED_TRACE(what);
  std::vector<Tensor> gpu, cpu;
  {
    DeviceScope scope("/GPU:0");
    gpu = op();
  }
  {
    DeviceScope scope("/CPU:0");
    cpu = op();
  }
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < gpu.size(); ++i) {
    const double tol = tols[std::min(i, tols.size() - 1)];
    EXPECT_NE(gpu[i].device().find("GPU"), std::string::npos) << gpu[i].device();
    ASSERT_EQ(gpu[i].shape(), cpu[i].shape()) << "output " << i;
    const std::vector<double> g = host(gpu[i]), c = host(cpu[i]);
    int bad = 0;
    for (size_t j = 0; j < g.size(); ++j) {
      const bool same = std::isnan(c[j])   ? std::isnan(g[j])
                        : std::isinf(c[j]) ? g[j] == c[j]
                                           : std::fabs(g[j] - c[j]) <= tol * (1 + std::fabs(c[j]));
      if (!same && ++bad <= 5) {
        ADD_FAILURE() << "output " << i << " element " << j << ": " << g[j] << " vs " << c[j];
      }
    }
    EXPECT_EQ(bad, 0) << "output " << i;
  }
}

// The number of elements of `shape`.
inline int64_t count(const Ints& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace mt::testing
