#pragma once
// Writes one placement log line (internal; mt::debugging configures it).

#include <string>

#include "kernels/op_id.h"

namespace mt::internal {

// Writes "Executing op <op> in device <device>" to the sink, or to stderr, as one line.
void log_placement(OpId op, const std::string& device);

}  // namespace mt::internal
