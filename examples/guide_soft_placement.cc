// The GPU guide's "Using a single GPU on a multi-GPU system": with soft placement off,
// asking for /device:GPU:2 on a machine without it is an error; with soft placement on (the
// default, as in TensorFlow 2), the same ops run on the best existing device instead.
#include <iostream>

#include "runtime/minitensor.h"

int main() {
  mt::debugging::set_log_device_placement(true);
  mt::debugging::set_log_sink([](std::string_view line) { std::cout << line << "\n"; });

  mt::config::set_soft_device_placement(false);  // the guide's first run has it off
  try {
    // Specify an invalid GPU device
    mt::DeviceScope scope("/device:GPU:2");
    mt::Tensor a = mt::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    mt::Tensor b = mt::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    mt::Tensor c = mt::matmul(a, b);
  } catch (const mt::Error& e) {
    std::cout << e.what() << "\n";
  }

  mt::config::set_soft_device_placement(true);
  {
    mt::DeviceScope scope("/device:GPU:2");
    // Creates some tensors
    mt::Tensor a = mt::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    mt::Tensor b = mt::constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    mt::Tensor c = mt::matmul(a, b);
    std::cout << c << "\n";
  }
  return 0;
}
