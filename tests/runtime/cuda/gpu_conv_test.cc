// The convolutions and pools (MT_CONV_OPS) on a GPU against the CPU through the runtime:
// Conv2D and its two backprops, MaxPool, AvgPool and their gradient ops, in float32 and
// float64 (the 2-byte floats loosely), NHWC and NCHW, VALID, SAME and EXPLICIT padding,
// strides, dilations and zero-sized dimensions; MaxPoolGrad's ties and NaN; the errors; and
// the gradients GradientTape takes through Conv2D, MaxPool and AvgPool on each device. The
// CPU kernels are checked against a reference in tests/kernels/conv_kernels_test.cc. Every
// test skips itself when no GPU is visible.
#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cuda/cudnn/cudnn_conv.h"
#include "kernels/kernel_options.h"
#include "tests/runtime/cuda/gpu_kernel_test.h"

namespace mt {
namespace {

using testing::count;
using testing::kFloats;

class GpuConvTest : public testing::GpuKernelTest {};

std::string str(const Ints& shape) { return absl::StrCat("(", absl::StrJoin(shape, ", "), ")"); }

// A CPU tensor of `dtype` holding multiples of 1/8 in [-11/8, 11/8], exact in every dtype,
// so that float32 sums of their products are exact in any order.
Tensor input(DType dtype, const Ints& shape, int seed) {
  DeviceScope cpu("/CPU:0");
  std::vector<float> v(count(shape));
  for (int64_t i = 0; i < count(shape); ++i) {
    v[i] = static_cast<float>((i * 7 + seed * 13) % 23 - 11) / 8;
  }
  return cast(internal::from_vector(v, shape), dtype);
}

// A CPU tensor of `dtype` holding small integers with many ties.
Tensor ties(DType dtype, const Ints& shape, int seed) {
  DeviceScope cpu("/CPU:0");
  std::vector<float> v(count(shape));
  for (int64_t i = 0; i < count(shape); ++i) v[i] = static_cast<float>((i * 5 + seed) % 4);
  return cast(internal::from_vector(v, shape), dtype);
}

Ints dims_of(const Tensor& t) { return Ints(t.shape().dims().begin(), t.shape().dims().end()); }

std::vector<double> host(const Tensor& t) {
  DeviceScope cpu("/CPU:0");
  const std::vector<double> v = cast(t, DType::kFloat64).to_vector<double>();
  return v;
}

// The tolerance of a dtype, relative to 1 + |cpu value|.
double tolerance(DType dtype) {
  return dtype == DType::kFloat64 ? 1e-12 : dtype == DType::kFloat32 ? 1e-5 : 1e-2;
}

// Runs `op` under /GPU:0 and /CPU:0 and expects the same outputs (NaN equal to NaN), within
// `tol` relative.
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
    ASSERT_EQ(gpu[i].dtype(), cpu[i].dtype()) << "output " << i;
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

// Options in the data format's order: `hw` holds the H and W entries (strides, dilations or
// ksize) and `pads` the (top, bottom, left, right) explicit pads.
std::array<int32_t, 4> at_hw(std::array<int32_t, 2> hw, bool nchw) {
  return nchw ? std::array<int32_t, 4>{1, 1, hw[0], hw[1]}
              : std::array<int32_t, 4>{1, hw[0], hw[1], 1};
}
std::array<int32_t, 8> pads_at_hw(std::array<int32_t, 4> pads, bool nchw) {
  std::array<int32_t, 8> out = {};
  const int h = nchw ? 2 : 1, w = nchw ? 3 : 2;
  out[2 * h] = pads[0], out[2 * h + 1] = pads[1], out[2 * w] = pads[2], out[2 * w + 1] = pads[3];
  return out;
}

// One spatial configuration; an image is (N, H, W, C) and laid out in the data format.
struct Config {
  const char* name;
  Ints image;                        // N, H, W, C
  std::array<int32_t, 2> window;     // the filter's or ksize's H and W
  std::array<int32_t, 2> strides;    // H, W
  std::array<int32_t, 2> dilations;  // H, W (Conv2D only)
  Padding padding;
  std::array<int32_t, 4> pads;  // top, bottom, left, right (EXPLICIT)
};

Ints layout(const Ints& nhwc, bool nchw) {
  return nchw ? Ints{nhwc[0], nhwc[3], nhwc[1], nhwc[2]} : nhwc;
}

std::vector<Config> conv_configs() {
  return {
      {"VALID 3x3", {2, 7, 5, 3}, {3, 3}, {1, 1}, {1, 1}, Padding::kValid, {}},
      {"VALID strides (2, 1) dilations (1, 2)",
       {2, 9, 7, 2},
       {3, 2},
       {2, 1},
       {1, 2},
       Padding::kValid,
       {}},
      {"SAME strides 2 odd sizes", {2, 7, 9, 3}, {3, 3}, {2, 2}, {1, 1}, Padding::kSame, {}},
      {"SAME even filter", {2, 5, 5, 2}, {4, 2}, {1, 1}, {1, 1}, Padding::kSame, {}},
      {"SAME dilations 2", {2, 7, 7, 2}, {3, 3}, {1, 1}, {2, 2}, Padding::kSame, {}},
      {"SAME strides 3 filter larger than input",
       {2, 3, 2, 2},
       {5, 4},
       {3, 1},
       {1, 1},
       Padding::kSame,
       {}},
      {"EXPLICIT strides 2",
       {2, 5, 6, 3},
       {2, 3},
       {2, 2},
       {1, 1},
       Padding::kExplicit,
       {1, 2, 0, 3}},
      {"EXPLICIT dilations 2",
       {2, 5, 5, 2},
       {3, 3},
       {1, 2},
       {2, 2},
       Padding::kExplicit,
       {2, 1, 3, 0}},
      {"many channels", {2, 33, 31, 16}, {3, 3}, {1, 2}, {1, 1}, Padding::kSame, {}},
      {"1x1 many channels", {3, 8, 8, 17}, {1, 1}, {1, 1}, {1, 1}, Padding::kValid, {}},
      {"empty batch", {0, 5, 5, 2}, {3, 3}, {1, 1}, {1, 1}, Padding::kSame, {}},
      {"no input channels", {2, 4, 4, 0}, {2, 2}, {1, 1}, {1, 1}, Padding::kValid, {}},
  };
}

nn::Conv2DOptions conv_options(const Config& c, bool nchw) {
  nn::Conv2DOptions o;
  o.strides = at_hw(c.strides, nchw);
  o.dilations = at_hw(c.dilations, nchw);
  o.padding = c.padding;
  if (c.padding == Padding::kExplicit) o.explicit_paddings = pads_at_hw(c.pads, nchw);
  o.channels_first = nchw;
  return o;
}

nn::PoolOptions pool_options(const Config& c, bool nchw) {
  nn::PoolOptions o;
  o.ksize = at_hw(c.window, nchw);
  o.strides = at_hw(c.strides, nchw);
  o.padding = c.padding;
  if (c.padding == Padding::kExplicit) o.explicit_paddings = pads_at_hw(c.pads, nchw);
  o.channels_first = nchw;
  return o;
}

// Conv2D, then Conv2DBackpropInput and Conv2DBackpropFilter with an out_backprop of the
// output's shape; the filter has 2 C + 1 output channels.
TEST_F(GpuConvTest, Conv2DAndItsBackpropsMatchTheCpu) {
  for (const Config& c : conv_configs()) {
    for (DType d : kFloats) {
      for (bool nchw : {false, true}) {
        const Ints image = layout(c.image, nchw);
        const Ints filter = {c.window[0], c.window[1], c.image[3], 2 * c.image[3] + 1};
        const nn::Conv2DOptions o = conv_options(c, nchw);
        Ints out;
        {
          DeviceScope cpu("/CPU:0");
          out = dims_of(nn::conv2d(input(d, image, 1), input(d, filter, 2), o));
        }
        const std::string what = absl::StrCat(
            c.name, " ", dtype_name(d), nchw ? " NCHW " : " NHWC ", str(image), " ", str(filter));
        expect_same(
            what,
            [&] {
              const Tensor x = input(d, image, 1), f = input(d, filter, 2), dy = input(d, out, 3);
              return std::vector{nn::conv2d(x, f, o), nn::conv2d_backprop_input(image, f, dy, o),
                                 nn::conv2d_backprop_filter(x, filter, dy, o)};
            },
            tolerance(d));
      }
    }
  }
}

// Runs Conv2D and its backprops of `c` under /GPU:0 with cuDNN on and off and returns both
// results, in that order.
std::array<std::vector<Tensor>, 2> with_and_without_cudnn(const Config& c, DType d, bool nchw) {
  const Ints image = layout(c.image, nchw);
  const Ints filter = {c.window[0], c.window[1], c.image[3], 2 * c.image[3] + 1};
  const nn::Conv2DOptions o = conv_options(c, nchw);
  std::array<std::vector<Tensor>, 2> out;
  for (int off = 0; off < 2; ++off) {
    cuda::set_cudnn_enabled(off == 0);
    DeviceScope gpu("/GPU:0");
    const Tensor x = input(d, image, 1), f = input(d, filter, 2);
    const Tensor y = nn::conv2d(x, f, o);
    const Tensor dy = input(d, dims_of(y), 3);
    out[off] = {y, nn::conv2d_backprop_input(image, f, dy, o),
                nn::conv2d_backprop_filter(x, filter, dy, o)};
  }
  cuda::set_cudnn_enabled(true);
  return out;
}

// Note [When cuDNN runs a convolution]: every shape, through cuDNN where it takes it and
// through the direct kernels, gives the same values; on a machine where cuDNN loads (the
// GPU script sets MT_EXPECT_CUDNN=1 there) it takes the shapes it can express.
TEST_F(GpuConvTest, CudnnAndTheDirectKernelsAgree) {
  const bool was_enabled = cuda::cudnn_enabled();
  if (!was_enabled) GTEST_SKIP() << "MT_CUDNN=0";
  for (const Config& c : conv_configs()) {
    for (DType d : kFloats) {
      for (bool nchw : {false, true}) {
        SCOPED_TRACE(absl::StrCat(c.name, " ", dtype_name(d), nchw ? " NCHW" : " NHWC"));
        const auto [cudnn, direct] = with_and_without_cudnn(c, d, nchw);
        for (size_t i = 0; i < cudnn.size(); ++i) {
          const std::vector<double> a = host(cudnn[i]), b = host(direct[i]);
          ASSERT_EQ(a.size(), b.size());
          int bad = 0;
          for (size_t j = 0; j < a.size(); ++j) {
            if (!(std::fabs(a[j] - b[j]) <= tolerance(d) * (1 + std::fabs(b[j]))) && ++bad <= 3) {
              ADD_FAILURE() << "pass " << i << " element " << j << ": " << a[j] << " vs " << b[j];
            }
          }
        }
      }
    }
  }
}

TEST_F(GpuConvTest, CudnnTakesTheShapesItCanExpress) {
  if (!cuda::cudnn_enabled()) GTEST_SKIP() << "MT_CUDNN=0";
  DeviceScope gpu("/GPU:0");
  nn::Conv2DOptions o;
  o.padding = Padding::kSame;
  const Tensor x = input(DType::kFloat32, {4, 16, 16, 8}, 1);
  const Tensor f = input(DType::kFloat32, {3, 3, 8, 16}, 2);
  const Tensor y = nn::conv2d(x, f, o);
  const Tensor dx = nn::conv2d_backprop_input({4, 16, 16, 8}, f, y, o);
  const Tensor df = nn::conv2d_backprop_filter(x, {3, 3, 8, 16}, y, o);
  static_cast<void>(df.to_vector<float>());
  const int algorithms[] = {cuda::last_cudnn_algorithm(cuda::ConvPass::kForward),
                            cuda::last_cudnn_algorithm(cuda::ConvPass::kBackwardInput),
                            cuda::last_cudnn_algorithm(cuda::ConvPass::kBackwardFilter)};
  const char* expected = std::getenv("MT_EXPECT_CUDNN");
  if (algorithms[0] < 0 && (expected == nullptr || std::string(expected) != "1")) {
    GTEST_SKIP() << "cuDNN did not load here (MT_EXPECT_CUDNN=1 makes this a failure)";
  }
  for (int a : algorithms) EXPECT_GE(a, 0);
}

std::vector<Config> pool_configs() {
  return {
      {"VALID 2x2 strides 2", {2, 6, 7, 3}, {2, 2}, {2, 2}, {1, 1}, Padding::kValid, {}},
      {"VALID 3x2 strides 1", {2, 5, 7, 2}, {3, 2}, {1, 1}, {1, 1}, Padding::kValid, {}},
      {"SAME 3x3 strides 1", {2, 5, 5, 2}, {3, 3}, {1, 1}, {1, 1}, Padding::kSame, {}},
      {"SAME 3x3 strides 2 odd sizes", {2, 7, 9, 3}, {3, 3}, {2, 2}, {1, 1}, Padding::kSame, {}},
      {"SAME 4x4 strides 3", {2, 7, 8, 2}, {4, 4}, {3, 3}, {1, 1}, Padding::kSame, {}},
      {"SAME window larger than input", {2, 3, 2, 2}, {5, 4}, {1, 2}, {1, 1}, Padding::kSame, {}},
      {"EXPLICIT 3x2", {2, 5, 6, 3}, {3, 2}, {1, 2}, {1, 1}, Padding::kExplicit, {1, 2, 0, 1}},
      {"EXPLICIT 3x3 strides 2",
       {2, 6, 5, 2},
       {3, 3},
       {2, 2},
       {1, 1},
       Padding::kExplicit,
       {2, 1, 1, 2}},
      {"many channels", {2, 31, 33, 32}, {3, 3}, {2, 1}, {1, 1}, Padding::kSame, {}},
      {"empty batch", {0, 4, 4, 2}, {2, 2}, {2, 2}, {1, 1}, Padding::kValid, {}},
      {"no channels", {2, 4, 4, 0}, {2, 2}, {1, 1}, {1, 1}, Padding::kSame, {}},
  };
}

// MaxPool, AvgPool and their gradient ops; the max pools on inputs with many ties, so that
// the devices must agree on which maximum takes a window's gradient.
TEST_F(GpuConvTest, PoolsAndTheirGradientsMatchTheCpu) {
  for (const Config& c : pool_configs()) {
    for (DType d : kFloats) {
      for (bool nchw : {false, true}) {
        const Ints image = layout(c.image, nchw);
        const nn::PoolOptions o = pool_options(c, nchw);
        Ints out;
        {
          DeviceScope cpu("/CPU:0");
          out = dims_of(nn::avg_pool2d(input(d, image, 1), o));
        }
        const std::string what =
            absl::StrCat(c.name, " ", dtype_name(d), nchw ? " NCHW " : " NHWC ", str(image));
        expect_same(
            what,
            [&] {
              const Tensor x = input(d, image, 4), tied = ties(d, image, 5), dy = input(d, out, 6);
              const Tensor y = nn::max_pool2d(tied, o);
              return std::vector{nn::max_pool2d(x, o), y, nn::max_pool_grad(tied, y, dy, o),
                                 nn::avg_pool2d(x, o), nn::avg_pool_grad(image, dy, o)};
            },
            tolerance(d));
      }
    }
  }
}

// Note [Convolutions] in kernels/conv_shape.cc: a window's gradient goes to its first
// maximum in row-major order.
TEST_F(GpuConvTest, MaxPoolGradSendsTiesToTheFirstMaximum) {
  DeviceScope gpu("/GPU:0");
  nn::PoolOptions o;
  o.ksize = {1, 2, 2, 1};
  const Tensor ones = constant(std::vector<float>(9, 1), {1, 3, 3, 1});
  const Tensor y = nn::max_pool2d(ones, o);
  const Tensor dy = constant(std::vector<float>{1, 2, 3, 4}, {1, 2, 2, 1});
  const Tensor dx = nn::max_pool_grad(ones, y, dy, o);
  EXPECT_NE(dx.device().find("GPU"), std::string::npos);
  EXPECT_EQ(dx.to_vector<float>(), (std::vector<float>{1, 2, 0, 3, 4, 0, 0, 0, 0}));
  o.channels_first = true;
  o.ksize = o.strides = {1, 1, 2, 2};
  const Tensor planes = constant(std::vector<double>{3, 3, 3, 3, 0, 1, 1, 0}, {1, 2, 2, 2});
  const Tensor grad = constant(std::vector<double>{6, 8}, {1, 2, 1, 1});
  EXPECT_EQ(nn::max_pool_grad(planes, nn::max_pool2d(planes, o), grad, o).to_vector<double>(),
            (std::vector<double>{6, 0, 0, 0, 0, 8, 0, 0}));
}

// With the direct kernels: cuDNN multiplies the padding, so an infinite weight or gradient
// over it gives NaN there (Note [Non-finite values over cuDNN's padding] in
// kernels/cuda/cudnn/cudnn_conv.cc).
TEST_F(GpuConvTest, NonFiniteValuesMatchTheCpu) {
  struct DirectKernels {
    DirectKernels() { cuda::set_cudnn_enabled(false); }
    ~DirectKernels() { cuda::set_cudnn_enabled(true); }
  } direct;
  for (DType d : {DType::kFloat32, DType::kFloat64}) {
    expect_same(
        dtype_name(d),
        [&] {
          const Tensor x = cast(constant(std::vector<float>{1, NAN, 3, 4, 2, 0, 5, INFINITY,
                                                            -INFINITY, 1, 2, 3, 0, 0, 0, 0},
                                         {1, 4, 4, 1}),
                                d);
          nn::PoolOptions o;
          o.ksize = o.strides = {1, 2, 2, 1};
          const Tensor y = nn::max_pool2d(x, o);
          const Tensor dy = cast(constant(std::vector<float>{1, 2, 3, 4}, {1, 2, 2, 1}), d);
          // Padding never multiplies: an infinite weight over it adds nothing (Note
          // [Padding never multiplies] in kernels/cpu/conv_kernels.cc).
          nn::Conv2DOptions same;
          same.padding = Padding::kSame;
          const Tensor inf_filter =
              cast(constant(std::vector<float>{INFINITY, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 3, 1, 1}), d);
          const Tensor ones = cast(constant(std::vector<float>(16, 1.f), {1, 4, 4, 1}), d);
          return std::vector{
              y, nn::max_pool_grad(x, y, dy, o), nn::avg_pool2d(x, o),
              nn::conv2d(x, cast(constant(std::vector<float>{1, -1}, {1, 2, 1, 1}), d)),
              nn::conv2d(ones, inf_filter, same)};
        },
        tolerance(d));
  }
}

// The shape functions run before any kernel: a GPU call fails as a CPU one does.
TEST_F(GpuConvTest, BadInputIsTheOpsOwnErrorOnTheGpu) {
  DeviceScope gpu("/GPU:0");
  const Tensor image = zeros({2, 5, 5, 3}, DType::kFloat32);
  testing::expect(
      [&] {
        nn::conv2d(image, zeros({3, 3, 2, 2}, DType::kFloat32));
      },
      absl::StatusCode::kInvalidArgument,
      "[Conv2D] input depth must equal the filter's input depth (groups are not "
      "supported): 3 vs 2");
  nn::PoolOptions o;
  o.strides = {2, 1, 1, 1};
  testing::expect([&] { nn::max_pool2d(image, o); }, absl::StatusCode::kInvalidArgument,
                  "[MaxPool] Pooling is not yet supported on the batch dimension.");
}

// The gradients of sum(op(x) * w) through GradientTape, every op and gradient op on one
// device: Conv2D in both inputs, MaxPool (on distinct values) and AvgPool.
std::vector<Tensor> tape_gradients(DType d, const Config& c, bool nchw) {
  const Ints image = layout(c.image, nchw);
  const Tensor x = input(d, image, 7), f = input(d, {c.window[0], c.window[1], c.image[3], 4}, 8);
  std::vector<float> distinct(count(image));
  for (size_t i = 0; i < distinct.size(); ++i) distinct[i] = static_cast<float>((i * 37) % 101);
  const Tensor z = cast(internal::from_vector(distinct, image), d);
  GradientTape tape(/*persistent=*/true);
  for (const Tensor& t : {x, f, z}) tape.watch(t);
  const Tensor conv = nn::conv2d(x, f, conv_options(c, nchw));
  const Tensor conv_loss = reduce_sum(mul(conv, input(d, dims_of(conv), 9)));
  std::vector<Tensor> grads = tape.gradient(conv_loss, {x, f});
  const nn::PoolOptions o = pool_options(c, nchw);
  const Tensor max = nn::max_pool2d(z, o), avg = nn::avg_pool2d(x, o);
  grads.push_back(tape.gradient(reduce_sum(mul(max, input(d, dims_of(max), 10))), {z})[0]);
  grads.push_back(tape.gradient(reduce_sum(mul(avg, input(d, dims_of(avg), 11))), {x})[0]);
  return grads;
}

TEST_F(GpuConvTest, TapeGradientsMatchTheCpu) {
  const Config configs[] = {
      {"SAME strides 2", {2, 7, 6, 3}, {3, 3}, {2, 2}, {1, 1}, Padding::kSame, {}},
      {"VALID", {2, 6, 5, 2}, {2, 3}, {1, 1}, {1, 1}, Padding::kValid, {}},
      {"EXPLICIT", {1, 5, 7, 2}, {3, 2}, {1, 2}, {1, 1}, Padding::kExplicit, {1, 1, 0, 1}},
  };
  for (const Config& c : configs) {
    for (DType d : {DType::kFloat32, DType::kFloat64}) {
      for (bool nchw : {false, true}) {
        expect_same(
            absl::StrCat(c.name, " ", dtype_name(d), nchw ? " NCHW" : " NHWC"),
            [&] { return tape_gradients(d, c, nchw); }, tolerance(d));
      }
    }
  }
}

}  // namespace
}  // namespace mt
