#pragma once
// Its code: runtime/debugging.cc.
// Writes one placement log line (internal; mt::debugging configures it).

#include <string>

#include "kernels/op_id.h"

namespace mt::internal {

// Writes "Executing op <op> in device <device>" to the sink, or to stderr, as one line.
void log_placement(OpId op, const std::string& device);

// Writes `line` (no newline) to the log sink, or to stderr, as one line: the runtime's
// other log lines ("INFO:minitensor:Using MirroredStrategy with devices ...").
void log_line(std::string line);

}  // namespace mt::internal
