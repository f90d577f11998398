// mt.debugging's placement reasons (runtime/debugging.h): set_log_placement_reasons and
// explain_placement, whose answer prints as the text of docs/placement.md:
//
//   >>> mt.debugging.explain_placement("AddV2", [a, b])
//   op: "AddV2"
//   device: "/job:localhost/replica:0/task:0/device:CPU:0"
//   reason: "default"
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

// Appends `name: "value"` (text-proto form) to `out` when `value` is not empty.
void add_field(std::string& out, const char* name, const std::string& value) {
  if (value.empty()) return;
  absl::StrAppend(&out, out.empty() ? "" : "\n", name, ": \"", value, "\"");
}

std::string explanation_text(const debugging::PlacementExplanation& e) {
  std::string out;
  add_field(out, "op", e.op);
  add_field(out, "device", e.device);
  add_field(out, "requested", e.requested);
  add_field(out, "reason", e.reason);
  add_field(out, "detail", e.detail);
  for (const debugging::InputCopy& c : e.copies) {
    absl::StrAppend(&out, "\ncopies { input: ", c.input, " from: \"", c.from, "\" bytes: ", c.bytes,
                    " }");
  }
  return out;
}

}  // namespace

void bind_debugging(nb::module_& m) {
  using debugging::InputCopy;
  using debugging::PlacementExplanation;
  nb::class_<InputCopy>(m, "InputCopy")
      .def_ro("input", &InputCopy::input)
      .def_ro("source", &InputCopy::from, "The device the input is copied from (\"GPU:0\").")
      .def_ro("bytes", &InputCopy::bytes)
      .def("__repr__", [](const InputCopy& c) {
        return absl::StrCat("InputCopy(input=", c.input, ", source='", c.from, "', bytes=", c.bytes,
                            ")");
      });
  nb::class_<PlacementExplanation>(m, "PlacementExplanation")
      .def_ro("op", &PlacementExplanation::op)
      .def_ro("device", &PlacementExplanation::device)
      .def_ro("requested", &PlacementExplanation::requested)
      .def_ro("reason", &PlacementExplanation::reason)
      .def_ro("detail", &PlacementExplanation::detail)
      .def_ro("copies", &PlacementExplanation::copies)
      .def("__repr__", &explanation_text);
  m.def(
      "explain_placement",
      [](std::string op, std::vector<Tensor> inputs, DType dtype) {
        nb::gil_scoped_release release;
        return debugging::explain_placement(op, inputs, dtype);
      },
      nb::arg("op"), nb::arg("inputs"), nb::arg("dtype"));
  m.def("set_log_placement_reasons", &debugging::set_log_placement_reasons, nb::arg("enabled"));
  m.def("get_log_placement_reasons", &debugging::get_log_placement_reasons);
}

}  // namespace mt::python
