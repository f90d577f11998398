// The GPU guide's other way to turn memory growth on: TF_FORCE_GPU_ALLOW_GROWTH=true, with
// no set_memory_growth call. minitensor accepts exactly "true" or "false"; any other value
// is reported on stderr and ignored.
//
//   TF_FORCE_GPU_ALLOW_GROWTH=true build/default/examples/guide_allow_growth_env
#include <cstdlib>
#include <iostream>

#include "runtime/minitensor.h"

// Describes what the pool of `device` reserved, in words that hold on any card.
std::string reservation(const char* device) {
  mt::MemoryInfo m = mt::config::get_memory_info(device);
  // Pools round their limit down to a multiple of 256 bytes.
  if (m.reserved == m.limit / 256 * 256) return "the pool reserved its whole limit";
  return "the pool reserved only part of its limit";
}

int main() {
  const char* env = std::getenv("TF_FORCE_GPU_ALLOW_GROWTH");
  std::cout << "TF_FORCE_GPU_ALLOW_GROWTH" << (env ? "=" + std::string(env) : " is unset") << "\n";
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (gpus.empty()) {
    std::cout << "This example needs a GPU; none is visible.\n";
    return 0;
  }

  for (const mt::PhysicalDevice& gpu : gpus) {
    std::cout << gpu.name
              << " memory growth: " << (mt::config::get_memory_growth(gpu) ? "on" : "off") << "\n";
  }
  mt::DeviceScope on_gpu("/GPU:0");
  mt::Tensor t = mt::ones({1024});
  std::cout << "GPU:0 after a 4 KiB tensor: " << reservation("GPU:0") << "\n";
  return 0;
}
