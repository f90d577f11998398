// The GPU guide's "Limiting GPU memory growth", third part: a logical device with a hard
// 1 GB limit on the first GPU. Its pool never holds more: 768 MiB fit, 512 MiB more do
// not, and the failure is TensorFlow's OOM error.
#include <iostream>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main() {
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (say_if_no_gpu(gpus)) return 0;

  // Restrict minitensor to only allocate 1GB of memory on the first GPU
  try {
    mt::config::set_logical_device_configuration(gpus[0], {{.memory_limit_mb = 1024}});
    std::vector<mt::LogicalDevice> logical_gpus = mt::config::list_logical_devices("GPU");
    std::cout << gpus.size() << " Physical GPUs, " << logical_gpus.size() << " Logical GPUs\n";
  } catch (const mt::Error& e) {
    // Virtual devices must be set before GPUs have been initialized
    std::cout << e.what() << "\n";
  }

  mt::DeviceScope on_gpu("/GPU:0");
  mt::Tensor held = mt::zeros({768, kMiB / 4});  // 768 MiB of float32
  mt::MemoryInfo info = mt::config::get_memory_info("GPU:0");
  std::cout << "GPU:0 limit: " << info.limit / kMiB << " MiB, reserved: " << info.reserved / kMiB
            << " MiB, in use: " << info.current / kMiB << " MiB\n";
  try {
    mt::Tensor more = mt::zeros({512, kMiB / 4});
  } catch (const mt::Error& e) {
    std::cout << first_line(e.what()) << "\n";
  }
  info = mt::config::get_memory_info("GPU:0");
  std::cout << "GPU:0 after the failure: reserved: " << info.reserved / kMiB
            << " MiB, in use: " << info.current / kMiB << " MiB\n";

  // Too late: the runtime is initialised.
  try {
    mt::config::set_logical_device_configuration(gpus[0], {{.memory_limit_mb = 2048}});
  } catch (const mt::Error& e) {
    std::cout << e.what() << "\n";
  }
  return 0;
}
