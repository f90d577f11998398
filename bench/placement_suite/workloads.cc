#include "bench/placement_suite/workloads.h"

#include <cstdint>
#include <vector>

#include "runtime/minitensor.h"

namespace mt::bench {

Tensor uniform(int64_t rows, int64_t cols, int64_t seed) {
  return random::stateless_uniform({rows, cols}, {seed, 1}, -0.05, 0.05);
}

// Reads `t` on the host: every op before it has finished.
void wait_for(const Tensor& t) { (void)reshape(t, {-1}).to_vector<float>(); }

namespace {

// Scalar bookkeeping between matmuls: a step counter, the batch's element count from its
// shape, and a running loss average, all int32 or float scalars, around one n x n product
// (n = 512 with a GPU, 64 without). Without `bookkeeping`, only what must run beside the
// product: its mean added to the running total (the floor under any placement of the rest).
class ScalarBookkeeping final : public Workload {
 public:
  ScalarBookkeeping(int64_t n, bool bookkeeping)
      : n_(n), bookkeeping_(bookkeeping), x_(uniform(n_, n_, 1)), w_(uniform(n_, n_, 2)) {}
  void step() override {
    Tensor y = matmul(x_, w_);
    if (!bookkeeping_) {
      total_ = add(total_, reduce_mean(y));
      return;
    }
    counter_ = add(counter_, constant(1));
    Tensor rows = constant(static_cast<int32_t>(n_));
    Tensor elements = mul(rows, rows);
    Tensor seen = mul(counter_, elements);
    total_ = add(total_, reduce_mean(y));
    average_ = div(total_, cast(counter_, DType::kFloat32));
    last_ = cast(seen, DType::kFloat32);
  }
  void finish() override {
    wait_for(total_);
    if (!bookkeeping_) return;
    wait_for(average_);
    wait_for(last_);
  }

 private:
  int64_t n_;
  bool bookkeeping_;
  Tensor x_, w_;
  Tensor counter_ = constant(0);
  Tensor total_ = constant(0.f);
  Tensor average_, last_;
};

// A 784-256-256-10 ReLU network's forward pass on `batch` rows.
class MlpInference final : public Workload {
 public:
  explicit MlpInference(int64_t batch)
      : x_(uniform(batch, 784, 3)),
        w1_(uniform(784, 256, 4)),
        w2_(uniform(256, 256, 5)),
        w3_(uniform(256, 10, 6)) {}
  void step() override { out_ = matmul(relu(matmul(relu(matmul(x_, w1_)), w2_)), w3_); }
  void finish() override { wait_for(out_); }

 private:
  Tensor x_, w1_, w2_, w3_, out_;
};

// Raw int32 pixels arrive from the host each step, are cast and normalised, then multiplied.
class PreprocessThenMatmul final : public Workload {
 public:
  explicit PreprocessThenMatmul(bool gpu)
      : batch_(gpu ? 256 : 32), pixels_(batch_ * 784, 7), w_(uniform(784, 1024, 8)) {}
  void step() override {
    Tensor raw = constant(pixels_, {batch_, 784});
    Tensor x = mul(sub(cast(raw, DType::kFloat32), constant(127.5f)), constant(1 / 127.5f));
    out_ = relu(matmul(x, w_));
  }
  void finish() override { wait_for(out_); }

 private:
  int64_t batch_;
  std::vector<int32_t> pixels_;
  Tensor w_, out_;
};

// Four large products in a chain.
class LargeMatmulChain final : public Workload {
 public:
  explicit LargeMatmulChain(bool gpu)
      : n_(gpu ? 4096 : 256), x_(uniform(n_, n_, 9)), w_(uniform(n_, n_, 10)) {}
  void step() override {
    Tensor y = x_;
    for (int i = 0; i < 4; ++i) y = matmul(y, w_);
    out_ = y;
  }
  void finish() override { wait_for(out_); }

 private:
  int64_t n_;
  Tensor x_, w_, out_;
};

// Keeps 24 products of 64 MiB each alive: 1.5 GiB, more than the suite's 1 GiB logical GPU
// (placement_suite.cc configures it for this workload).
class OverfillGpu final : public Workload {
 public:
  OverfillGpu() : a_(uniform(4096, 4096, 11)) {}
  void step() override {
    std::vector<Tensor> kept;
    for (int i = 0; i < 24; ++i) kept.push_back(add(a_, constant(static_cast<float>(i))));
    out_ = add_n(kept);
  }
  void finish() override { wait_for(out_); }

 private:
  Tensor a_, out_;
};

// One step of training a 784-256-10 network with SGD on a batch of 64.
class TrainStep final : public Workload {
 public:
  TrainStep()
      : x_(uniform(64, 784, 12)),
        y_(constant(std::vector<int32_t>(64, 3), {64})),
        w1_(uniform(784, 256, 13)),
        w2_(uniform(256, 10, 14)),
        sgd_(0.01) {}
  void step() override {
    GradientTape tape;
    Tensor logits = matmul(relu(matmul(x_, w1_)), w2_);
    loss_ = reduce_mean(nn::sparse_softmax_cross_entropy_with_logits(y_, logits));
    std::vector<Tensor> g = tape.gradient(loss_, {&w1_, &w2_});
    sgd_.apply_gradients({{g[0], w1_}, {g[1], w2_}});
  }
  void finish() override { wait_for(loss_); }

 private:
  Tensor x_, y_;
  Variable w1_, w2_;
  optimizers::SGD sgd_;
  Tensor loss_;
};

}  // namespace

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names = {
      "scalar_bookkeeping", "scalar_products_only", "scalar_bookkeeping_256",
      "mlp_batch1",         "mlp_batch1024",        "preprocess_then_matmul",
      "large_matmul_chain", "overfill_gpu_limit",   "train_step"};
  return names;
}

bool needs_gpu(const std::string& name) { return name == "overfill_gpu_limit"; }

std::unique_ptr<Workload> make_workload(const std::string& name, bool gpu) {
  if (name == "scalar_bookkeeping")
    return std::make_unique<ScalarBookkeeping>(gpu ? 512 : 64, true);
  if (name == "scalar_products_only") {
    return std::make_unique<ScalarBookkeeping>(gpu ? 512 : 64, false);
  }
  if (name == "scalar_bookkeeping_256") return std::make_unique<ScalarBookkeeping>(256, true);
  if (name == "mlp_batch1") return std::make_unique<MlpInference>(1);
  if (name == "mlp_batch1024") return std::make_unique<MlpInference>(1024);
  if (name == "preprocess_then_matmul") return std::make_unique<PreprocessThenMatmul>(gpu);
  if (name == "large_matmul_chain") return std::make_unique<LargeMatmulChain>(gpu);
  if (name == "overfill_gpu_limit") return std::make_unique<OverfillGpu>();
  if (name == "train_step") return std::make_unique<TrainStep>();
  return nullptr;
}

}  // namespace mt::bench
