// The GPU guide's first example: log where each op runs, multiply two constants and print
// the product. With a GPU every op runs on GPU:0; without one, on CPU:0.
#include <iostream>

#include "runtime/minitensor.h"

int main() {
  std::cout << "Num GPUs Available: " << mt::config::list_physical_devices("GPU").size() << "\n";
  mt::debugging::set_log_device_placement(true);
  mt::debugging::set_log_sink([](std::string_view line) { std::cout << line << "\n"; });

  // Create some tensors
  mt::Tensor a = mt::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  mt::Tensor b = mt::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  mt::Tensor c = mt::matmul(a, b);

  std::cout << c << "\n";
  return 0;
}
