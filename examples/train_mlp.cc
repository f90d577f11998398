// Trains a two-layer MLP classifier with GradientTape and Adam on a synthetic dataset made
// here: four Gaussian blobs in 2-D, 4096 points. Prints the loss per epoch and the final
// accuracy; exits 1 below 95%. `train_mlp CPU` or `train_mlp GPU` picks the device (the
// default placement otherwise), and --log prints where the first step's ops ran.
#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "runtime/minitensor.h"

namespace {

constexpr int64_t kPoints = 4096, kClasses = 4, kHidden = 64, kBatch = 128, kEpochs = 8;

// Points around (+-2, +-2), one blob per class, and their labels.
void make_blobs(std::vector<float>* x, std::vector<int32_t>* y) {
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.f, 0.7f);
  for (int64_t i = 0; i < kPoints; ++i) {
    const int32_t c = static_cast<int32_t>(i % kClasses);
    x->push_back((c & 1 ? 2.f : -2.f) + noise(rng));
    x->push_back((c & 2 ? 2.f : -2.f) + noise(rng));
    y->push_back(c);
  }
}

// glorot_uniform, as Keras initialises a Dense kernel.
mt::Variable glorot(int64_t in, int64_t out, int64_t seed) {
  const double limit = std::sqrt(6.0 / static_cast<double>(in + out));
  return mt::Variable(mt::random::stateless_uniform({in, out}, {seed, 1}, -limit, limit), true);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string device = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  const bool log = argc > 1 && std::strcmp(argv[argc - 1], "--log") == 0;
  std::vector<float> xs;
  std::vector<int32_t> ys;
  make_blobs(&xs, &ys);
  std::optional<mt::DeviceScope> scope;
  if (!device.empty()) scope.emplace("/" + device + ":0");
  const mt::Tensor x = mt::constant(xs, {kPoints, 2});
  const mt::Tensor y = mt::constant(ys, {kPoints});
  mt::Variable w1 = glorot(2, kHidden, 1), b1(mt::zeros({kHidden}));
  mt::Variable w2 = glorot(kHidden, kClasses, 2), b2(mt::zeros({kClasses}));
  const std::vector<const mt::Variable*> params = {&w1, &b1, &w2, &b2};
  mt::optimizers::Adam adam(0.01);
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    double total = 0;
    for (int64_t start = 0; start < kPoints; start += kBatch) {
      mt::debugging::set_log_device_placement(log && epoch == 1 && start == 0);
      const mt::Tensor xb = mt::slice(x, {start, 0}, {kBatch, 2});
      const mt::Tensor yb = mt::slice(y, {start}, {kBatch});
      mt::GradientTape tape;
      const mt::Tensor h = mt::relu(mt::nn::bias_add(mt::matmul(xb, w1), b1));
      const mt::Tensor logits = mt::nn::bias_add(mt::matmul(h, w2), b2);
      const mt::Tensor loss =
          mt::reduce_mean(mt::nn::sparse_softmax_cross_entropy_with_logits(yb, logits));
      const std::vector<mt::Tensor> grads = tape.gradient(loss, params);
      adam.apply_gradients({{grads[0], w1}, {grads[1], b1}, {grads[2], w2}, {grads[3], b2}});
      total += loss.to_vector<float>()[0];
    }
    std::cout << "epoch " << epoch << ": loss " << total / (kPoints / kBatch) << "\n";
  }
  const mt::Tensor logits =
      mt::nn::bias_add(mt::matmul(mt::relu(mt::nn::bias_add(mt::matmul(x, w1), b1)), w2), b2);
  const mt::Tensor hits =
      mt::cast(mt::equal(mt::argmax(logits, 1, mt::DType::kInt32), y), mt::DType::kFloat32);
  const float accuracy = mt::reduce_mean(hits).to_vector<float>()[0];
  std::cout << "accuracy " << accuracy << " on " << w1.device() << "\n";
  return accuracy >= 0.95f ? 0 : 1;
}
