#pragma once
// The placement suite's workloads (issue 24): eager programs whose best placement differs,
// each a step the driver times under every policy (placement_suite.cc).
//
//   std::unique_ptr<Workload> w = make_workload("mlp_batch1", /*gpu=*/true);
//   for (int i = 0; i < n; ++i) w->step();
//   w->finish();  // waits for the device

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/eager/tensor.h"

namespace mt::bench {

// What the workloads and the probes beside them (cpu_context_probe.cc, scalar_step_probe.cc)
// share: a rows x cols tensor of weights uniform in [-0.05, 0.05) drawn from `seed`, placed
// as the calling thread's scope and policy say; a wait for every op before a read of `t`;
// and the host clock.
Tensor uniform(int64_t rows, int64_t cols, int64_t seed);
void wait_for(const Tensor& t);
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Workload {
 public:
  virtual ~Workload() = default;
  // Runs one step of the program.
  virtual void step() = 0;
  // Waits until the work of every step has finished (reads a result on the host).
  virtual void finish() = 0;
};

// The workloads' names, in the table's order.
const std::vector<std::string>& workload_names();

// Returns whether `name` needs a GPU (it is skipped on a machine without one).
bool needs_gpu(const std::string& name);

// Creates workload `name`, sized for a GPU when `gpu` is set, smaller otherwise.
std::unique_ptr<Workload> make_workload(const std::string& name, bool gpu);

}  // namespace mt::bench
