// ScatterNd, TensorScatterUpdate, TensorScatterAdd, ClipByValue and Gelu on a GPU against the
// CPU: every dtype the rows take, both index dtypes, duplicates (added), broadcast bounds and
// both forms of Gelu; an index row out of range is the CPU's InvalidArgument on the GPU too.
// Every test skips itself when no GPU is visible.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64,  DType::kInt32,  DType::kInt64,
                             DType::kBool,    DType::kBFloat16, DType::kFloat16};
constexpr DType kNumericDTypes[] = {DType::kFloat32, DType::kFloat64,  DType::kInt32,
                                    DType::kInt64,   DType::kBFloat16, DType::kFloat16};
constexpr DType kFloatDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                                  DType::kFloat16};

class GpuScatterClipGeluTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  // Small integer inputs would stay on the host under TensorFlow's small-op rule; these
  // tests compare kernels, so the rule is off (as in gpu_array_ops_test.cc).
  void SetUp() override {
    setenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING", "0", 1);
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty())
      GTEST_SKIP() << "needs a GPU: none is visible";
  }
  void TearDown() override {
    RuntimeTest::TearDown();
    unsetenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING");
  }
};

// A CPU tensor of `dtype` holding small integers (exact in every dtype, and their sums too).
Tensor input(DType dtype, const Ints& shape, int seed = 0) {
  DeviceScope cpu("/CPU:0");
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + seed) % 23 - 11);
  return cast(internal::from_vector(v, shape), dtype);
}

Tensor indices(DType dtype, const std::vector<int64_t>& values, const Ints& shape) {
  DeviceScope cpu("/CPU:0");
  return cast(internal::from_vector(values, shape), dtype);
}

std::vector<double> host(const Tensor& t) {
  DeviceScope cpu("/CPU:0");
  return cast(t, DType::kFloat64).to_vector<double>();
}

// Runs `op(dtype)` under /GPU:0 and /CPU:0 and expects the results within `tol` of each
// other, relative to their size or to 1, whichever is larger (0: equal).
template <typename Op>
void expect_same(const char* what, Op op, absl::Span<const DType> dtypes, double tol = 0) {
  for (DType dtype : dtypes) {
    SCOPED_TRACE(std::string(what) + " " + dtype_name(dtype));
    std::vector<Tensor> gpu, cpu;
    {
      DeviceScope scope("/GPU:0");
      gpu = op(dtype);
    }
    {
      DeviceScope scope("/CPU:0");
      cpu = op(dtype);
    }
    ASSERT_EQ(gpu.size(), cpu.size());
    for (size_t i = 0; i < gpu.size(); ++i) {
      EXPECT_NE(gpu[i].device().find("GPU"), std::string::npos) << gpu[i].device();
      ASSERT_EQ(gpu[i].shape(), cpu[i].shape());
      const std::vector<double> g = host(gpu[i]), c = host(cpu[i]);
      for (size_t k = 0; k < g.size(); ++k) {
        EXPECT_NEAR(g[k], c[k], tol * std::max(std::fabs(c[k]), 1.0))
            << "output " << i << " element " << k;
      }
    }
  }
}

