// Seed 002 (managing GPU RAM): per_process_gpu_memory_fraction = 0.4 caps each GPU's pool
// at 40% of the card, so two such programs share the cards but three do not (3 x 0.4 > 1).
// Each pool reserves its whole cap at the first allocation, here a tensor of 30% of the
// card; the program that finds too little left fails cleanly with TensorFlow's OOM error.
//
//   memory_fraction [NAME] [--hold]   # --hold: keep the memory until stdin closes
//   examples/run_three_processes.sh   # three at once on the same cards
#include <iostream>
#include <string>

#include "examples/example_support.h"
#include "runtime/minitensor.h"

int main(int argc, char** argv) {
  std::string name = argc > 1 ? argv[1] : "process";
  bool hold = argc > 2 && std::string(argv[2]) == "--hold";
  if (say_if_no_gpu(mt::config::list_physical_devices("GPU"), name)) return 0;

  mt::config::set_gpu_options(mt::GPUOptions{.per_process_gpu_memory_fraction = 0.4});
  std::vector<mt::Tensor> held;
  try {
    for (const mt::LogicalDevice& gpu : mt::config::list_logical_devices("GPU")) {
      mt::DeviceScope scope(gpu.name);
      int64_t limit = mt::config::get_memory_info(gpu.name).limit;  // 40% of the card
      held.push_back(mt::zeros({limit / 4 / 4 * 3}));               // float32: 30% of it
      bool whole = reserved_whole_limit(gpu.name);
      std::cout << name << ": " << gpu.name << " holds "
                << (whole ? "40% of its card" : "less than 40% of its card") << std::endl;
    }
  } catch (const mt::Error& e) {
    std::cout << name << ": " << without_shape(e.what()) << std::endl;
    return 1;
  }

  if (hold) hold_until_stdin_closes(name);
  return 0;
}
