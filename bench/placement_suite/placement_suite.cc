// The placement suite (issue 24): each workload of workloads.h under each placement
// policy, wall time per step, in one table. Every (workload, policy) pair runs in a fresh
// child process of this program, so that one policy's measurements, caches and memory
// never help another and the small-op rule's environment variable can differ:
//
//   placement_suite                 # the table
//   placement_suite --steps=50      # fewer timed steps per pair (default 1000)
//   placement_suite --child --workload=mlp_batch1 --policy=cost --log_step=1
//                                   # one pair here, then one step's placement logged
//   placement_suite --child --workload=mlp_batch1 --policy=cost --trace=t.json --blocks=10
//                                   # and 20 more steps traced (docs/trace.md), and the
//                                   # timed steps' ms per step in 10 blocks (BLOCKS line);
//                                   # --report=r.html writes those steps' HTML report
//   placement_suite --child --workload=mlp_batch1024 --policy=cost --history=h
//                                   # the cost policy's history after warm-up (h.warm) and
//                                   # after the timed steps (h.timed), and the GPU pool's
//                                   # reserved bytes then (MEMORY lines)
//   placement_suite --workloads=mlp_batch1,train_step --policies=always_gpu,cost
//                                   # part of the table
//   placement_suite --child --workload=train_step --policy=always_gpu --paired
//                                   # always_gpu and the cost policy in one process, by
//                                   # turns (Note [Paired runs]): RESULT and PAIRED lines;
//                                   # --cost_first builds and warms the cost one first
//   placement_suite --child --workload=train_step --policy=cost --load_history=h.timed
//                                   # a run that starts from a saved history;
//                                   # --priority_after_warm_up times priority placement
//                                   # after the cost policy's warm-up
//
// Each pair runs up to five times, in five processes, the policies taking turns, and the
// table shows the median. always_gpu's and tf_rules' processes are paired ones: the
// "paired" column is cost / best fixed with their medians of the cost policy's ratio to
// them in their own processes (all_cpu's from the columns).
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
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
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

// Returns the comma-separated items of `list`, or `all` when it is empty.
std::vector<std::string> chosen(const std::string& list, const std::vector<std::string>& all) {
  if (list.empty()) return all;
  return absl::StrSplit(list, ',');
}

// What a child does besides its timed steps.
struct ChildOptions {
  bool log_step = false;     // one more step with its placement logged
  std::string trace;         // a trace of kTracedSteps more steps, saved there
  std::string report;        // the same steps' HTML report (docs/trace.md), saved there
  int blocks = 0;            // the timed steps' ms per step in this many blocks
  std::string history;       // the cost policy's history after warm-up and after the timed
                             // steps, saved to <history>.warm and <history>.timed
  bool paired = false;       // the cost policy too, in this process (Note [Paired runs])
  bool cost_first = false;   // paired: the cost policy's workload built and warmed first
  std::string load_history;  // the cost policy's history loaded before the workload is built
  bool priority_after_warm_up = false;  // the timed steps placed by priority (diagnosis)
};

// Note [Paired runs]
// From one process to the next the same placement on an H100 ran up to 1.3x slower (the
// batch-1024 MLP's steps under always_gpu: 0.042-0.058 ms in five processes), so two
// policies that place every op alike read 0.98-1.36x apart in tables of five processes
// each. A paired child (--paired) runs a fixed GPU policy's workload and the cost policy's,
// each built and warmed under its policy, in one process: the timed steps go in
// kPairedRounds rounds of one block each, the policy switched before each block and each
// round starting with the other one, every block ending with finish(). The two then share
// the process's cores, memory and GPU context and every slow stretch of the machine, and
// their ratio is the cost policy's price beside that policy. all_cpu cannot be paired (its
// process hides the GPUs), nor always_gpu with tf_rules (the small-op rule is read at the
// runtime's start); the cost policy uses neither.
constexpr int kPairedRounds = 10;

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// Runs `w`'s warm-up: at least 10 steps and kWarmUpMs (enough for the cost policy to
// calibrate), cut short after 3 s (at least two steps).
void warm_up(Workload& w) {
  constexpr double kWarmUpMs = 500, kBudgetMs = 3000;
  const auto start = Clock::now();
  for (int i = 0; (i < 10 || ms_since(start) < kWarmUpMs) && (i < 2 || ms_since(start) < kBudgetMs);
       ++i) {
    w.step();
  }
  w.finish();
}