TEST_F(GpuScatterClipGeluTest, ScattersMatchTheCpu) {
  for (DType index : {DType::kInt32, DType::kInt64}) {
    // Duplicate rows add; sums of small integers are exact in any order.
    expect_same(
        "scatter_nd and tensor_scatter_nd_add",
        [&](DType d) {
          const Tensor rows = indices(index, {1, 0, 4, 1, 1, 0, 2, 2}, {4, 2});
          const Tensor many = indices(index, {7, 0, 7, 299, 5, 7}, {6, 1});
          return std::vector{
              scatter_nd(rows, input(d, {4, 33}), {5, 3, 33}),
              scatter_nd(many, input(d, {6}), {300}),
              tensor_scatter_nd_add(input(d, {5, 3, 33}, 1), rows, input(d, {4, 33})),
              tensor_scatter_nd_add(input(d, {300}, 2), many, input(d, {6}, 3)),
              scatter_nd(indices(index, {}, {0, 1}), input(d, {0}), {4})};
        },
        kNumericDTypes);
    // The last of duplicate rows wins, as on the CPU (Note [Last duplicate wins]): a few
    // rows look for later ones; 100 rows claim slices in a table whose windows the output
    // of 300000 slices spans three times over.
    std::vector<int64_t> hundred(100);
    for (int64_t i = 0; i < 100; ++i) hundred[i] = i % 10 == 0 ? 299999 : (i * 2999) % 300000;
    for (int64_t i = 0; i < 20; ++i) hundred[80 + i] = hundred[i * 3];  // repeats, in order
    expect_same(
        "tensor_scatter_nd_update",
        [&](DType d) {
          const Tensor rows = indices(index, {1, 0, 4, 1, 0, 2, 1, 0, 4, 1}, {5, 2});
          const Tensor far = indices(index, {5, 299999, 5, 200000, 299999, 5, 7}, {7, 1});
          const Tensor many = indices(index, hundred, {100, 1});
          return std::vector{
              tensor_scatter_nd_update(input(d, {5, 3, 33}), rows, input(d, {5, 33}, 4)),
              tensor_scatter_nd_update(input(d, {5, 3}), indices(index, {4, 0}, {2, 1}),
                                       input(d, {2, 3}, 5)),
              tensor_scatter_nd_update(input(d, {300000}), far, input(d, {7}, 6)),
              tensor_scatter_nd_update(input(d, {300000}), many, input(d, {100}, 7))};
        },
        kDTypes);
  }
}

TEST_F(GpuScatterClipGeluTest, AnIndexOutOfRangeIsTheCpusErrorOnTheGpu) {
  for (const char* device : {"/GPU:0", "/CPU:0"}) {
    SCOPED_TRACE(device);
    const Tensor bad = indices(DType::kInt64, {1, 5}, {2, 1});
    const Tensor updates = input(DType::kFloat32, {2});
    const Tensor tensor = input(DType::kFloat32, {4});
    DeviceScope scope(device);
    testing::expect([&] { scatter_nd(bad, updates, {4}); }, absl::StatusCode::kInvalidArgument,
                    "[ScatterNd] indices[1] = [5] does not index into shape [4]");
    testing::expect([&] { tensor_scatter_nd_update(tensor, bad, updates); },
                    absl::StatusCode::kInvalidArgument,
                    "[TensorScatterUpdate] indices[1] = [5] does not index into shape [4]");
    const Tensor negative = indices(DType::kInt32, {0, 1, 1, -1, 2, 0}, {3, 2});
    testing::expect(
        [&] {
          tensor_scatter_nd_add(input(DType::kInt32, {3, 2}), negative, input(DType::kInt32, {3}));
        },
        absl::StatusCode::kInvalidArgument,
        "[TensorScatterAdd] indices[1] = [1, -1] does not index into shape [3,2]");
  }
}

TEST_F(GpuScatterClipGeluTest, ClipByValueMatchesTheCpu) {
  expect_same(
      "clip_by_value",
      [](DType d) {
        const Tensor t = input(d, {3, 40, 7});
        return std::vector{clip_by_value(t, input(d, {}, 4), input(d, {}, 17)),
                           clip_by_value(t, input(d, {40, 1}, 1), input(d, {7}, 20)),
                           clip_by_value(t, input(d, {3, 40, 7}, 2), input(d, {1, 7}, 3)),
                           clip_by_value(input(d, {0, 3}), input(d, {3}), input(d, {}))};
      },
      kNumericDTypes);
}

// CUDA's erf and tanh are within 2 ulp of the CPU's; the 2-byte floats round once.
TEST_F(GpuScatterClipGeluTest, GeluMatchesTheCpu) {
  for (bool approximate : {false, true}) {
    for (DType d : kFloatDTypes) {
      const bool half = d == DType::kBFloat16 || d == DType::kFloat16;
      expect_same(
          approximate ? "gelu approximate" : "gelu",
          [&](DType dtype) {
            Tensor x;
            {
              DeviceScope cpu("/CPU:0");
              x = mul(input(dtype, {5, 301}), cast(constant(0.37f), dtype));
            }
            return std::vector{nn::gelu(x, approximate)};
          },
          {d}, half ? 1.0 / 64 : 1e-5);
    }
  }
}

}  // namespace
}  // namespace mt
