// libtorch's training step beside bench/train_step_benchmark.cc: the same names, models and
// step (forward with at::addmm and relu, cross entropy, backward, torch::optim::Adam), so
// scripts/gpu-run.sh (step `trainbench`) can set the two side by side. Not part of the CMake
// build: libtorch lives only on the GPU machine, where gpu-run.sh compiles this file.
// Each iteration runs `reps` steps and then waits for the device; the time is per step.
#include <benchmark/benchmark.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace {

struct Model {
  std::vector<torch::Tensor> params;  // w0, b0, w1, b1, ...
  torch::Tensor x, y;
};

Model make_model(const std::vector<int64_t>& sizes, int64_t batch, torch::ScalarType dtype,
                 torch::Device device) {
  Model model;
  torch::manual_seed(1);
  const auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  model.x = torch::randn({batch, sizes[0]}, opts).to(dtype);
  model.y = torch::randint(0, sizes.back(), {batch}, opts.dtype(torch::kInt64));
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const double scale = std::sqrt(2.0 / static_cast<double>(sizes[i]));
    model.params.push_back(
        (torch::randn({sizes[i], sizes[i + 1]}, opts) * scale).to(dtype).requires_grad_());
    model.params.push_back(torch::zeros({sizes[i + 1]}, opts.dtype(dtype)).requires_grad_());
  }
  return model;
}

void step(Model& model, torch::optim::Adam& adam) {
  torch::Tensor h = model.x;
  for (size_t i = 0; i < model.params.size(); i += 2) {
    h = torch::addmm(model.params[i + 1], h, model.params[i]);
    if (i + 2 < model.params.size()) h = torch::relu(h);
  }
  const torch::Tensor loss = torch::nn::functional::cross_entropy(h, model.y);
  adam.zero_grad();
  loss.backward();
  adam.step();
}

void BM_TrainStep(benchmark::State& state) {
  const bool cpu = state.range(0) == 1;
  if (!cpu && !torch::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const bool wide = state.range(1) > 0;
  const torch::ScalarType dtype = state.range(1) == 2 ? torch::kBFloat16 : torch::kFloat32;
  const std::vector<int64_t> sizes =
      wide ? std::vector<int64_t>{4096, 4096, 4096, 4096} : std::vector<int64_t>{784, 256, 10};
  const torch::Device device = cpu ? torch::Device(torch::kCPU) : torch::Device(torch::kCUDA);
  Model model = make_model(sizes, wide ? 4096 : 32, dtype, device);
  torch::optim::Adam adam(model.params, torch::optim::AdamOptions(1e-3).eps(1e-7));
  const int reps = wide ? 5 : 50;
  const auto drain = [&] {
    if (!cpu) torch::cuda::synchronize();
  };
  for (int i = 0; i < 3; ++i) step(model, adam);
  drain();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) step(model, adam);
    drain();
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(s.count() / reps);
  }
  state.SetLabel(std::string(cpu ? "CPU " : "GPU ") + (wide ? "wide " : "small ") +
                 (dtype == torch::kBFloat16 ? "bfloat16" : "float32"));
}
BENCHMARK(BM_TrainStep)
    ->ArgNames({"cpu", "model"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 1})
    ->Args({0, 2})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
