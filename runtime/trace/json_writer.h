#pragma once
// Small helpers for writing JSON by hand (internal): the trace, snapshots and the report
// build their documents with absl::StrAppend and these.

#include <string>
#include <string_view>

namespace mt::internal {

// Appends `text` as a JSON string literal, quoted and escaped; "</" is written "<\/" so
// that the JSON can sit inside an HTML <script> element.
void append_json_string(std::string* out, std::string_view text);

// Appends `value` as a JSON number (0 for values JSON cannot hold, NaN and infinities).
void append_json_number(std::string* out, double value);

}  // namespace mt::internal
