// The GPU guide's "Manual device placement": a and b are created under /CPU:0 and the
// matmul is left unscoped, so it runs on the best device (GPU:0 when there is one, else
// CPU:0) and its inputs are copied there.
#include <iostream>

#include "runtime/minitensor.h"

int main() {
  mt::debugging::set_log_device_placement(true);
  mt::debugging::set_log_sink([](std::string_view line) { std::cout << line << "\n"; });

  // Place tensors on the CPU
  mt::Tensor a, b;
  {
    mt::DeviceScope on_cpu("/CPU:0");
    a = mt::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    b = mt::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  }

  // Run on the GPU
  mt::Tensor c = mt::matmul(a, b);
  std::cout << c << "\n";

  std::cout << "a is on " << a.device() << "\n";
  std::cout << "b is on " << b.device() << "\n";
  std::cout << "c is on " << c.device() << "\n";
  return 0;
}
