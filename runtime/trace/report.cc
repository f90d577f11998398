// mt::trace::report_html: the report page with the last recording's data inline.

#include "absl/strings/str_cat.h"
#include "runtime/trace/report_page.h"
#include "runtime/trace/trace.h"
#include "runtime/trace/trace_state.h"

namespace mt::trace {

std::string report_html() {
  internal::TraceState& s = internal::trace_state();
  // trace_json escapes "</" in strings, so the data cannot close its <script> element.
  return absl::StrCat(internal::kReportHead, "{\"trace\":", internal::trace_json(s),
                      ",\"snapshots\":", internal::peak_snapshots_json(s), "}",
                      internal::kReportTail);
}

void write_report(std::string_view path) { internal::write_file(path, report_html()); }

}  // namespace mt::trace
