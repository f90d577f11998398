// Where the scalar bookkeeping's step spends the host's time (issue 24, docs/placement.md
// "The scalar bookkeeping's floor"): the step of bench/placement_suite/workloads.cc's
// ScalarBookkeeping, each of its statements timed on the host clock, under one policy.
// Prints, per statement, how often its result was on a GPU and the median and mean host time
// in µs, their sum, and the step's wall time when its statements are not timed one by one
// (the step runs ahead of the GPU, so wall time above the host's sum is the GPU's, or a
// wait); then the cost policy's estimates behind the running total and the division. Then
// the costs of the pieces such a step is made of, timed alone in the same process:
// a scalar op on the CPU, the same on the GPU (a kernel launch), and a 4-byte copy of a
// CPU scalar to the GPU.
//
//   scalar_step_probe [--policy=cost|gpu] [--n=512] [--steps=2000]
//   (run `gpu` with TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING=0 for the suite's always_gpu)
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/placement_suite/workloads.h"
#include "runtime/minitensor.h"

namespace mt::bench {
namespace {

constexpr int kStatements = 11;
constexpr std::array<const char*, kStatements> kNames = {
    "y = matmul(x, w)", "one = constant(1)",  "counter + one", "rows = constant(n)",
    "rows * rows",      "counter * elements", "mean(y)",       "total + mean",
    "cast(counter)",    "total / cast",       "cast(seen)"};

struct Step {
  Tensor x, w, counter = constant(0), total = constant(0.f), average, last;
  int64_t n;
  std::array<int, kStatements> on_gpu{};  // timed steps whose result was on a GPU
  int timed = 0;

