#include "runtime/trace/json_writer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mt::internal {

void append_json_string(std::string* out, std::string_view text) {
  out->push_back('"');
  char prev = 0;
  for (char c : text) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '/':
        out->append(prev == '<' ? "\\/" : "/");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out->push_back(c);
        }
    }
    prev = c;
  }
  out->push_back('"');
}

void append_json_number(std::string* out, double value) {
  if (!std::isfinite(value)) value = 0;
  absl::StrAppendFormat(out, "%.15g", value);
}

}  // namespace mt::internal
