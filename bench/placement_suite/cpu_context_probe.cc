// How long the batch-1 MLP's CPU work takes depending on what ran before it (issue 24,
// docs/placement.md "Batch 1"): the cost policy measures a CPU op between GPU work, the
// all-CPU policy runs it after the previous CPU op. Prints, for the first product (one row
// by 784 x 256) and the whole forward pass on the CPU, the median and 10th percentile of
// each run's host time in µs after:
//   cpu       the same CPU work (back to back, as all-CPU runs it)
//   gpu+wait  the forward pass on the GPU, then a read of its result (each step synchronises)
//   gpu       the forward pass on the GPU, not waited for
//   8MiB      8 MiB of other memory written (the caches cold)
//   sleep     50 µs asleep (the core idle)
//   copied    the weights copied anew from the GPU (a first read of memory a copy just wrote)
//
//   cpu_context_probe [--runs=2000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/placement_suite/workloads.h"
#include "runtime/minitensor.h"

namespace mt::bench {
namespace {

struct Figures {
  double median_us, p10_us;
};

// Times `work` `runs` times, each after `before` (not timed).
Figures time_after(int runs, const std::function<void()>& before,
                   const std::function<void()>& work) {
  std::vector<double> us;
  for (int i = 0; i < runs + 10; ++i) {
    before();
    const int64_t t0 = now_ns();
    work();
    const int64_t t1 = now_ns();
    if (i >= 10) us.push_back((t1 - t0) / 1e3);
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() / 10]};
}

int run(int runs) {
  const bool gpu = !config::list_logical_devices("GPU").empty();
  Tensor x, w1, w2, w3, gx, g1, g2, g3, sink;
  {
    DeviceScope cpu("/CPU:0");
    x = uniform(1, 784, 3);
    w1 = uniform(784, 256, 4);
    w2 = uniform(256, 256, 5);
    w3 = uniform(256, 10, 6);
  }
  {
    DeviceScope dev(gpu ? "/GPU:0" : "/CPU:0");
    gx = uniform(1, 784, 3);
    g1 = uniform(784, 256, 4);
    g2 = uniform(256, 256, 5);
    g3 = uniform(256, 10, 6);
  }
  std::vector<char> other(8 << 20);
  Tensor out, w1_copy = w1;  // the product's weights: w1, or a copy of g1 just made
  auto product = [&] {
    DeviceScope cpu("/CPU:0");
    out = matmul(x, w1_copy);
  };
  auto forward = [&] {
    DeviceScope cpu("/CPU:0");
    out = matmul(relu(matmul(relu(matmul(x, w1_copy)), w2)), w3);
  };
  auto gpu_step = [&] {
    DeviceScope dev(gpu ? "/GPU:0" : "/CPU:0");
    sink = matmul(relu(matmul(relu(matmul(gx, g1)), g2)), g3);
  };
  gpu_step();
  (void)sink.to_vector<float>();
  const std::vector<std::pair<std::string, std::function<void()>>> befores = {
      {"cpu", [] {}},
      {"gpu+wait",
       [&] {
         gpu_step();
         (void)sink.to_vector<float>();
       }},
      {"gpu", gpu_step},
      {"8MiB", [&] { std::memset(other.data(), static_cast<int>(other[7]) + 1, other.size()); }},
      {"sleep", [] { std::this_thread::sleep_for(std::chrono::microseconds(50)); }},
      {"copied",
       [&] {
         DeviceScope cpu("/CPU:0");
         w1_copy = identity(g1);
       }},
  };
  std::printf("%-10s %22s %22s\n", "after", "product median/p10 us", "forward median/p10 us");
  for (const auto& [name, before] : befores) {
    const Figures p = time_after(runs, before, product);
    const Figures f = time_after(runs, before, forward);
    std::printf("%-10s %12.2f / %7.2f %12.2f / %7.2f\n", name.c_str(), p.median_us, p.p10_us,
                f.median_us, f.p10_us);
    (void)sink.to_vector<float>();
    w1_copy = w1;
  }
  return 0;
}

}  // namespace
}  // namespace mt::bench

int main(int argc, char** argv) {
  int runs = 2000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--runs=", 7) == 0) runs = std::atoi(argv[i] + 7);
  }
  return mt::bench::run(std::max(runs, 10));
}
