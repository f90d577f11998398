// The placement suite (issue 24): each workload of workloads.h under each placement
// policy, wall time per step, in one table. Every (workload, policy) pair runs in a fresh
// child process of this program, so that one policy's measurements, caches and memory
// never help another and the small-op rule's environment variable can differ:
//
//   placement_suite                 # the table
//   placement_suite --steps=50      # fewer timed steps per pair (default 1000)
//   placement_suite --child --workload=mlp_batch1 --policy=cost --log_step=1
//                                   # one pair here, then one step's placement logged
//
// Each pair runs up to three times, in three processes, and the table shows the median.
//
// Policies: always_gpu (priority order with the small-op rule off: minitensor's placement
// before issue 24), tf_rules (the default: priority plus TensorFlow's small-op rule),
// all_cpu (GPUs hidden) and cost (mt::config::PlacementPolicy::kCost, after warm-up steps
// that calibrate it). On a machine without a GPU every policy places on the CPU and the
// workloads that need a GPU are skipped; CI builds and runs it so.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "bench/placement_suite/workloads.h"
#include "runtime/minitensor.h"

namespace mt::bench {
namespace {

const std::vector<std::string> kPolicies = {"always_gpu", "tf_rules", "all_cpu", "cost"};

std::string flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  const std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return argv[i] + prefix.size();
  }
  return fallback;
}

// Runs one pair in this process; prints "RESULT <ms per step>", "RESULT skipped" or
// "RESULT error: <what>".
int run_child(const std::string& workload, const std::string& policy, int steps, bool log_step) {
  const bool has_gpu = !config::list_physical_devices("GPU").empty();
  if (needs_gpu(workload) && !has_gpu) {
    std::cout << "RESULT skipped\n";
    return 0;
  }
  if (policy == "all_cpu") config::set_visible_devices(std::vector<PhysicalDevice>{}, "GPU");
  if (workload == "overfill_gpu_limit" && policy != "all_cpu") {
    config::set_logical_device_configuration(config::list_physical_devices("GPU")[0],
                                             {LogicalDeviceConfiguration{1024}});
  }
  if (policy == "cost") config::set_placement_policy(config::PlacementPolicy::kCost);
  try {
    // Sized by the machine, not the policy: every policy runs the same program.
    std::unique_ptr<Workload> w = make_workload(workload, has_gpu);
    // The same warm-up for every policy, at least 10 steps and kWarmUp (enough for the cost
    // one to calibrate: 10 steps alone may leave calibration runs, each a CPU run with its
    // copies, among the timed steps), and the timed steps, each phase cut short after
    // kBudget so that a slow policy (a large product on the CPU) does not hold the suite up;
    // at least two and one steps run.
    using Clock = std::chrono::steady_clock;
    constexpr std::chrono::seconds kBudget{3};
    auto elapsed = [](Clock::time_point since) { return Clock::now() - since; };
    const auto warm_start = Clock::now();
    constexpr std::chrono::milliseconds kWarmUp{300};
    for (int i = 0;
         (i < 10 || elapsed(warm_start) < kWarmUp) && (i < 2 || elapsed(warm_start) < kBudget);
         ++i) {
      w->step();
    }
    w->finish();
    const auto begin = Clock::now();
    int ran = 0;
    while (ran < steps && (ran < 1 || elapsed(begin) < kBudget)) {
      w->step();
      ++ran;
    }
    w->finish();
    const double ms = std::chrono::duration<double, std::milli>(elapsed(begin)).count();
    std::cout << "RESULT " << ms / ran << "\n";
    if (log_step) {  // one more step with its placement logged (stderr): the reasons
      debugging::set_log_device_placement(true);
      debugging::set_log_placement_reasons(true);
      w->step();
      w->finish();
      debugging::set_log_device_placement(false);
    }
  } catch (const Error& e) {
    std::cout << "RESULT error: "
              << (e.code() == absl::StatusCode::kResourceExhausted ? "ResourceExhausted" : e.what())
              << "\n";
  }
  return 0;
}

// Runs one pair in a child process and returns its RESULT text.
std::string run_pair(const char* self, const std::string& workload, const std::string& policy,
                     int steps) {
  std::string command = policy == "always_gpu" ? "TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING=0 " : "";
  command += std::string(self) + " --child --workload=" + workload + " --policy=" + policy +
             " --steps=" + std::to_string(steps) + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "error: popen";
  std::string result = "error: no result";
  char line[512];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    std::string s(line);
    if (s.rfind("RESULT ", 0) == 0) result = s.substr(7, s.find_last_not_of("\n") - 6);
  }
  pclose(pipe);
  return result;
}

int run_table(const char* self, int steps) {
  if (config::list_physical_devices("GPU").empty()) {
    std::printf("No GPU: every policy places on the CPU, and GPU workloads are skipped.\n");
  }
  std::printf("%-24s", "ms per step");
  for (const std::string& p : kPolicies) std::printf(" %12s", p.c_str());
  std::printf(" %14s\n", "cost/best fixed");
  for (const std::string& w : workload_names()) {
    std::printf("%-24s", w.c_str());
    double best_fixed = 0, cost = 0;
    for (const std::string& p : kPolicies) {
      // Each pair runs in up to kRuns fresh processes, the median reported: from one process
      // to the next the same placement on an H100 varied by up to 1.7x (clocks, the cores the
      // process landed on). A pair that has taken kRunsBudget stops repeating.
      constexpr int kRuns = 3;
      constexpr std::chrono::seconds kRunsBudget{3};
      const auto pair_start = std::chrono::steady_clock::now();
      std::vector<double> runs;
      std::string error;
      for (int run = 0; run < kRuns; ++run) {
        std::string r = run_pair(self, w, p, steps);
        char* end = nullptr;
        double ms = std::strtod(r.c_str(), &end);
        if (end == r.c_str()) {  // an error or "skipped": the pair's result if it came first;
          if (runs.empty()) error = r;  // after a run that passed, the runs so far stand
          break;
        }
        runs.push_back(ms);
        if (std::chrono::steady_clock::now() - pair_start > kRunsBudget) break;
      }
      if (!error.empty()) {
        std::printf(" %12s", error.substr(0, 12).c_str());
        continue;
      }
      std::sort(runs.begin(), runs.end());
      const double ms = runs[(runs.size() - 1) / 2];  // the median; of two, the lower
      std::printf(" %12.3f", ms);
      if (p == "cost") {
        cost = ms;
      } else if (best_fixed == 0 || ms < best_fixed) {
        best_fixed = ms;
      }
    }
    if (cost > 0 && best_fixed > 0) {
      std::printf(" %14.2f", cost / best_fixed);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace mt::bench

int main(int argc, char** argv) {
  using mt::bench::flag;
  const int steps = std::atoi(flag(argc, argv, "steps", "1000").c_str());
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--child") == 0) {
      return mt::bench::run_child(flag(argc, argv, "workload", ""), flag(argc, argv, "policy", ""),
                                  steps, flag(argc, argv, "log_step", "0") == "1");
    }
  }
  return mt::bench::run_table(argv[0], steps);
}
