// The ops whose inputs have shapes or dtypes of their own, on a GPU against the CPU through
// the runtime: the comparisons (bool outputs), SelectV2 (three-way broadcasting), ArgMax
// and ArgMin (both kernel layouts), BiasAdd and SparseSoftmaxCrossEntropyWithLogits (both
// outputs). Every test skips itself when no GPU is visible.
#include <cmath>
#include <cstdlib>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

constexpr DType kNumeric[] = {DType::kFloat32, DType::kFloat64,  DType::kInt32,
                              DType::kInt64,   DType::kBFloat16, DType::kFloat16};

class GpuIndexNnOpsTest : public testing::RuntimeTest {
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

// A CPU tensor of `dtype` holding small integers with many ties (exact in every dtype).
Tensor input(DType dtype, const Ints& shape, int seed) {
  DeviceScope cpu("/CPU:0");
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + seed * 13) % 11 - 5);
  return cast(internal::from_vector(v, shape), dtype);
}

// A CPU tensor of class labels in [0, shape[1]) for logits of `shape`.
Tensor labels_for(const Ints& shape, DType dtype) {
  DeviceScope cpu("/CPU:0");
  std::vector<float> l(shape[0]);
  for (int64_t i = 0; i < shape[0]; ++i) l[i] = static_cast<float>(i * 5 % shape[1]);
  return cast(internal::from_vector(l, {shape[0]}), dtype);
}

std::vector<double> host(const Tensor& t) {
  DeviceScope cpu("/CPU:0");
  const std::vector<double> v = cast(t, DType::kFloat64).to_vector<double>();
  return v;
}

// Runs `op` under /GPU:0 and /CPU:0 and expects the same outputs (NaN equal to NaN), within
// `tol` relative.
template <typename Op>
void expect_same(const std::string& what, Op op, double tol = 0) {
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
    EXPECT_NE(gpu[i].device().find("GPU"), std::string::npos) << gpu[i].device();
    ASSERT_EQ(gpu[i].shape(), cpu[i].shape());
    ASSERT_EQ(gpu[i].dtype(), cpu[i].dtype());
    const std::vector<double> g = host(gpu[i]), c = host(cpu[i]);
    for (size_t j = 0; j < g.size(); ++j) {
      if (std::isnan(c[j])) {
        EXPECT_TRUE(std::isnan(g[j])) << "output " << i << " element " << j;
      } else {
        EXPECT_LE(std::fabs(g[j] - c[j]), tol * (1 + std::fabs(c[j])))
            << "output " << i << " element " << j << ": " << g[j] << " vs " << c[j];
      }
    }
  }
}

TEST_F(GpuIndexNnOpsTest, ComparisonsMatchTheCpu) {
  const std::vector<std::pair<Ints, Ints>> shapes = {
      {{1001}, {1001}}, {{3, 1}, {1, 67}}, {{2, 3, 4}, {4}}, {{}, {33}}, {{0, 3}, {3}}};
  for (DType d : kNumeric) {
    for (const auto& [sa, sb] : shapes) {
      const std::string what = std::string(dtype_name(d)) + " " + std::to_string(sa.size());
      expect_same(what, [&] {
        const Tensor a = input(d, sa, 1), b = input(d, sb, 2);
        return std::vector{equal(a, b),      not_equal(a, b), less(a, b),
                           less_equal(a, b), greater(a, b),   greater_equal(a, b)};
      });
    }
  }
}

TEST_F(GpuIndexNnOpsTest, WhereMatchesTheCpu) {
  const std::vector<std::vector<Ints>> shapes = {{{4097}, {4097}, {4097}},
                                                 {{3, 1}, {1, 4}, {4}},
                                                 {{2, 1, 3}, {5, 1}, {1}},
                                                 {{}, {2, 3}, {2, 3}},
                                                 {{0, 2}, {2}, {2}}};
  for (DType d : {DType::kFloat32, DType::kInt64, DType::kBool, DType::kFloat16}) {
    for (const std::vector<Ints>& s : shapes) {
      expect_same(dtype_name(d), [&] {
        const Tensor c = greater(input(DType::kInt32, s[0], 3), input(DType::kInt32, s[0], 4));
        return std::vector{where(c, input(d, s[1], 5), input(d, s[2], 6))};
      });
    }
  }
}

TEST_F(GpuIndexNnOpsTest, ArgMaxAndArgMinMatchTheCpuInBothLayouts) {
  const std::vector<std::pair<Ints, int64_t>> cases = {
      {{7}, 0}, {{33, 1000}, 1}, {{1000, 33}, 0}, {{2, 65, 3}, 1}, {{5, 70}, -1}, {{4, 0}, 0}};
  for (DType d : kNumeric) {
    for (const auto& [shape, axis] : cases) {
      for (DType out : {DType::kInt32, DType::kInt64}) {
        expect_same(dtype_name(d), [&] {
          const Tensor x = input(d, shape, 7);
          return std::vector{argmax(x, axis, out), argmin(x, axis, out)};
        });
      }
    }
  }
}

TEST_F(GpuIndexNnOpsTest, ArgMaxSkipsNanOnBothDevices) {
  for (const char* device : {"/GPU:0", "/CPU:0"}) {
    DeviceScope scope(device);
    const float nan = std::nanf("");
    const Tensor x = reshape(constant({1.f, nan, 3.f, nan, nan, nan}), {2, 3});
    EXPECT_EQ(argmax(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{2, 0})) << device;
    EXPECT_EQ(argmin(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0})) << device;
  }
}

TEST_F(GpuIndexNnOpsTest, BiasAddMatchesTheCpu) {
  for (DType d : kNumeric) {
    for (const Ints& shape : std::vector<Ints>{{2, 3}, {64, 4, 8}, {1000, 5}, {0, 4}}) {
      expect_same(dtype_name(d), [&] {
        return std::vector{nn::bias_add(input(d, shape, 8), input(d, {shape.back()}, 9))};
      });
    }
  }
}

TEST_F(GpuIndexNnOpsTest, SparseCrossEntropyMatchesTheCpuWithItsGradient) {
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16}) {
    const double tol = d == DType::kFloat64 ? 1e-12 : d == DType::kFloat32 ? 1e-5 : 1e-2;
    for (const Ints& shape : std::vector<Ints>{{2, 3}, {64, 10}, {5, 1000}, {0, 4}}) {
      for (DType label : {DType::kInt32, DType::kInt64}) {
        expect_same(
            dtype_name(d),
            [&] {
              const Tensor labels = labels_for(shape, label);
              const Tensor logits = input(d, shape, 10);
              auto [loss, grad] =
                  nn::sparse_softmax_cross_entropy_with_logits_and_grad(labels, logits);
              return std::vector{loss, grad};
            },
            tol);
      }
    }
  }
}

}  // namespace
}  // namespace mt
