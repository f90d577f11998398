// The GPU guide's "Using multiple GPUs": two virtual GPUs of 1 GB each on the first card,
// so code for several GPUs can be tried on one. Each is a full logical device with its own
// pool; the other cards, if any, follow as one logical GPU each.
#include <iostream>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main() {
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (say_if_no_gpu(gpus)) return 0;

  // Create 2 virtual GPUs with 1GB memory each
  try {
    mt::config::set_logical_device_configuration(
        gpus[0], {{.memory_limit_mb = 1024}, {.memory_limit_mb = 1024}});
    std::vector<mt::LogicalDevice> logical_gpus = mt::config::list_logical_devices("GPU");
    std::cout << gpus.size() << " Physical GPU, " << logical_gpus.size() << " Logical GPUs\n";
  } catch (const mt::Error& e) {
    // Virtual devices must be set before GPUs have been initialized
    std::cout << e.what() << "\n";
  }

  std::vector<mt::LogicalDevice> logical_gpus = mt::config::list_logical_devices("GPU");
  for (size_t i = 0; i < logical_gpus.size(); ++i) {
    std::cout << logical_gpus[i].name << ": ";
    if (i < 2) {
      std::cout << mt::config::get_memory_info(logical_gpus[i].name).limit / kMiB << " MiB on "
                << gpus[0].name << "\n";
    } else {
      std::cout << "all of " << gpus[i - 1].name << "\n";
    }
  }

  // Too late: list_logical_devices initialised the runtime.
  try {
    mt::config::set_logical_device_configuration(gpus[0], {{.memory_limit_mb = 2048}});
  } catch (const mt::Error& e) {
    std::cout << e.what() << "\n";
  }
  return 0;
}
