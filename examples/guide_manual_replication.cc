// The GPU guide's "Manual placement" across GPUs: the same matmul on every logical GPU,
// then add_n of the results on /CPU:0. With one card, four virtual GPUs of 1 GB stand in
// for the guide's four GPUs and reproduce its output; with two cards, each is one GPU.
#include <iostream>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main() {
  std::vector<mt::PhysicalDevice> physical = mt::config::list_physical_devices("GPU");
  if (say_if_no_gpu(physical)) return 0;
  if (physical.size() == 1) {
    mt::config::set_logical_device_configuration(physical[0], {{.memory_limit_mb = 1024},
                                                               {.memory_limit_mb = 1024},
                                                               {.memory_limit_mb = 1024},
                                                               {.memory_limit_mb = 1024}});
  }

  mt::debugging::set_log_device_placement(true);
  mt::debugging::set_log_sink([](std::string_view line) { std::cout << line << "\n"; });

  std::vector<mt::LogicalDevice> gpus = mt::config::list_logical_devices("GPU");
  // Replicate your computation on multiple GPUs
  std::vector<mt::Tensor> c;
  for (const mt::LogicalDevice& gpu : gpus) {
    mt::DeviceScope scope(gpu.name);
    mt::Tensor a = mt::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    mt::Tensor b = mt::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    c.push_back(mt::matmul(a, b));
  }

  mt::Tensor matmul_sum;
  {
    mt::DeviceScope scope("/CPU:0");
    matmul_sum = mt::add_n(c);
  }
  std::cout << matmul_sum << "\n";
  return 0;
}
