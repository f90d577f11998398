#pragma once
// mt::debugging: placement logging, as TensorFlow's tf.debugging.set_log_device_placement.
//
//   mt::debugging::set_log_device_placement(true);
//   mt::matmul(a, b);
//   // stderr: Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:0
//
// Each line is written whole, so lines from several threads never interleave. With
// set_log_placement_reasons(true) each line also says why, and which inputs were copied:
//   Executing op Cast in device /job:localhost/replica:0/task:0/device:CPU:0 (no GPU kernel
//   for Cast on float32; asked for /device:GPU:0; input 0 copied from GPU:0, 64 KiB)
// explain_placement returns the same as data, without running the op.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "runtime/eager/tensor.h"

namespace mt::debugging {

// Logs every op's device (including _EagerConst for constants) when `enable` is true.
void set_log_device_placement(bool enable);
bool get_log_device_placement();

// Sends each log line (without its newline) to `sink` instead of stderr; an empty function
// restores stderr. The sink may be called from any thread, one line at a time, and holds no
// lock of the runtime's: it may run ops, read get_memory_info or call set_log_sink. Ops the
// sink runs on its own thread are not logged. A sink that throws does not fail the op: its
// line goes to stderr with what it threw, "... [the log sink threw: <what>]". A sink must
// not wait for another thread that logs (lines are delivered one at a time).
void set_log_sink(std::function<void(std::string_view line)> sink);

// Appends the reason of each placement to its log line (off by default; the lines then keep
// TensorFlow's exact form). Takes effect only while set_log_device_placement is on.
void set_log_placement_reasons(bool enable);
bool get_log_placement_reasons();

// One input that lives on another device than the op's and is copied there first.
struct InputCopy {
  int input = 0;
  std::string from;  // short name: "GPU:0"
  int64_t bytes = 0;
};

// Where an op runs and why.
struct PlacementExplanation {
  std::string op;         // "Cast"
  std::string device;     // full name of the device that runs it
  std::string requested;  // the thread's merged device scope, "/device:GPU:0"; "" for none
  std::string reason;     // "default", "scope", "no_kernel_fallback", "soft_fallback",
                          // "small_op_on_host", "resource_device" or "cost"
  std::string detail;     // "no GPU kernel for Cast on float32; asked for /device:GPU:0";
                          // for "cost": "cost policy: CPU:0 0.3 us vs GPU:0 4.1 us + copy
                          // 9.8 us" (mt::config::set_placement_policy)
  std::vector<InputCopy> copies;
};

// Returns where `op` (TensorFlow's name: "MatMul", "_EagerConst") would run on `inputs`
// under the calling thread's device scopes, and why, without running it. The dtype is the
// first input's, or `dtype` for an op with no input. Throws mt::Error: InvalidArgument for
// an unknown op, an empty input or a dtype no device has a kernel for; NotFound for a scope
// that names no device while soft placement is off.
PlacementExplanation explain_placement(std::string_view op, const std::vector<Tensor>& inputs,
                                       DType dtype = DType::kFloat32);

}  // namespace mt::debugging