  // Runs one step; with `ns`, adds each statement's host time to it.
  void run(std::array<std::vector<double>, kStatements>* ns) {
    int64_t t = ns != nullptr ? now_ns() : 0;
    int i = 0;
    auto mark = [&](const Tensor& made) {
      if (ns == nullptr) return;
      const int64_t now = now_ns();
      (*ns)[i].push_back(static_cast<double>(now - t));
      on_gpu[i] += made.device().find("GPU") != std::string::npos;
      t = now_ns();
      ++i;
    };
    Tensor y = matmul(x, w);
    mark(y);
    Tensor one = constant(1);
    mark(one);
    counter = add(counter, one);
    mark(counter);
    Tensor rows = constant(static_cast<int32_t>(n));
    mark(rows);
    Tensor elements = mul(rows, rows);
    mark(elements);
    Tensor seen = mul(counter, elements);
    mark(seen);
    Tensor mean = reduce_mean(y);
    mark(mean);
    total = add(total, mean);
    mark(total);
    Tensor count = cast(counter, DType::kFloat32);
    mark(count);
    average = div(total, count);
    mark(average);
    last = cast(seen, DType::kFloat32);
    mark(last);
    if (ns != nullptr) ++timed;
  }
  void finish() {
    wait_for(total);
    wait_for(average);
    wait_for(last);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Host time of `op` alone, median of `runs`, in µs.
template <typename Op>
double host_us(int runs, Op op) {
  std::vector<double> ns;
  for (int i = 0; i < runs + 50; ++i) {
    const int64_t t0 = now_ns();
    op();
    const int64_t t1 = now_ns();
    if (i >= 50) ns.push_back(static_cast<double>(t1 - t0));
  }
  return median(ns) / 1e3;
}

int run(const std::string& policy, int64_t n, int steps) {
  if (policy == "cost") config::set_placement_policy(config::PlacementPolicy::kCost);
  Step step;
  step.n = n;
  step.x = uniform(n, n, 1);
  step.w = uniform(n, n, 2);
  for (int i = 0; i < 2000; ++i) step.run(nullptr);  // warm-up: the cost policy calibrates
  step.finish();

  // The step's wall time, its statements not timed one by one.
  const int64_t t0 = now_ns();
  for (int i = 0; i < steps; ++i) step.run(nullptr);
  step.finish();
  const double wall_us = static_cast<double>(now_ns() - t0) / 1e3 / steps;

  // The floor: the product, its mean and the running total alone.
  Tensor floor_total = constant(0.f);
  const int64_t f0 = now_ns();
  for (int i = 0; i < steps; ++i)
    floor_total = add(floor_total, reduce_mean(matmul(step.x, step.w)));
  wait_for(floor_total);
  const double floor_us = static_cast<double>(now_ns() - f0) / 1e3 / steps;

  std::array<std::vector<double>, kStatements> ns;
  for (int i = 0; i < steps; ++i) step.run(&ns);
  step.finish();
  std::printf("policy %s, n = %lld, %d steps\n", policy.c_str(), static_cast<long long>(n), steps);
  std::printf("%-22s %-10s %10s %10s\n", "statement", "on a GPU", "median us", "mean us");
  double median_sum = 0, mean_sum = 0;
  for (int i = 0; i < kStatements; ++i) {
    median_sum += median(ns[i]) / 1e3;
    mean_sum += mean(ns[i]) / 1e3;
    const std::string share = std::to_string(100 * step.on_gpu[i] / step.timed) + "%";
    std::printf("%-22s %-10s %10.2f %10.2f\n", kNames[i], share.c_str(), median(ns[i]) / 1e3,
                mean(ns[i]) / 1e3);
  }
  std::printf("%-22s %-10s %10.2f %10.2f\n", "host sum", "", median_sum, mean_sum);
  std::printf("%-22s %-10s %10.2f\n", "step wall time", "", wall_us);
  std::printf("%-22s %-10s %10.2f\n", "products alone", "", floor_us);
  // The estimates behind the running total and the division (the cost policy's words).
  const Tensor mean_now = reduce_mean(matmul(step.x, step.w));
  const Tensor count = cast(step.counter, DType::kFloat32);
  std::printf("why total + mean: %s\n",
              debugging::explain_placement("AddV2", {step.total, mean_now}).detail.c_str());
  std::printf("why total / cast: %s\n",
              debugging::explain_placement("RealDiv", {step.total, count}).detail.c_str());
  std::printf("why the products' total + mean: %s\n",
              debugging::explain_placement("AddV2", {floor_total, mean_now}).detail.c_str());

  // The pieces, alone. Each GPU piece is waited for every 100 runs so the queue stays short.
  const bool gpu = !config::list_logical_devices("GPU").empty();
  Tensor a, b, host_scalar, sink;
  {
    DeviceScope cpu("/CPU:0");
    a = constant(1.5f);
    b = constant(2.5f);
    host_scalar = constant(3.f);
  }
  Tensor ga, gb;
  {
    DeviceScope dev(gpu ? "/GPU:0" : "/CPU:0");
    ga = identity(a);
    gb = identity(b);
  }
  wait_for(gb);
  int k = 0;
  const double cpu_add = host_us(steps, [&] {
    DeviceScope cpu("/CPU:0");
    sink = add(a, b);
  });
  const double gpu_add = host_us(steps, [&] {
    DeviceScope dev(gpu ? "/GPU:0" : "/CPU:0");
    sink = add(ga, gb);
    if (++k % 100 == 0) wait_for(sink);
  });
  wait_for(sink);
  const double copy_in = host_us(steps, [&] {
    DeviceScope dev(gpu ? "/GPU:0" : "/CPU:0");
    sink = identity(host_scalar);
    if (++k % 100 == 0) wait_for(sink);
  });
  wait_for(sink);
  const double gpu_add_host_input = host_us(steps, [&] {
    DeviceScope dev(gpu ? "/GPU:0" : "/CPU:0");
    sink = add(ga, host_scalar);
    if (++k % 100 == 0) wait_for(sink);
  });
  wait_for(sink);
  std::printf(
      "pieces, median host us: cpu scalar add %.2f, gpu scalar add %.2f, "
      "4-byte copy in %.2f, gpu add of a host scalar %.2f\n",
      cpu_add, gpu_add, copy_in, gpu_add_host_input);
  return 0;
}

}  // namespace
}  // namespace mt::bench

int main(int argc, char** argv) {
  std::string policy = "cost";
  int64_t n = 512;
  int steps = 2000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--policy=", 9) == 0) policy = argv[i] + 9;
    if (std::strncmp(argv[i], "--n=", 4) == 0) n = std::atoll(argv[i] + 4);
    if (std::strncmp(argv[i], "--steps=", 8) == 0) steps = std::atoi(argv[i] + 8);
  }
  return mt::bench::run(policy, n, std::max(steps, 10));
}
