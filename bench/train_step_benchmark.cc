// A training step (forward, GradientTape backward, Adam update) from C++, issue 20's figure
// beside libtorch's (bench/peer/torch_train_peer.cc, the same names, models and step, built
// and run on the GPU machine by scripts/gpu-run.sh, step `trainbench`):
//   small: MLP 784-256-10, batch 32, float32 (dispatch dominates), on the GPU and the CPU;
//   wide:  MLP 4096-4096-4096-4096, batch 4096, float32 and bfloat16 (GEMMs dominate), GPU.
// Each iteration runs `reps` steps and then reads one value computed after the last update
// (the device's queue drained); the time is per step.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/minitensor.h"

namespace {

struct Model {
  std::vector<mt::Variable> params;  // w0, b0, w1, b1, ...
  mt::Tensor x, y;
};

// He-normal weights and zero biases for `sizes`, a batch of normal inputs and integer labels.
Model make_model(const std::vector<int64_t>& sizes, int64_t batch, mt::DType dtype) {
  Model model;
  model.x = mt::cast(mt::random::stateless_normal({batch, sizes[0]}, {1, 2}), dtype);
  model.y = mt::random::stateless_uniform_int({batch}, {3, 4}, 0, sizes.back());
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const double scale = std::sqrt(2.0 / static_cast<double>(sizes[i]));
    model.params.emplace_back(
        mt::cast(mt::random::stateless_normal({sizes[i], sizes[i + 1]},
                                              {5, static_cast<int64_t>(i)}, 0, scale),
                 dtype));
    model.params.emplace_back(mt::zeros({sizes[i + 1]}, dtype));
  }
  return model;
}

void step(Model& model, mt::optimizers::Adam& adam) {
  mt::GradientTape tape;
  mt::Tensor h = model.x;
  for (size_t i = 0; i < model.params.size(); i += 2) {
    h = mt::nn::bias_add(mt::matmul(h, model.params[i]), model.params[i + 1]);
    if (i + 2 < model.params.size()) h = mt::relu(h);
  }
  const mt::Tensor loss =
      mt::reduce_mean(mt::nn::sparse_softmax_cross_entropy_with_logits(model.y, h));
  std::vector<const mt::Variable*> sources;
  for (const mt::Variable& p : model.params) sources.push_back(&p);
  const std::vector<mt::Tensor> grads = tape.gradient(loss, sources);
  std::vector<mt::optimizers::GradAndVar> pairs;
  for (size_t i = 0; i < grads.size(); ++i) pairs.push_back({grads[i], model.params[i]});
  adam.apply_gradients(pairs);
}

// Waits for the device: reads a value the last update wrote.
void drain(const Model& model) {
  benchmark::DoNotOptimize(
      mt::reduce_sum(mt::cast(model.params.back(), mt::DType::kFloat32)).to_vector<float>());
}

// range(0): 0 GPU, 1 CPU; range(1): 0 small float32, 1 wide float32, 2 wide bfloat16.
void BM_TrainStep(benchmark::State& state) {
  const bool cpu = state.range(0) == 1;
  if (!cpu && mt::config::list_physical_devices("GPU").empty()) {
    return state.SkipWithError("needs a GPU: none is visible");
  }
  const bool wide = state.range(1) > 0;
  const mt::DType dtype = state.range(1) == 2 ? mt::DType::kBFloat16 : mt::DType::kFloat32;
  const std::vector<int64_t> sizes =
      wide ? std::vector<int64_t>{4096, 4096, 4096, 4096} : std::vector<int64_t>{784, 256, 10};
  mt::DeviceScope scope(cpu ? "/CPU:0" : "/GPU:0");
  Model model = make_model(sizes, wide ? 4096 : 32, dtype);
  mt::optimizers::Adam adam(1e-3);
  const int reps = wide ? 5 : 50;
  for (int i = 0; i < 3; ++i) step(model, adam);  // warm up: slots, pools, cuBLAS
  drain(model);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) step(model, adam);
    drain(model);
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(s.count() / reps);
  }
  state.SetLabel(std::string(cpu ? "CPU " : "GPU ") + (wide ? "wide " : "small ") +
                 mt::dtype_name(dtype));
}
BENCHMARK(BM_TrainStep)
    ->ArgNames({"cpu", "model"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 1})
    ->Args({0, 2})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// The small step as one mt::Function (issue 22): traced at the first call (its time is the
// first_call_ms counter, beside the eager step's), replayed after (one CUDA graph on the GPU).
void BM_TrainStepFunction(benchmark::State& state) {
  const bool cpu = state.range(0) == 1;
  if (!cpu && mt::config::list_physical_devices("GPU").empty()) {
    return state.SkipWithError("needs a GPU: none is visible");
  }
  mt::DeviceScope scope(cpu ? "/CPU:0" : "/GPU:0");
  Model model = make_model({784, 256, 10}, 32, mt::DType::kFloat32);
  mt::optimizers::Adam adam(1e-3);
  step(model, adam);  // slots and pools, as the eager benchmark's warm-up
  drain(model);
  mt::Function traced([&](absl::Span<const mt::Tensor>) -> std::vector<mt::Tensor> {
    step(model, adam);
    return {};
  });
  const auto start = std::chrono::steady_clock::now();
  traced({});
  drain(model);
  const std::chrono::duration<double, std::milli> first = std::chrono::steady_clock::now() - start;
  const int reps = 50;
  for (int i = 0; i < 3; ++i) traced({});
  drain(model);
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) traced({});
    drain(model);
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
    state.SetIterationTime(s.count() / reps);
  }
  state.counters["first_call_ms"] = first.count();
  state.SetLabel(std::string(cpu ? "CPU " : "GPU ") + "small float32, function " +
                 traced.replay_kind());
}
BENCHMARK(BM_TrainStepFunction)
    ->ArgNames({"cpu"})
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

// The GPU's pool grows as needed (the peer's caching allocator does the same).
int main(int argc, char** argv) {
  for (const mt::PhysicalDevice& gpu : mt::config::list_physical_devices("GPU")) {
    mt::config::set_memory_growth(gpu, true);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
