// The GPU guide's "Limiting GPU memory growth", first part: set_visible_devices restricts
// the runtime to the first GPU. Once the runtime has initialised, the visible devices can
// no longer change, and the error says so in TensorFlow's words.
#include <iostream>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main() {
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (say_if_no_gpu(gpus)) return 0;

  // Restrict minitensor to only use the first GPU
  try {
    mt::config::set_visible_devices(gpus[0], "GPU");
    std::vector<mt::LogicalDevice> logical_gpus = mt::config::list_logical_devices("GPU");
    std::cout << gpus.size() << " Physical GPUs, " << logical_gpus.size() << " Logical GPU\n";
  } catch (const mt::Error& e) {
    // Visible devices must be set before GPUs have been initialized
    std::cout << e.what() << "\n";
  }
  for (const mt::PhysicalDevice& gpu : mt::config::get_visible_devices("GPU")) {
    std::cout << "Visible: " << gpu.name << "\n";
  }

  // Ops run on the one visible GPU; a second GPU, if the machine has one, is unknown now.
  // (Soft placement, on by default as in TensorFlow, would run the op on GPU:0 instead.)
  mt::config::set_soft_device_placement(false);
  mt::Tensor a = mt::constant({{1.f, 2.f}, {3.f, 4.f}});
  std::cout << "MatMul ran on " << mt::matmul(a, a).device() << "\n";
  try {
    mt::DeviceScope second_gpu("/GPU:1");
    mt::matmul(a, a);
  } catch (const mt::Error& e) {
    std::cout << e.what() << "\n";
  }

  // Too late: the runtime initialised with the first op.
  try {
    mt::config::set_visible_devices(std::vector<mt::PhysicalDevice>{}, "GPU");
  } catch (const mt::Error& e) {
    std::cout << e.what() << "\n";
  }
  return 0;
}
