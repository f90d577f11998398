// MirroredStrategy on the GPUs of this machine (issue 21's figures), each beside its
// baseline in the same run:
//   BM_AllReduce/bytes/impl  impl 0: raw ncclAllReduce on cudaMalloc buffers, one group per
//                            call (the floor); impl 1: ReplicaContext::all_reduce inside
//                            strategy.run. Counter busbw (GB/s), nccl-tests' formula:
//                            algbw * 2(n-1)/n.
//   BM_WideStep/gpus/dtype   the wide MLP of train_step_benchmark.cc (4096-4096-4096-4096,
//                            Adam, global batch 4096) data-parallel on the first `gpus`
//                            GPUs, each replica a batch of 4096/gpus. Counter examples/s.
//   BM_SmallStepReplicas/function/one_gpu  the small MLP (784-256-10, Adam, global batch
//                            32) on two GPUs or one, each replica's step eager or an
//                            mt::Function replaying its own graph. Time per step.
// Needs two GPUs (all-reduce) or as many as asked (step); skips itself otherwise.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cuda/nccl_library.h"
#include "runtime/eager/context.h"
#include "runtime/minitensor.h"

namespace {

using mt::distribute::MirroredStrategy;
using mt::distribute::ReduceOp;
using mt::distribute::ReplicaContext;

int num_gpus() { return static_cast<int>(mt::config::list_physical_devices("GPU").size()); }

// Waits for every device of the runtime.
void synchronize_all() {
  mt::internal::Runtime* rt = *mt::internal::Context::get().runtime();
  for (int i = 0; i < rt->num_devices(); ++i) (void)rt->device(i).synchronize();
}

// Returns the strategy over the first `n` GPUs, made once: NCCL's communicators take a
// while to set up, and a program keeps its strategy.
MirroredStrategy& strategy_for(int n) {
  static auto* made = new std::map<int, std::unique_ptr<MirroredStrategy>>;
  std::unique_ptr<MirroredStrategy>& strategy = (*made)[n];
  if (strategy == nullptr) {
    std::vector<std::string> devices;
    for (int i = 0; i < n; ++i) devices.push_back("/GPU:" + std::to_string(i));
    strategy = std::make_unique<MirroredStrategy>(devices);
  }
  return *strategy;
}

double busbw(int64_t bytes, double seconds, int n) {
  return static_cast<double>(bytes) / seconds * 2.0 * (n - 1) / n / 1e9;
}

// The floor: ncclAllReduce on every GPU, out of place, one group per call.
void all_reduce_raw(benchmark::State& state, int n, int64_t bytes) {
  auto nccl = mt::cuda::nccl_library();
  if (!nccl.ok()) return state.SkipWithError(std::string(nccl.status().message()).c_str());
  // The communicators live for the process, as the strategy's do: setting one up (every
  // connection at once, Note [NCCL connects at initialisation]) takes a while.
  static std::vector<mt::cuda::NcclCommHandle>* const comms = [&] {
    auto* made = new std::vector<mt::cuda::NcclCommHandle>(n);
    std::vector<int> ordinals(n);
    for (int i = 0; i < n; ++i) ordinals[i] = i;
    if ((*nccl)->comm_init_all(made->data(), n, ordinals.data()) != 0) made->clear();
    return made;
  }();
  if (comms->empty()) return state.SkipWithError("ncclCommInitAll failed");
  std::vector<void*> send(n), recv(n);
  std::vector<cudaStream_t> streams(n);
  for (int i = 0; i < n; ++i) {
    cudaSetDevice(i);
    cudaMalloc(&send[i], bytes);
    cudaMalloc(&recv[i], bytes);
    cudaMemset(send[i], 0, bytes);
    cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking);
  }
  auto once = [&] {
    (*nccl)->group_start();
    for (int i = 0; i < n; ++i) {
      (*nccl)->all_reduce(send[i], recv[i], bytes / 4, mt::cuda::kNcclFloat32, mt::cuda::kNcclSum,
                          (*comms)[i], streams[i]);
    }
    (*nccl)->group_end();
  };
  auto sync = [&] {
    for (int i = 0; i < n; ++i) cudaStreamSynchronize(streams[i]);
  };
  once();
  sync();
  const int reps = bytes >= (int64_t{256} << 20) ? 5 : 20;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) once();
    sync();
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(s.count() / reps);
    state.counters["busbw"] = busbw(bytes, s.count() / reps, n);
  }
  for (int i = 0; i < n; ++i) {
    cudaSetDevice(i);
    cudaStreamDestroy(streams[i]);
    cudaFree(send[i]);
    cudaFree(recv[i]);
  }
}

