// What the cost placement policy costs per op once calibrated (Note [Cost decision cache] in
// runtime/cost/cost_policy.h): place_op for an AddV2 of two 4 KiB tensors under the cost policy,
// beside the same call under the default priority policy and a raw out-of-line call, all
// in one run. Two logical CPUs give the policy a choice on any machine; the estimates are
// taught, so the figures do not depend on what this machine measures.
#include <benchmark/benchmark.h>

#include <vector>

#include "runtime/cost/cost_policy.h"
#include "runtime/eager/context.h"
#include "runtime/eager/execute.h"
#include "runtime/minitensor.h"

namespace mt {
namespace {

__attribute__((noinline)) int raw_call(int x) { return x + 1; }

void BM_Baseline_RawFunctionCall(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) benchmark::DoNotOptimize(x = raw_call(x));
}
BENCHMARK(BM_Baseline_RawFunctionCall);

// The runtime with two logical CPUs, estimates taught for AddV2 on 8 KiB, and two inputs.
struct Setup {
  Setup() {
    auto cpus = config::list_physical_devices("CPU");
    config::set_visible_devices(std::vector<PhysicalDevice>{}, "GPU");
    config::set_logical_device_configuration(cpus[0], {LogicalDeviceConfiguration{}, {}});
    rt = internal::Context::get().runtime().value();
    internal::CostPolicy& policy = internal::cost_policy(*rt);
    policy.reset_for_testing(nullptr);
    BusModel bus;
    bus.set(Link::kHostToHost, LinkCost{1000, 10});
    policy.model().set_bus(bus);
    const CostKey key{OpId::kAddV2, DType::kFloat32, footprint_bucket(8192)};
    // Calibrated: each device past the samples a loser is measured again for (place_op
    // runs nothing, so no sample would come; with two, CPU:1, 12x slower, would be tried on
    // every decision and none cached).
    for (int i = 0; i < CostModel::kRefreshSamples; ++i) {
      policy.model().record(key, 0, 8192, 500);
      policy.model().record(key, 1, 8192, 400);
    }
    a = constant(std::vector<float>(1024, 1.f), {1024});
    b = constant(std::vector<float>(1024, 2.f), {1024});
    outputs.push_back(OutputMeta{Shape::make({1024}).value(), DType::kFloat32});
  }
  internal::Runtime* rt;
  Tensor a, b;
  OutputMetas outputs;
};

Setup& setup() {
  static Setup* s = new Setup();
  return *s;
}

void place_loop(benchmark::State& state, bool cost) {
  Setup& s = setup();
  config::set_placement_policy(cost ? config::PlacementPolicy::kCost
                                    : config::PlacementPolicy::kPriority);
  internal::Context& ctx = internal::Context::get();
  const Tensor* inputs[] = {&s.a, &s.b};
  for (auto _ : state) {
    absl::StatusOr<Placement> p =
        internal::place_op(ctx, *s.rt, OpId::kAddV2, DType::kFloat32, inputs, &s.outputs);
    // What execute adds once the op is launched: its estimate joins the device's queue.
    if (cost && p.ok()) internal::cost_policy(*s.rt).note_launched(*p);
    benchmark::DoNotOptimize(p);
  }
  config::set_placement_policy(config::PlacementPolicy::kPriority);
}

void BM_PlaceOp_Priority(benchmark::State& state) { place_loop(state, false); }
BENCHMARK(BM_PlaceOp_Priority);

// Cached decisions, with one re-evaluation (a full decision) every 64 ops amortised in.
void BM_PlaceOp_Cost_Calibrated(benchmark::State& state) { place_loop(state, true); }
BENCHMARK(BM_PlaceOp_Cost_Calibrated);

}  // namespace
}  // namespace mt

BENCHMARK_MAIN();
