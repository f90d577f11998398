#pragma once
// mt::debugging: placement logging, as TensorFlow's tf.debugging.set_log_device_placement.
//
//   mt::debugging::set_log_device_placement(true);
//   mt::matmul(a, b);
//   // stderr: Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:0
//
// Each line is written whole, so lines from several threads never interleave.

#include <functional>
#include <string_view>

namespace mt::debugging {

// Logs every op's device (including _EagerConst for constants) when `enable` is true.
void set_log_device_placement(bool enable);
bool get_log_device_placement();

// Sends each log line (without its newline) to `sink` instead of stderr; an empty function
// restores stderr. The sink may be called from any thread, one line at a time.
void set_log_sink(std::function<void(std::string_view line)> sink);

}  // namespace mt::debugging
