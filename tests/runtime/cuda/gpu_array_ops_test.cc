// The array ops on a GPU against the CPU: every op, every dtype, shapes with odd sizes, empty
// dimensions and paths of each kernel (tiled transposes, long and short rows, narrow and wide
// concat rows). Every test skips itself when no GPU is visible.
#include <cstdlib>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64,  DType::kInt32,  DType::kInt64,
                             DType::kBool,    DType::kBFloat16, DType::kFloat16};
constexpr DType kNumericDTypes[] = {DType::kFloat32, DType::kFloat64,  DType::kInt32,
                                    DType::kInt64,   DType::kBFloat16, DType::kFloat16};

class GpuArrayOpsTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  // The inputs are made on the host CPU and many are small integers, which TensorFlow's
  // small-op rule would keep there (placement/small_op_rule.h): these tests compare kernels,
  // so the rule is off (read when the runtime initialises, after the reset in SetUp).
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

// Returns a CPU tensor of `dtype` holding small distinct integers (exact in every dtype).
Tensor input(DType dtype, const Ints& shape, int seed = 0) {
  DeviceScope cpu("/CPU:0");
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + seed) % 201 - 100);
  return cast(internal::from_vector(v, shape), dtype);
}

std::vector<float> host(const Tensor& t) {
  DeviceScope cpu("/CPU:0");
  return cast(t, DType::kFloat32).to_vector<float>();
}

// Runs `op(dtype)` under /GPU:0 and under /CPU:0 for every dtype (of `dtypes`) and expects
// equal results.
template <typename Op>
void expect_same(const char* what, Op op, absl::Span<const DType> dtypes = kDTypes) {
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
      EXPECT_EQ(host(gpu[i]), host(cpu[i]));
    }
  }
}

TEST_F(GpuArrayOpsTest, CopiesMatchTheCpu) {
  expect_same("reshape", [](DType d) { return std::vector{reshape(input(d, {6, 35}), {-1, 5})}; });
  expect_same("expand_dims", [](DType d) { return std::vector{expand_dims(input(d, {3, 4}), 1)}; });
  expect_same("squeeze", [](DType d) { return std::vector{squeeze(input(d, {1, 3, 1}))}; });
  expect_same("zeros_like", [](DType d) { return std::vector{zeros_like(input(d, {7, 3}))}; });
  expect_same("ones_like", [](DType d) { return std::vector{ones_like(input(d, {1001}))}; });
}

TEST_F(GpuArrayOpsTest, TransposesMatchTheCpu) {
  const std::vector<std::pair<Ints, Ints>> cases = {{{67, 45}, {1, 0}},
                                                    {{3, 33, 65}, {0, 2, 1}},
                                                    {{2, 3, 4, 5}, {3, 1, 0, 2}},
                                                    {{5, 300}, {1, 0}},
                                                    {{4, 5, 6}, {2, 1, 0}},
                                                    {{0, 7}, {1, 0}},
                                                    {{2, 8, 8, 300}, {0, 3, 1, 2}},
                                                    {{2, 300, 8, 8}, {0, 2, 3, 1}},
                                                    {{}, {}}};
  for (const auto& [shape, perm] : cases) {
    expect_same("transpose",
                [&](DType d) { return std::vector{transpose(input(d, shape), perm)}; });
  }
}

TEST_F(GpuArrayOpsTest, SlicesMatchTheCpu) {
  expect_same("slice", [](DType d) {
    return std::vector{slice(input(d, {5, 400}), {1, 7}, {3, -1})};
  });
  expect_same("strided_slice", [](DType d) {
    StridedSliceOptions o;
    o.begin_mask = 1;
    o.new_axis_mask = 2;
    o.shrink_axis_mask = 8;
    return std::vector{
        strided_slice(input(d, {9, 40, 5}), {0, 0, 30, 2}, {9, 0, 2, 3}, {-2, 1, -3, 1}, o)};
  });
  expect_same("empty strided_slice", [](DType d) {
    return std::vector{strided_slice(input(d, {4, 4}), {3, 0}, {1, 4}, {1, 1})};
  });
}

TEST_F(GpuArrayOpsTest, JoinsAndSplitsMatchTheCpu) {
  for (int64_t axis : {0, 1, 2}) {
    expect_same("concat", [&](DType d) {
      Ints a = {3, 4, 300}, b = a;
      b[axis] = 1;
      return std::vector{concat({input(d, a), input(d, b, 1), input(d, a, 2)}, axis)};
    });
    expect_same("split", [&](DType d) {
      return split(input(d, {6, 6, 300}), Ints{1, -1, 2}, axis);
    });
  }
  expect_same("stack", [](DType d) {
    return std::vector{stack({input(d, {5, 2}), input(d, {5, 2}, 3)}, 1)};
  });
  expect_same("split equal", [](DType d) { return split(input(d, {4, 10}), 5, 1); });
}

