// Trains a small ConvNet with GradientTape and Adam on a synthetic image dataset made here:
// 2048 noisy 12x12 grey images, each holding a bright 3x3 square in one of four quadrants
// (the class). Conv2D (8 filters of 3x3, SAME) + ReLU, 2x2 MaxPool, then a Dense layer to
// the four classes. Prints the loss per epoch and the final accuracy; exits 1 below 95%.
// `train_cnn CPU` or `train_cnn GPU` picks the device (the default placement otherwise).
#include <cmath>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "runtime/minitensor.h"

namespace {

constexpr int64_t kImages = 2048, kSide = 12, kClasses = 4, kFilters = 8, kBatch = 128, kEpochs = 6;

// The images (NHWC, one channel) and their labels: noise in [0, 0.5), plus 1 over a 3x3
// square placed at random inside the quadrant of the class.
void make_images(std::vector<float>* x, std::vector<int32_t>* y) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> noise(0.f, 0.5f);
  std::uniform_int_distribution<int> offset(0, kSide / 2 - 3);
  for (int64_t i = 0; i < kImages; ++i) {
    const int32_t c = static_cast<int32_t>(i % kClasses);
    const int top = (c & 2 ? kSide / 2 : 0) + offset(rng);
    const int left = (c & 1 ? kSide / 2 : 0) + offset(rng);
    for (int h = 0; h < kSide; ++h) {
      for (int w = 0; w < kSide; ++w) {
        const bool square = h >= top && h < top + 3 && w >= left && w < left + 3;
        x->push_back(noise(rng) + (square ? 1.f : 0.f));
      }
    }
    y->push_back(c);
  }
}

// glorot_uniform over a kernel of `fan_in` inputs and `fan_out` outputs, as Keras.
mt::Variable glorot(std::vector<int64_t> shape, int64_t fan_in, int64_t fan_out, int64_t seed) {
  const double limit = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return mt::Variable(mt::random::stateless_uniform(shape, {seed, 1}, -limit, limit), true);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string device = argc > 1 ? argv[1] : "";
  std::vector<float> xs;
  std::vector<int32_t> ys;
  make_images(&xs, &ys);
  std::optional<mt::DeviceScope> scope;
  if (!device.empty()) scope.emplace("/" + device + ":0");
  const mt::Tensor x = mt::constant(xs, {kImages, kSide, kSide, 1});
  const mt::Tensor y = mt::constant(ys, {kImages});
  constexpr int64_t kFlat = (kSide / 2) * (kSide / 2) * kFilters;
  mt::Variable filters = glorot({3, 3, 1, kFilters}, 9, 9 * kFilters, 1);
  mt::Variable conv_bias(mt::zeros({kFilters}));
  mt::Variable w = glorot({kFlat, kClasses}, kFlat, kClasses, 2), b(mt::zeros({kClasses}));
  const std::vector<const mt::Variable*> params = {&filters, &conv_bias, &w, &b};
  mt::nn::Conv2DOptions same;
  same.padding = mt::Padding::kSame;
  mt::nn::PoolOptions pool;
  pool.ksize = pool.strides = {1, 2, 2, 1};
  auto logits_of = [&](const mt::Tensor& images) {
    const mt::Tensor h =
        mt::relu(mt::nn::bias_add(mt::nn::conv2d(images, filters, same), conv_bias));
    const mt::Tensor p = mt::nn::max_pool2d(h, pool);
    return mt::nn::bias_add(mt::matmul(mt::reshape(p, {-1, kFlat}), w), b);
  };
  mt::optimizers::Adam adam(0.01);
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    double total = 0;
    for (int64_t start = 0; start < kImages; start += kBatch) {
      const mt::Tensor xb = mt::slice(x, {start, 0, 0, 0}, {kBatch, kSide, kSide, 1});
      const mt::Tensor yb = mt::slice(y, {start}, {kBatch});
      mt::GradientTape tape;
      const mt::Tensor loss =
          mt::reduce_mean(mt::nn::sparse_softmax_cross_entropy_with_logits(yb, logits_of(xb)));
      const std::vector<mt::Tensor> grads = tape.gradient(loss, params);
      adam.apply_gradients(
          {{grads[0], filters}, {grads[1], conv_bias}, {grads[2], w}, {grads[3], b}});
      total += loss.to_vector<float>()[0];
    }
    std::cout << "epoch " << epoch << ": loss " << total / (kImages / kBatch) << "\n";
  }
  const mt::Tensor hits =
      mt::cast(mt::equal(mt::argmax(logits_of(x), 1, mt::DType::kInt32), y), mt::DType::kFloat32);
  const float accuracy = mt::reduce_mean(hits).to_vector<float>()[0];
  std::cout << "accuracy " << accuracy << " on " << filters.device() << "\n";
  return accuracy >= 0.95f ? 0 : 1;
}
