// Checkpoint files for minitensor.train.Checkpoint (runtime/train/checkpoint_files.h): the
// package flattens its object graph to named tensors and calls these; each writes or reads
// a checkpoint whole, with the GIL released.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "python/src/bindings.h"
#include "runtime/eager/error.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/checkpoint_state.h"
#include "runtime/train/optimizers.h"

namespace mt::python {
namespace {

using Release = nb::call_guard<nb::gil_scoped_release>;
using Named = std::vector<std::pair<std::string, Tensor>>;

void write(const std::string& prefix, const Named& tensors) {
  std::vector<internal::NamedTensor> named;
  for (const auto& [name, value] : tensors) named.push_back({name, value});
  internal::throw_if_error(
      internal::write_checkpoint(internal::posix_file_system(), prefix, named));
}

// `placement`: the variables that will take the tensors, by name (an optimizer's slots by
// "<optimizer>/slots/<variable>"), whose devices the tensors are made on.
Named read(const std::string& prefix,
           const std::vector<std::pair<std::string, Variable>>& placement) {
  internal::RestorePlacement where;
  for (const auto& [name, variable] : placement) where.add(name, variable);
  auto tensors = internal::value_or_throw(
      internal::read_checkpoint(internal::posix_file_system(), prefix, &where));
  return Named(tensors.begin(), tensors.end());
}

}  // namespace

void bind_checkpoint(nb::module_& m) {
  m.def("_write_checkpoint", &write, Release(), nb::arg("prefix"), nb::arg("tensors"));
  m.def("_read_checkpoint", &read, Release(), nb::arg("prefix"),
        nb::arg("placement") = std::vector<std::pair<std::string, Variable>>());
  m.def("_assign_restored", &internal::assign_restored, Release(), nb::arg("variable"),
        nb::arg("value"));
  m.def(
      "_remove_checkpoint",
      [](const std::string& prefix) {
        internal::throw_if_error(
            internal::remove_checkpoint(internal::posix_file_system(), prefix));
      },
      Release());
  m.def(
      "_write_file_atomically",
      [](const std::string& path, const std::string& data) {
        internal::throw_if_error(
            internal::write_file_atomically(internal::posix_file_system(), path, data));
      },
      Release());
  m.def("_optimizer_slots", &optimizers::Optimizer::slot_variables, nb::arg("optimizer"),
        nb::arg("variable"));
  m.def("_optimizer_make_slot", &optimizers::Optimizer::make_slot, nb::arg("optimizer"),
        nb::arg("variable"), nb::arg("index"), nb::rv_policy::copy);
  m.def("_optimizer_set_iterations", &optimizers::Optimizer::set_iterations);
}

}  // namespace mt::python