TEST_F(GpuArrayOpsTest, GathersAndBroadcastsMatchTheCpu) {
  expect_same("gather", [](DType d) {
    Tensor idx;
    {
      DeviceScope cpu("/CPU:0");
      idx = constant({{2, 0}, {1, 1}, {0, 2}});
    }
    return std::vector{gather(input(d, {4, 3, 300}), idx, 1), gather(input(d, {3, 5}), idx, 0)};
  });
  expect_same("broadcast_to", [](DType d) {
    return std::vector{broadcast_to(input(d, {3, 1, 300}), {2, 3, 4, 300}),
                       broadcast_to(input(d, {5, 1}), {5, 7})};
  });
  expect_same("tile", [](DType d) { return std::vector{tile(input(d, {3, 1, 5}), {2, 400, 3})}; });
}

// Cumsum sums each line in the CPU's order, so that every dtype matches exactly; Range's
// elements are start + i * delta rounded once on both.
TEST_F(GpuArrayOpsTest, BandPartCumsumAndRangeMatchTheCpu) {
  expect_same("band_part", [](DType d) {
    return std::vector{linalg::band_part(input(d, {3, 37, 45}), 5, -1),
                       linalg::band_part(input(d, {40, 3}), 0, 2),
                       linalg::band_part(input(d, {2, 0, 3}), -1, 0)};
  });
  expect_same(
      "cumsum",
      [](DType d) {
        return std::vector{cumsum(input(d, {3, 300, 5}), 1),
                           cumsum(input(d, {7, 1000}), -1, true, true),
                           cumsum(input(d, {4, 3}), 0, false, true), cumsum(input(d, {0, 4}), 1)};
      },
      kNumericDTypes);
  expect_same(
      "range",
      [](DType d) {
        return std::vector{range(-5, 2000, 3, d), range(10, -10, -2, d), range(4, 4, 1, d)};
      },
      kNumericDTypes);
  expect_same("range of fractions", [](DType d) { return std::vector{range(0, 1, 0.1, d)}; },
              {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16});
}

// The pads find each element's source with the CPU's arithmetic (kernels/pad.h) and
// MirrorPadGrad sums in its order; TopKV2 picks by the same total order (rows of 1000 with
// many ties, and short rows with k the whole row).
TEST_F(GpuArrayOpsTest, PadsAndTopKMatchTheCpu) {
  expect_same("pad", [](DType d) {
    return std::vector{pad(input(d, {3, 37, 45}), {{1, 2}, {0, 3}, {5, 0}}),
                       pad(input(d, {4, 3}), {{2, 2}, {1, 1}}, PadMode::kConstant, 7),
                       pad(input(d, {2, 0, 3}), {{0, 1}, {1, 1}, {0, 0}}),
                       pad(input(d, {3, 37, 45}), {{2, 0}, {36, 36}, {1, 44}}, PadMode::kReflect),
                       pad(input(d, {2, 3, 4, 5, 2}), {{2, 2}, {3, 1}, {0, 4}, {5, 5}, {1, 0}},
                           PadMode::kSymmetric)};
  });
  expect_same(
      "mirror_pad_grad",
      [](DType d) {
        return std::vector{
            mirror_pad_grad(input(d, {7, 300, 9}), {{2, 1}, {100, 99}, {0, 4}}, PadMode::kReflect),
            mirror_pad_grad(input(d, {6, 6, 6, 6}), {{1, 2}, {3, 0}, {2, 2}, {0, 1}},
                            PadMode::kSymmetric)};
      },
      kNumericDTypes);
  expect_same(
      "top_k",
      [](DType d) {
        const math::TopKResult a = math::top_k(input(d, {5, 1000}), 37);
        const math::TopKResult b = math::top_k(input(d, {300, 6}, 3), 6, false);
        const math::TopKResult c = math::top_k(input(d, {4, 0}), 0);
        return std::vector{a.values, cast(a.indices, DType::kFloat32), b.values,
                           cast(b.indices, DType::kFloat32), c.values};
      },
      kNumericDTypes);
}

TEST_F(GpuArrayOpsTest, OneHotMatchesTheCpu) {
  for (DType index : {DType::kInt32, DType::kInt64}) {
    expect_same("one_hot", [&](DType d) {
      const Tensor idx = input(index, {4, 5});  // values in [-100, 100]: most out of range
      return std::vector{one_hot(idx, 150, 3, -1, -1, d), one_hot(idx, 50, 1, 0, 0, d)};
    });
  }
}

// Note [GPU gather out of range] in kernels/cuda/combine_kernels.cu: the call returns, the
// zeros are written, and the next host read reports the CPU's error; a kernel that read
// params at the bad index would give 4 (the next row) instead of a zero.
TEST_F(GpuArrayOpsTest, GatherOutOfRangeWritesZerosAndIsReportedAtTheNextHostRead) {
  Tensor params, idx;
  {
    DeviceScope cpu("/CPU:0");
    params = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    idx = constant({3, 0});
  }
  DeviceScope gpu("/GPU:0");
  const Tensor out = gather(params, idx, 1);
  testing::expect([&] { host(out); }, absl::StatusCode::kInvalidArgument,
                  "[GatherV2] indices[0] = 3 is not in [0, 3) (on "
                  "/job:localhost/replica:0/task:0/device:GPU:0; reported at the next "
                  "synchronisation)");
  EXPECT_EQ(host(out), (std::vector<float>{0, 1, 0, 4}));  // taken: the next read is clean
}

}  // namespace
}  // namespace mt
