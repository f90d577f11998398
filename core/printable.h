#pragma once
// printable: user text made safe to quote in an error message. Bytes outside printable
// ASCII become \xNN and a backslash becomes \\, so a message never holds a NUL (which would
// end mt::Error::what() early) or a control character (which could forge a log line).
//
//   printable("GPU\0:0")  // "GPU\x00:0"
//   printable("/GPU:0")   // "/GPU:0", unchanged

#include <string>
#include <string_view>

namespace mt::internal {

std::string printable(std::string_view text);

}  // namespace mt::internal