// Runs a paired child (Note [Paired runs]) for the fixed `policy`; prints "RESULT <its ms per
// step>" and "PAIRED <its ms> <cost ms>".
void run_paired(const std::string& workload, bool has_gpu, int steps, bool cost_first) {
  auto use = [](bool cost) {
    config::set_placement_policy(cost ? config::PlacementPolicy::kCost
                                      : config::PlacementPolicy::kPriority);
  };
  std::unique_ptr<Workload> w[2];
  for (int i = 0; i < 2; ++i) {
    const int cost = cost_first ? 1 - i : i;
    use(cost);
    w[cost] = make_workload(workload, has_gpu);
    if (w[cost] == nullptr) {
      std::cout << "RESULT error: no workload '" << workload << "'\n";
      return;
    }
    warm_up(*w[cost]);
  }
  const int per_block = std::max(1, steps / kPairedRounds);
  double ms[2] = {0, 0};
  int ran[2] = {0, 0};
  constexpr double kBudgetMs = 6000;
  const auto begin = Clock::now();
  for (int round = 0; round < kPairedRounds && (round < 1 || ms_since(begin) < kBudgetMs);
       ++round) {
    for (int turn = 0; turn < 2; ++turn) {
      const int cost = (round + turn) % 2;
      use(cost);        // a new epoch: the decisions cached before are gone
      w[cost]->step();  // so one untimed step makes them again, for both policies alike
      w[cost]->finish();
      const auto start = Clock::now();
      for (int i = 0; i < per_block; ++i) w[cost]->step();
      w[cost]->finish();
      ms[cost] += ms_since(start);
      ran[cost] += per_block;
    }
  }
  std::cout << "RESULT " << ms[0] / ran[0] << "\n";
  std::cout << "PAIRED " << ms[0] / ran[0] << " " << ms[1] / ran[1] << "\n";
}

