// The GPU guide's MirroredStrategy example in C++: the variables of a Dense(1) layer created
// under strategy.scope() are mirrored on every GPU (the CPU without one), then trained
// data-parallel on y = 2x + 1 with SGD(0.2), each replica on its share of the batch. One
// card is split into two virtual GPUs (ReductionToOneDevice); two cards use NCCL.
#include <cstdio>
#include <iostream>
#include <optional>

#include "runtime/minitensor.h"

int main() {
  std::vector<mt::PhysicalDevice> physical = mt::config::list_physical_devices("GPU");
  if (physical.size() == 1) {
    mt::config::set_logical_device_configuration(
        physical[0], {{.memory_limit_mb = 1024}, {.memory_limit_mb = 1024}});
  }
  mt::debugging::set_log_device_placement(true);
  mt::debugging::set_log_sink([](std::string_view line) { std::cout << line << "\n"; });

  std::vector<std::string> gpus;
  for (const mt::LogicalDevice& gpu : mt::config::list_logical_devices("GPU")) {
    gpus.push_back(gpu.name);
  }
  mt::distribute::MirroredStrategy strategy(gpus);  // no GPU: the CPU
  std::optional<mt::Variable> kernel, bias;
  {
    auto scope = strategy.scope();
    kernel.emplace(mt::constant({{0.5f}}), true, "dense/kernel");
    bias.emplace(mt::constant({0.f}), true, "dense/bias");
  }
  mt::debugging::set_log_device_placement(false);
  std::cout << "Number of devices: " << strategy.num_replicas_in_sync() << "\n";
  std::cout << "Cross-device ops: " << strategy.cross_device_ops_name() << "\n";

  // y = 2x + 1 on 16 points; replica r trains on its share, the loss over all 16.
  const int n = strategy.num_replicas_in_sync(), batch = 16;
  mt::optimizers::SGD sgd(0.2);
  for (int step = 0; step < 500; ++step) {
    strategy.run([&](mt::distribute::ReplicaContext& ctx) {
      const int begin = ctx.replica_id_in_sync_group() * batch / n;
      const int end = (ctx.replica_id_in_sync_group() + 1) * batch / n;
      std::vector<float> xs, ys;
      for (int i = begin; i < end; ++i) {
        xs.push_back(static_cast<float>(i) / batch);
        ys.push_back(2.f * static_cast<float>(i) / batch + 1.f);
      }
      mt::Tensor x = mt::constant(xs, {end - begin, 1});
      mt::Tensor y = mt::constant(ys, {end - begin, 1});
      mt::GradientTape tape;
      mt::Tensor error = mt::sub(mt::add(mt::matmul(x, *kernel), *bias), y);
      mt::Tensor loss = mt::div(mt::reduce_sum(mt::square(error)), mt::constant(float{batch}));
      std::vector<mt::Tensor> grads = tape.gradient(loss, {*kernel, *bias});
      sgd.apply_gradients({{grads[0], *kernel}, {grads[1], *bias}});
    });
  }
  std::vector<mt::Tensor> kernels =
      strategy.run([&](mt::distribute::ReplicaContext&) { return kernel->read_value(); });
  for (size_t r = 0; r < kernels.size(); ++r) {
    mt::DeviceScope cpu("/CPU:0");
    std::printf("replica %zu: kernel %.2f\n", r, mt::identity(kernels[r]).to_vector<float>()[0]);
  }
  mt::DeviceScope cpu("/CPU:0");
  std::printf("bias %.2f\n", mt::identity(bias->read_value()).to_vector<float>()[0]);
  return 0;
}
