// The GPU guide's other way to turn memory growth on: TF_FORCE_GPU_ALLOW_GROWTH=true, with
// no set_memory_growth call. minitensor accepts exactly "true" or "false"; any other value
// is reported on stderr and ignored.
//
//   TF_FORCE_GPU_ALLOW_GROWTH=true build/default/examples/guide_allow_growth_env
#include <cstdlib>
#include <iostream>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main() {
  const char* env = std::getenv("TF_FORCE_GPU_ALLOW_GROWTH");
  std::cout << "TF_FORCE_GPU_ALLOW_GROWTH" << (env ? "=" : " is unset") << (env ? env : "") << "\n";
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (say_if_no_gpu(gpus)) return 0;

  print_memory_growth(gpus);
  mt::DeviceScope on_gpu("/GPU:0");
  mt::Tensor t = mt::ones({1024});
  std::cout << "GPU:0 after a 4 KiB tensor: " << reservation("GPU:0") << "\n";
  return 0;
}
