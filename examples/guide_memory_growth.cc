// The GPU guide's "Limiting GPU memory growth", second part: set_memory_growth makes each
// GPU's pool start small and grow as needed instead of reserving its whole limit at the
// first allocation. TF_FORCE_GPU_ALLOW_GROWTH, when "true" or "false", overrides it.
#include <cstdlib>
#include <iostream>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main() {
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (say_if_no_gpu(gpus)) return 0;
  const char* env = std::getenv("TF_FORCE_GPU_ALLOW_GROWTH");
  std::cout << "TF_FORCE_GPU_ALLOW_GROWTH" << (env ? "=" : " is unset") << (env ? env : "") << "\n";

  try {
    // TensorFlow needs memory growth to be the same across GPUs; minitensor does not.
    for (const mt::PhysicalDevice& gpu : gpus) mt::config::set_memory_growth(gpu, true);
    std::vector<mt::LogicalDevice> logical_gpus = mt::config::list_logical_devices("GPU");
    std::cout << gpus.size() << " Physical GPUs, " << logical_gpus.size() << " Logical GPUs\n";
  } catch (const mt::Error& e) {
    // Memory growth must be set before GPUs have been initialized
    std::cout << e.what() << "\n";
  }
  print_memory_growth(gpus);

  {
    mt::DeviceScope on_gpu("/GPU:0");
    mt::Tensor t = mt::ones({1024});
    std::cout << "GPU:0 after a 4 KiB tensor: " << reservation("GPU:0") << "\n";
  }

  // Too late: the runtime is initialised.
  try {
    mt::config::set_memory_growth(gpus[0], false);
  } catch (const mt::Error& e) {
    std::cout << e.what() << "\n";
  }
  return 0;
}
