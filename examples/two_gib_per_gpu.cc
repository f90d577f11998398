// Seeds 000/001 (managing GPU RAM): every GPU limited to 2 GiB, so several programs can
// share all the cards ("each program gets all four GPUs, but with only 2 GiB of RAM on
// each GPU"). Each pool reserves its 2 GiB at the first allocation and never more: a 1 GiB
// tensor fits on every GPU, a 3 GiB one on none.
#include <iostream>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main() {
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (say_if_no_gpu(gpus)) return 0;
  for (const mt::PhysicalDevice& gpu : gpus) {
    mt::config::set_logical_device_configuration(gpu, {{.memory_limit_mb = 2048}});
  }

  std::vector<mt::Tensor> held;
  for (const mt::LogicalDevice& gpu : mt::config::list_logical_devices("GPU")) {
    mt::DeviceScope scope(gpu.name);
    held.push_back(mt::zeros({1024, kMiB / 4}));  // 1 GiB of float32
    mt::MemoryInfo info = mt::config::get_memory_info(gpu.name);
    std::cout << gpu.name << ": limit " << info.limit / kMiB << " MiB, reserved "
              << info.reserved / kMiB << " MiB, in use " << info.current / kMiB << " MiB\n";
    try {
      mt::Tensor big = mt::zeros({3072, kMiB / 4});  // 3 GiB
    } catch (const mt::Error& e) {
      std::cout << "  " << first_line(e.what()) << "\n";
    }
  }
  return 0;
}
