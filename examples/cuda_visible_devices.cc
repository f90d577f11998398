// Seed 002 (managing GPU RAM): CUDA_VISIBLE_DEVICES decides which cards a program sees and
// in which order; with CUDA_VISIBLE_DEVICES=1,0 the program's GPU:0 is card 1. This
// program makes only its GPU:0 visible and takes 60% of it (per_process_gpu_memory_fraction
// 0.6, with a tensor of half the card), so two copies fit only on different cards.
//
//   cuda_visible_devices [NAME] [--hold]   # --hold: keep the memory until stdin closes
//   cuda_visible_devices --count           # prints the number of GPUs it sees
//   examples/run_reordered_programs.sh     # the default order, the reversed one, and again
#include <iostream>
#include <string>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main(int argc, char** argv) {
  std::string name = argc > 1 ? argv[1] : "program";
  bool hold = argc > 2 && std::string(argv[2]) == "--hold";
  std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
  if (name == "--count") {
    std::cout << gpus.size() << "\n";
    return 0;
  }
  if (say_if_no_gpu(gpus, name)) return 0;
  std::cout << name << ": sees";
  for (const mt::PhysicalDevice& gpu : gpus) std::cout << " " << gpu.name;
  std::cout << std::endl;

  // Use only GPU:0, whichever card CUDA_VISIBLE_DEVICES made it, and 60% of it.
  mt::config::set_visible_devices(gpus[0], "GPU");
  mt::config::set_gpu_options(mt::GPUOptions{.per_process_gpu_memory_fraction = 0.6});
  mt::Tensor held;
  try {
    mt::DeviceScope scope("/GPU:0");
    int64_t limit = mt::config::get_memory_info("GPU:0").limit;  // 60% of the card
    held = mt::zeros({limit / 4 / 6 * 5});                       // float32: 50% of it
    bool whole = reserved_whole_limit("GPU:0");
    std::cout << name << ": GPU:0 holds " << (whole ? "60%" : "less than 60%") << " of its card"
              << std::endl;
  } catch (const mt::Error& e) {
    std::cout << name << ": " << without_shape(e.what()) << std::endl;
    return 1;
  }

  if (hold) hold_until_stdin_closes(name);
  return 0;
}
