// Seed 004 (differing memory growth across GPUs): growth on the first GPU, not on the
// second. A small tensor on each shows the difference: the growing pool reserves only a
// small region, the other its whole limit. TensorFlow wants growth to be the same on every
// GPU; minitensor lets it differ.
#include <iostream>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main() {
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (say_if_no_gpu(gpus)) return 0;
  mt::config::set_memory_growth(gpus[0], true);
  if (gpus.size() > 1) mt::config::set_memory_growth(gpus[1], false);
  print_memory_growth(gpus);

  std::vector<mt::LogicalDevice> logical = mt::config::list_logical_devices("GPU");
  for (size_t i = 0; i < logical.size() && i < 2; ++i) {
    mt::DeviceScope scope(logical[i].name);
    mt::Tensor t = mt::ones({1024});
    std::cout << logical[i].name << " after a 4 KiB tensor: " << reservation(logical[i].name)
              << "\n";
  }
  return 0;
}
