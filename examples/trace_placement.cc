// Records a small mixed workload on every logical device (two logical CPUs, and each GPU
// when there is one), then writes trace.json (Perfetto, chrome://tracing) and report.html
// into the folder given as the first argument, or the current one without an argument.
// docs/trace.md explains what they show.
//
//   trace_placement /tmp/out && chromium /tmp/out/report.html
#include <iostream>
#include <string>
#include <vector>

#include "runtime/minitensor.h"

namespace {

// Builds an n x n matrix whose values depend on `seed`.
mt::Tensor matrix(int n, float seed) {
  std::vector<float> values(static_cast<size_t>(n) * n);
  for (size_t i = 0; i < values.size(); ++i) values[i] = seed + static_cast<float>(i % 7) * 0.1f;
  return mt::constant(values, {n, n});
}

// Runs matmuls, elementwise ops and a reduction on `device`; frees some results to leave
// holes in its pool, and returns one result that stays alive.
mt::Tensor workload(const std::string& device, int n) {
  mt::DeviceScope scope(device);
  mt::Tensor x = matrix(n, 1.f);
  std::vector<mt::Tensor> keep;
  for (int i = 0; i < 4; ++i) {
    mt::Tensor y = mt::matmul(x, x);
    keep.push_back(mt::relu(y - x));
    mt::Tensor scratch = mt::exp(x * mt::constant(0.01f));  // freed at once
  }
  keep.erase(keep.begin() + 1);  // a hole between two live tensors
  mt::Tensor ones = mt::ones({8, 8}, mt::DType::kInt32);
  mt::Tensor counts = mt::matmul(ones, ones);  // no GPU kernel for int32 MatMul: on a CPU
  return mt::reduce_sum(mt::add_n({keep[0], keep[1], keep[2]}), {0});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::cerr << "usage: trace_placement [output folder, the current one by default]\n";
    return 2;
  }
  const std::string out = argc == 2 ? argv[1] : ".";
  auto cpu = mt::config::list_physical_devices("CPU")[0];
  mt::config::set_logical_device_configuration(cpu, {{}, {.memory_limit_mb = 64}});
  for (const auto& gpu : mt::config::list_physical_devices("GPU")) {
    mt::config::set_memory_growth(gpu, true);  // regions grow as needed: a readable map
  }
  mt::config::set_soft_device_placement(true);
  {
    mt::trace::Recording recording;
    std::vector<mt::Tensor> sums;
    for (const mt::LogicalDevice& d : mt::config::list_logical_devices()) {
      sums.push_back(workload(d.name, 640));  // 1.6 MB blocks: past the per-thread caches
    }
    mt::Tensor total = mt::add_n(sums);  // copies every device's sum to the best device
    {
      mt::DeviceScope missing("/GPU:7");  // does not exist: soft placement picks a device
      total = mt::abs(total);
    }
    try {
      mt::DeviceScope small("/CPU:1");  // 64 MiB: a 128 MiB tensor does not fit
      mt::zeros({8192, 4096});
    } catch (const mt::Error&) {
      auto snapshot = mt::config::last_oom_snapshot("CPU:1");
      std::cout << "expected OOM on CPU:1: " << snapshot->regions.size() << " regions kept\n";
    }
  }
  mt::trace::save(out + "/trace.json");
  mt::trace::write_report(out + "/report.html");
  std::cout << "wrote " << out << "/trace.json and " << out << "/report.html\n";
  return 0;
}
