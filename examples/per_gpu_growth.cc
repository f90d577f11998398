// Seed 004 (differing memory growth across GPUs): growth on the first GPU, not on the
// second. A small tensor on each shows the difference: the growing pool reserves only a
// small region, the other its whole limit. TensorFlow wants growth to be the same on every
// GPU; minitensor lets it differ.
#include <iostream>

#include "runtime/minitensor.h"

// Describes what the pool of `device` reserved, in words that hold on any card.
std::string reservation(const std::string& device) {
  mt::MemoryInfo m = mt::config::get_memory_info(device);
  // Pools round their limit down to a multiple of 256 bytes.
  if (m.reserved == m.limit / 256 * 256) return "the pool reserved its whole limit";
  return "the pool reserved only part of its limit";
}

int main() {
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (gpus.empty()) {
    std::cout << "This example needs a GPU; none is visible.\n";
    return 0;
  }
  mt::config::set_memory_growth(gpus[0], true);
  if (gpus.size() > 1) mt::config::set_memory_growth(gpus[1], false);
  for (const mt::PhysicalDevice& gpu : gpus) {
    std::cout << gpu.name
              << " memory growth: " << (mt::config::get_memory_growth(gpu) ? "on" : "off") << "\n";
  }

  std::vector<mt::LogicalDevice> logical = mt::config::list_logical_devices("GPU");
  for (size_t i = 0; i < logical.size() && i < 2; ++i) {
    mt::DeviceScope scope(logical[i].name);
    mt::Tensor t = mt::ones({1024});
    std::cout << logical[i].name << " after a 4 KiB tensor: " << reservation(logical[i].name)
              << "\n";
  }
  return 0;
}