// ReplicaContext::all_reduce of one float32 tensor per replica, inside strategy.run.
void all_reduce_strategy(benchmark::State& state, int n, int64_t bytes) {
  MirroredStrategy& strategy = strategy_for(n);
  std::vector<mt::Tensor> inputs =
      strategy.run([&](ReplicaContext&) { return mt::zeros({bytes / 4}); });
  auto once = [&] {
    strategy.run([&](ReplicaContext& ctx) {
      benchmark::DoNotOptimize(
          ctx.all_reduce(ReduceOp::kSum, inputs[ctx.replica_id_in_sync_group()]));
    });
  };
  once();
  synchronize_all();
  const int reps = bytes >= (int64_t{256} << 20) ? 5 : 20;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) once();
    synchronize_all();
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(s.count() / reps);
    state.counters["busbw"] = busbw(bytes, s.count() / reps, n);
  }
  state.SetLabel(strategy.cross_device_ops_name());
}

void BM_AllReduce(benchmark::State& state) {
  const int n = num_gpus();
  if (n < 2) return state.SkipWithError("needs two GPUs");
  const int64_t bytes = state.range(0);
  if (state.range(1) == 0) return all_reduce_raw(state, n, bytes);
  all_reduce_strategy(state, n, bytes);
}
BENCHMARK(BM_AllReduce)
    ->ArgNames({"bytes", "impl"})
    ->ArgsProduct({{1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

struct Replica {
  mt::Tensor x, y;
};

// Runs `step` `warm_up` times, then times iterations of `reps` steps, each waited for on
// every device: manual time per step; with `examples` per step, counter examples_per_s.
template <typename Step>
void time_steps(benchmark::State& state, int warm_up, int reps, Step&& step, int64_t examples = 0) {
  for (int i = 0; i < warm_up; ++i) step();
  synchronize_all();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) step();
    synchronize_all();
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(s.count() / reps);
    if (examples > 0) {
      state.counters["examples_per_s"] = static_cast<double>(examples) * reps / s.count();
    }
  }
}

// One replica's step: forward, loss over the global batch, gradients, Adam (all-reduced).
void replica_step(const Replica& data, std::vector<mt::Variable>& params,
                  mt::optimizers::Adam& adam, int64_t global_batch) {
  mt::GradientTape tape;
  mt::Tensor h = data.x;
  for (size_t i = 0; i < params.size(); i += 2) {
    h = mt::nn::bias_add(mt::matmul(h, params[i]), params[i + 1]);
    if (i + 2 < params.size()) h = mt::relu(h);
  }
  mt::Tensor losses = mt::nn::sparse_softmax_cross_entropy_with_logits(data.y, h);
  mt::Tensor loss = mt::div(mt::reduce_sum(losses),
                            mt::fill({}, static_cast<double>(global_batch), losses.dtype()));
  std::vector<const mt::Variable*> sources;
  for (const mt::Variable& p : params) sources.push_back(&p);
  const std::vector<mt::Tensor> grads = tape.gradient(loss, sources);
  std::vector<mt::optimizers::GradAndVar> pairs;
  for (size_t i = 0; i < grads.size(); ++i) pairs.push_back({grads[i], params[i]});
  adam.apply_gradients(pairs);
}

// range(0): GPUs; range(1): 0 float32, 1 bfloat16.
void BM_WideStep(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  if (num_gpus() < n) return state.SkipWithError("not enough GPUs");
  const mt::DType dtype = state.range(1) == 1 ? mt::DType::kBFloat16 : mt::DType::kFloat32;
  MirroredStrategy& strategy = strategy_for(n);
  const int64_t width = 4096, batch = 4096;
  std::vector<mt::Variable> params;
  {
    auto scope = strategy.scope();
    for (int i = 0; i < 3; ++i) {
      params.emplace_back(mt::cast(
          mt::random::stateless_normal({width, width}, {5, i}, 0, std::sqrt(2.0 / width)), dtype));
      params.emplace_back(mt::zeros({width}, dtype));
    }
  }
  const int64_t local = batch / n;
  std::vector<Replica> data = strategy.run([&](ReplicaContext& ctx) {
    const int r = ctx.replica_id_in_sync_group();
    return Replica{mt::cast(mt::random::stateless_normal({local, width}, {1, r}), dtype),
                   mt::random::stateless_uniform_int({local}, {3, r}, 0, width)};
  });
  mt::optimizers::Adam adam(1e-3);
  auto step = [&] {
    strategy.run([&](ReplicaContext& ctx) {
      replica_step(data[ctx.replica_id_in_sync_group()], params, adam, batch);
    });
  };
  time_steps(state, 3, 5, step, batch);  // warm up: slots, pools, cuBLAS, NCCL
  state.SetLabel(std::string(strategy.cross_device_ops_name()) + " " + mt::dtype_name(dtype));
}
BENCHMARK(BM_WideStep)
    ->ArgNames({"gpus", "bf16"})
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// range(0): 0 each replica's step eager, 1 as an mt::Function (each replica replays its
// own graph between the all-reduces). The small MLP of train_step_benchmark.cc (784-256-10,
// Adam) with a global batch of 32 on two GPUs, and the same on GPU 0 alone (range(1) = 1),
// where the function is one graph: what the step costs per replica beside one device.
void BM_SmallStepReplicas(benchmark::State& state) {
  const bool as_function = state.range(0) == 1;
  const int n = state.range(1) == 1 ? 1 : 2;
  if (num_gpus() < n) return state.SkipWithError("not enough GPUs");
  MirroredStrategy& strategy = strategy_for(n);
  const int64_t batch = 32;
  std::vector<mt::Variable> params;
  {
    auto scope = strategy.scope();
    const int64_t dims[] = {784, 256, 10};
    for (int i = 0; i < 2; ++i) {
      params.emplace_back(mt::random::stateless_normal({dims[i], dims[i + 1]}, {7, i}, 0, 0.05));
      params.emplace_back(mt::zeros({dims[i + 1]}));
    }
  }
  std::vector<Replica> data = strategy.run([&](ReplicaContext& ctx) {
    const int r = ctx.replica_id_in_sync_group();
    return Replica{mt::random::stateless_normal({batch / n, 784}, {8, r}),
                   mt::random::stateless_uniform_int({batch / n}, {9, r}, 0, 10)};
  });
  mt::optimizers::Adam adam(1e-3);
  mt::Function step_fn([&](absl::Span<const mt::Tensor> args) -> std::vector<mt::Tensor> {
    replica_step(Replica{args[0], args[1]}, params, adam, batch);
    return {};
  });
  auto step = [&] {
    strategy.run([&](ReplicaContext& ctx) {
      const Replica& mine = data[ctx.replica_id_in_sync_group()];
      if (as_function) {
        step_fn({mine.x, mine.y});
      } else {
        replica_step(mine, params, adam, batch);
      }
    });
  };
  time_steps(state, 5, 50, step);  // warm up: slots, pools, cuBLAS, the traces
  state.SetLabel(std::string(strategy.cross_device_ops_name()) +
                 (as_function ? " function:" + step_fn.replay_kind() : " eager"));
}
BENCHMARK(BM_SmallStepReplicas)
    ->ArgNames({"function", "one_gpu"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

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
