// Seed 004 (differing memory limits across GPUs): 1 GB on GPU 0, 4 GB on GPU 1 and 2 GB on
// GPU 2, configuring only as many GPUs as the machine has. A 1536 MiB tensor then fits
// where the limit allows it and fails with TensorFlow's OOM error where it does not.
#include <iostream>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main() {
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (say_if_no_gpu(gpus)) return 0;
  try {
    const int64_t limits_mb[] = {1024, 4096, 2048};  // GPU 0, 1, 2
    for (size_t i = 0; i < gpus.size() && i < 3; ++i) {
      mt::config::set_logical_device_configuration(gpus[i], {{.memory_limit_mb = limits_mb[i]}});
    }
    std::cout << "Memory limits configured for each GPU.\n";
  } catch (const mt::Error& e) {
    std::cout << "Error setting logical device configuration: " << e.what() << "\n";
  }

  for (const mt::LogicalDevice& gpu : mt::config::list_logical_devices("GPU")) {
    std::cout << gpu.name << ": limit " << mt::config::get_memory_info(gpu.name).limit / kMiB
              << " MiB; a 1536 MiB tensor ";
    try {
      mt::DeviceScope scope(gpu.name);
      mt::Tensor t = mt::zeros({1536, kMiB / 4});
      std::cout << "fits\n";
    } catch (const mt::Error& e) {
      std::cout << "does not fit:\n  " << first_line(e.what()) << "\n";
    }
  }
  return 0;
}
