// FusedBatchNormV3 and FusedBatchNormGradV3 on a GPU against the CPU through the runtime
// (every float dtype, NHWC and NCHW, training and inference, an empty batch), the errors,
// and the gradient GradientTape takes on each device. The CPU kernels are checked against
// a reference in tests/kernels/batch_norm_kernels_test.cc. Every test skips itself when no
// GPU is visible.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/runtime/cuda/gpu_kernel_test.h"

namespace mt {
namespace {

using testing::count;
using testing::kFloats;

class GpuBatchNormTest : public testing::GpuKernelTest {};

// A CPU tensor of `dtype` holding multiples of 1/8 in [-11/8, 11/8].
Tensor input(DType dtype, const Ints& shape, int seed) {
  DeviceScope cpu("/CPU:0");
  std::vector<float> v(count(shape));
  for (int64_t i = 0; i < count(shape); ++i) {
    v[i] = static_cast<float>((i * 7 + seed * 13) % 23 - 11) / 8;
  }
  return cast(internal::from_vector(v, shape), dtype);
}

std::vector<double> host(const Tensor& t) {
  DeviceScope cpu("/CPU:0");
  return cast(t, DType::kFloat64).to_vector<double>();
}

double tolerance(DType dtype) {
  return dtype == DType::kFloat64 ? 1e-12 : dtype == DType::kFloat32 ? 1e-5 : 1e-2;
}

// Runs `op` under /GPU:0 and /CPU:0 and expects the same outputs (NaN equal to NaN).
template <typename Op>
void expect_same(const std::string& what, Op op, double tol) {
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
    ASSERT_EQ(gpu[i].shape(), cpu[i].shape()) << "output " << i;
    const std::vector<double> g = host(gpu[i]), c = host(cpu[i]);
    int bad = 0;
    for (size_t j = 0; j < g.size(); ++j) {
      const bool same = std::isnan(c[j]) ? std::isnan(g[j])
                                         : std::fabs(g[j] - c[j]) <= tol * (1 + std::fabs(c[j]));
      if (!same && ++bad <= 5) {
        ADD_FAILURE() << "output " << i << " element " << j << ": " << g[j] << " vs " << c[j];
      }
    }
    EXPECT_EQ(bad, 0) << "output " << i;
  }
}

TEST_F(GpuBatchNormTest, ForwardAndGradientMatchTheCpu) {
  for (DType dtype : kFloats) {
    const DType u = dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    for (bool nchw : {false, true}) {
      for (bool training : {true, false}) {
        for (const Ints& nhwc : {Ints{2, 5, 7, 3}, Ints{1, 33, 17, 8}, Ints{0, 2, 2, 3}}) {
          const Ints shape = nchw ? Ints{nhwc[0], nhwc[3], nhwc[1], nhwc[2]} : nhwc;
          const int64_t c = nhwc[3];
          const Tensor x = input(dtype, shape, 1), dy = input(dtype, shape, 2);
          const Tensor scale = input(u, {c}, 3), offset = input(u, {c}, 4);
          const Tensor mean = input(u, {c}, 5), var = fill({c}, 1.5, u);
          nn::FusedBatchNormOptions o;
          o.channels_first = nchw, o.is_training = training, o.exponential_avg_factor = 0.25;
          const std::string what = absl::StrCat(dtype_name(dtype), nchw ? " NCHW " : " NHWC ",
                                                training ? "training " : "inference ", nhwc[0]);
          expect_same(
              what + " forward",
              [&] {
                nn::FusedBatchNormResult r = nn::fused_batch_norm(x, scale, offset, mean, var, o);
                return std::vector<Tensor>{r.y, r.batch_mean, r.batch_variance, r.reserve_space_1,
                                           r.reserve_space_2};
              },
              tolerance(dtype));
          expect_same(
              what + " gradient",
              [&] {
                nn::FusedBatchNormGradResult g =
                    nn::fused_batch_norm_grad(dy, x, scale, mean, var, o);
                return std::vector<Tensor>{g.x_backprop, g.scale_backprop, g.offset_backprop};
              },
              tolerance(dtype));
        }
      }
    }
  }
}

TEST_F(GpuBatchNormTest, BadInputIsTheOpsOwnErrorOnTheGpu) {
  DeviceScope scope("/GPU:0");
  const Tensor x = input(DType::kFloat32, {2, 3, 4, 5}, 1);
  const Tensor three = input(DType::kFloat32, {3}, 2), five = input(DType::kFloat32, {5}, 3);
  try {
    nn::fused_batch_norm(x, three, five, five, five);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("scale must have the same number of elements"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(GpuBatchNormTest, TapeGradientsMatchTheCpu) {
  const Tensor x = input(DType::kFloat32, {2, 3, 4, 5}, 1);
  const Tensor scale = input(DType::kFloat32, {5}, 2), offset = input(DType::kFloat32, {5}, 3);
  const Tensor w = input(DType::kFloat32, {2, 3, 4, 5}, 4);
  const Tensor none = zeros({0});
  expect_same(
      "tape",
      [&] {
        GradientTape tape;
        tape.watch(x), tape.watch(scale), tape.watch(offset);
        const Tensor loss =
            reduce_sum(mul(nn::fused_batch_norm(x, scale, offset, none, none).y, w));
        return tape.gradient(loss, {x, scale, offset});
      },
      1e-5);
}

}  // namespace
}  // namespace mt
