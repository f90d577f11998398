// mt.trace: start and stop a recording, and write it as Chrome Trace Event JSON or as the
// HTML report (runtime/trace/trace.h). The writers release the GIL while they build the text.
#include "runtime/trace/trace.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <string>

#include "python/src/bindings.h"

namespace mt::python {

void bind_trace(nb::module_& m) {
  m.def("trace_start", &trace::start, nb::call_guard<nb::gil_scoped_release>());
  m.def("trace_stop", &trace::stop, nb::call_guard<nb::gil_scoped_release>());
  m.def("trace_is_recording", &trace::is_recording);
  m.def("trace_to_json", &trace::to_json, nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "trace_save", [](const std::string& path) { trace::save(path); }, nb::arg("path"),
      nb::call_guard<nb::gil_scoped_release>());
  m.def("trace_report_html", &trace::report_html, nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "trace_write_report", [](const std::string& path) { trace::write_report(path); },
      nb::arg("path"), nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace mt::python