// Runs one pair in this process; prints "RESULT <ms per step>", "RESULT skipped" or
// "RESULT error: <what>", and "BLOCKS <ms per step>..." when asked.
int run_child(const std::string& workload, const std::string& policy, int steps,
              const ChildOptions& options) {
  // A paired child times its blocks and nothing else (Note [Paired runs]).
  if (options.paired &&
      (options.log_step || !options.trace.empty() || !options.report.empty() ||
       options.blocks > 0 || !options.history.empty() || options.priority_after_warm_up)) {
    std::cout << "RESULT error: --paired takes none of --log_step, --trace, --report, "
                 "--blocks, --history, --priority_after_warm_up\n";
    return 1;
  }
  if (options.cost_first && !options.paired) {
    std::cout << "RESULT error: --cost_first needs --paired\n";
    return 1;
  }
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
  if (!options.load_history.empty()) config::load_placement_history(options.load_history);
  try {
    if (options.paired) {
      run_paired(workload, has_gpu, steps, options.cost_first);
      return 0;
    }
    // Sized by the machine, not the policy: every policy runs the same program.
    std::unique_ptr<Workload> w = make_workload(workload, has_gpu);
    if (w == nullptr) {
      std::cout << "RESULT error: no workload '" << workload << "'\n";
      return 0;
    }
    // The same warm-up for every policy (warm_up), and the timed steps, cut short after
    // kBudgetMs so that a slow policy (a large product on the CPU) does not hold the suite up;
    // at least one step runs.
    constexpr double kBudgetMs = 3000;
    warm_up(*w);
    if (options.priority_after_warm_up) {
      config::set_placement_policy(config::PlacementPolicy::kPriority);
    }
    // What the policy measured and the GPU pool held, after warm-up and after the timed
    // steps: a change between them is a measurement (or pool growth) among the timed steps.
    auto snapshot = [&](const std::string& phase) {
      if (options.history.empty() || policy != "cost") return;
      config::save_placement_history(options.history + "." + phase);
      if (has_gpu) {
        MemoryInfo m = config::get_memory_info("GPU:0");
        std::cout << "MEMORY " << phase << " GPU:0 reserved " << m.reserved << " peak " << m.peak
                  << "\n";
      }
    };
    snapshot("warm");
    const auto begin = Clock::now();
    int ran = 0;
    // Blocks end with finish(): each one waits for its GPU work, so that its time is its own.
    const int per_block = options.blocks > 0 ? std::max(1, steps / options.blocks) : steps + 1;
    std::ostringstream blocks;
    auto block_start = begin;
    while (ran < steps && (ran < 1 || ms_since(begin) < kBudgetMs)) {
      w->step();
      ++ran;
      if (ran % per_block == 0) {
        w->finish();
        blocks << " " << ms_since(block_start) / per_block;
        block_start = Clock::now();
      }
    }
    w->finish();
    std::cout << "RESULT " << ms_since(begin) / ran << "\n";
    snapshot("timed");
    if (!blocks.str().empty()) std::cout << "BLOCKS" << blocks.str() << "\n";
    if (!options.trace.empty() || !options.report.empty()) {
      constexpr int kTracedSteps = 20;
      trace::start();
      for (int i = 0; i < kTracedSteps; ++i) w->step();
      w->finish();
      trace::stop();
      if (!options.trace.empty()) trace::save(options.trace);
      if (!options.report.empty()) trace::write_report(options.report);
    }
    if (options.log_step) {  // one more step with its placement logged (stderr): the reasons
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

// Runs `command` and returns the rest of its last stdout line that begins with "RESULT ";
// with `paired`, also the rest of its "PAIRED " line (empty when none).
std::string child_result(const std::string& command, std::string* paired = nullptr) {
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return "error: popen";
  std::string result = "error: no result";
  char line[512];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    std::string s(line);
    s.erase(s.find_last_not_of("\n") + 1);
    if (s.rfind("RESULT ", 0) == 0) result = s.substr(7);
    if (paired != nullptr && s.rfind("PAIRED ", 0) == 0) *paired = s.substr(7);
  }
  pclose(pipe);
  return result;
}

// Whether `policy`'s children also run the cost policy (Note [Paired runs]).
bool pairs_with_cost(const std::string& policy) {
  return policy == "always_gpu" || policy == "tf_rules";
}

// Runs one pair in a child process and returns its RESULT text; a paired one's cost / fixed
// ratio goes to `ratio` (0 when it gave none).
std::string run_pair(const char* self, const std::string& workload, const std::string& policy,
                     int steps, double* ratio) {
  std::string command = policy == "always_gpu" ? "TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING=0 " : "";
  command += std::string(self) + " --child --workload=" + workload + " --policy=" + policy +
             " --steps=" + std::to_string(steps) + (pairs_with_cost(policy) ? " --paired" : "");
  std::string paired;
  std::string result = child_result(command, &paired);
  double fixed = 0, cost = 0;
  *ratio =
      std::sscanf(paired.c_str(), "%lf %lf", &fixed, &cost) == 2 && fixed > 0 ? cost / fixed : 0;
  return result;
}

// Returns the median of `v` (of an even count, the lower middle), sorting it; 0 when empty.
double median(std::vector<double>& v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

// The table's process never starts the runtime: on a GPU it would hold a context of its
// own beside each child's. A child says how many GPUs there are.
int run_table(const char* self, int steps, const std::vector<std::string>& workloads,
              const std::vector<std::string>& policies) {
  if (child_result(std::string(self) + " --count_gpus") == "0") {
    std::printf("No GPU: every policy places on the CPU, and GPU workloads are skipped.\n");
  }
  std::printf("%-24s", "ms per step");
  for (const std::string& p : policies) std::printf(" %12s", p.c_str());
  std::printf(" %14s %7s\n", "cost/best fixed", "paired");
  for (const std::string& w : workloads) {
    std::printf("%-24s", w.c_str());
    std::fflush(stdout);
    // Each pair runs in up to kRuns fresh processes, the median reported: from one process
    // to the next the same placement on an H100 varied by up to 1.7x (clocks, the cores the
    // process landed on). The policies take turns, one process each per round, so that a
    // drift of the machine's speed meets them all alike, and each round starts with the
    // next policy, so that the run after all_cpu's (seconds of every core busy and the GPU
    // idle, its clocks down) is not always the same policy's. A pair whose runs have taken
    // kRunsBudget stops repeating; one that fails (or is skipped) in its first run has that
    // as its result, and a failure after a run that passed ends its runs.
    constexpr int kRuns = 5;
    constexpr std::chrono::seconds kRunsBudget{3};
    struct Pair {
      std::vector<double> runs;
      std::vector<double> ratios;  // paired children's cost / this policy
      std::string error;
      bool done = false;
      std::chrono::steady_clock::duration spent{};
    };
    std::vector<Pair> pairs(policies.size());
    for (int run = 0; run < kRuns; ++run) {
      for (size_t turn = 0; turn < policies.size(); ++turn) {
        const size_t i = (turn + run) % policies.size();  // each round starts one later
        Pair& pair = pairs[i];
        if (pair.done) continue;
        const auto start = std::chrono::steady_clock::now();
        double ratio = 0;
        std::string r = run_pair(self, w, policies[i], steps, &ratio);
        pair.spent += std::chrono::steady_clock::now() - start;
        char* end = nullptr;
        double ms = std::strtod(r.c_str(), &end);
        if (end == r.c_str()) {
          if (pair.runs.empty()) pair.error = r;
          pair.done = true;
          continue;
        }
        pair.runs.push_back(ms);
        if (ratio > 0) pair.ratios.push_back(ratio);
        pair.done = pair.spent > kRunsBudget;
      }
    }
    // cost / best fixed, and the same with each paired policy's ratio measured in its own
    // processes (the median of their ratios) instead of from two columns' medians.
    double best_fixed = 0, cost = 0;
    std::vector<double> paired_ratios;  // cost / policy, paired or not, per fixed policy
    std::vector<double> unpaired;       // the fixed policies' medians, for all_cpu
    for (size_t i = 0; i < policies.size(); ++i) {
      Pair& pair = pairs[i];
      if (!pair.error.empty()) {
        std::printf(" %12s", pair.error.substr(0, 12).c_str());
        continue;
      }
      const double ms = median(pair.runs);
      std::printf(" %12.3f", ms);
      if (policies[i] == "cost") {
        cost = ms;
        continue;
      }
      if (best_fixed == 0 || ms < best_fixed) best_fixed = ms;
      if (!pair.ratios.empty()) {
        paired_ratios.push_back(median(pair.ratios));
      } else {
        unpaired.push_back(ms);
      }
    }
    if (cost > 0 && best_fixed > 0) {
      std::printf(" %14.2f", cost / best_fixed);
      for (double ms : unpaired) paired_ratios.push_back(cost / ms);
      std::printf(" %7.2f", *std::max_element(paired_ratios.begin(), paired_ratios.end()));
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
    if (std::strcmp(argv[i], "--count_gpus") == 0) {  // for run_table
      std::cout << "RESULT " << mt::config::list_physical_devices("GPU").size() << "\n";
      return 0;
    }
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--child") == 0) {
      mt::bench::ChildOptions options;
      options.log_step = flag(argc, argv, "log_step", "0") == "1";
      options.trace = flag(argc, argv, "trace", "");
      options.blocks = std::atoi(flag(argc, argv, "blocks", "0").c_str());
      options.history = flag(argc, argv, "history", "");
      options.load_history = flag(argc, argv, "load_history", "");
      options.report = flag(argc, argv, "report", "");
      for (int j = 1; j < argc; ++j) {
        options.paired |= std::strcmp(argv[j], "--paired") == 0;
        options.cost_first |= std::strcmp(argv[j], "--cost_first") == 0;
        options.priority_after_warm_up |= std::strcmp(argv[j], "--priority_after_warm_up") == 0;
      }
      return mt::bench::run_child(flag(argc, argv, "workload", ""), flag(argc, argv, "policy", ""),
                                  steps, options);
    }
  }
  return mt::bench::run_table(
      argv[0], steps,
      mt::bench::chosen(flag(argc, argv, "workloads", ""), mt::bench::workload_names()),
      mt::bench::chosen(flag(argc, argv, "policies", ""), mt::bench::kPolicies));
}
