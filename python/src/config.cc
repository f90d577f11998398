// mt.config and mt.debugging. Configuration after initialisation fails with mt::Error
// (FailedPrecondition); the Python layer turns that into RuntimeError, as TensorFlow.
#include <nanobind/operators.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

template <typename Device>
std::string device_repr(const char* cls, const Device& d) {
  return absl::StrCat(cls, "(name='", d.name, "', device_type='", d.device_type, "')");
}

nb::dict memory_info(std::string_view device) {
  return memory_info_dict(config::get_memory_info(device));
}

void bind_devices(nb::module_& m) {
  nb::class_<PhysicalDevice>(m, "PhysicalDevice")
      .def(nb::init<std::string, std::string>(), nb::arg("name"), nb::arg("device_type"))
      .def_ro("name", &PhysicalDevice::name)
      .def_ro("device_type", &PhysicalDevice::device_type)
      .def(nb::self == nb::self)
      .def("__hash__", [](const PhysicalDevice& d) { return nb::hash(nb::str(d.name.c_str())); })
      .def("__repr__", [](const PhysicalDevice& d) { return device_repr("PhysicalDevice", d); });
  nb::class_<LogicalDevice>(m, "LogicalDevice")
      .def(nb::init<std::string, std::string>(), nb::arg("name"), nb::arg("device_type"))
      .def_ro("name", &LogicalDevice::name)
      .def_ro("device_type", &LogicalDevice::device_type)
      .def(nb::self == nb::self)
      .def("__repr__", [](const LogicalDevice& d) { return device_repr("LogicalDevice", d); });
  nb::class_<LogicalDeviceConfiguration>(m, "LogicalDeviceConfiguration")
      .def(nb::init<std::optional<int64_t>>(), nb::arg("memory_limit") = nb::none())
      .def_rw("memory_limit", &LogicalDeviceConfiguration::memory_limit_mb)
      .def(nb::self == nb::self)
      .def("__repr__", [](const LogicalDeviceConfiguration& c) {
        std::string limit = c.memory_limit_mb ? std::to_string(*c.memory_limit_mb) : "None";
        return "LogicalDeviceConfiguration(memory_limit=" + limit + ")";
      });
}

void bind_configuration(nb::module_& m) {
  m.def("list_physical_devices", &config::list_physical_devices, nb::arg("device_type") = "");
  m.def("list_logical_devices", &config::list_logical_devices, nb::arg("device_type") = "");
  m.def("set_visible_devices",
        nb::overload_cast<const std::vector<PhysicalDevice>&, std::string_view>(
            &config::set_visible_devices),
        nb::arg("devices"), nb::arg("device_type") = "");
  m.def("get_visible_devices", &config::get_visible_devices, nb::arg("device_type") = "");
  m.def("set_logical_device_configuration", &config::set_logical_device_configuration,
        nb::arg("device"), nb::arg("logical_devices"));
  m.def("get_logical_device_configuration", &config::get_logical_device_configuration,
        nb::arg("device"));
  m.def("set_memory_growth", &config::set_memory_growth, nb::arg("device"), nb::arg("enable"));
  m.def("get_memory_growth", &config::get_memory_growth, nb::arg("device"));
  m.def(
      "set_per_process_gpu_memory_fraction",
      [](std::optional<double> fraction) {
        config::set_gpu_options(GPUOptions{.per_process_gpu_memory_fraction = fraction});
      },
      nb::arg("fraction"));
  m.def("set_soft_device_placement", &config::set_soft_device_placement, nb::arg("enabled"));
  m.def("get_soft_device_placement", &config::get_soft_device_placement);
  m.def("enable_tensor_float_32_execution", &config::enable_tensor_float_32_execution,
        nb::arg("enabled"));
  m.def("tensor_float_32_execution_enabled", &config::tensor_float_32_execution_enabled);
  m.def("get_memory_info", &memory_info, nb::arg("device"));
  m.def("reset_memory_stats", &config::reset_memory_stats, nb::arg("device"));
  m.def("release_unused_memory", &config::release_unused_memory, nb::arg("device"),
        nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "set_placement_policy",
      [](bool cost) {
        config::set_placement_policy(cost ? config::PlacementPolicy::kCost
                                          : config::PlacementPolicy::kPriority);
      },
      nb::arg("cost"));
  m.def("get_placement_policy_is_cost",
        [] { return config::get_placement_policy() == config::PlacementPolicy::kCost; });
  m.def("save_placement_history", &config::save_placement_history, nb::arg("path"),
        nb::call_guard<nb::gil_scoped_release>());
  m.def("load_placement_history", &config::load_placement_history, nb::arg("path"),
        nb::call_guard<nb::gil_scoped_release>());
  m.def("get_bus_calibration_path", &config::get_bus_calibration_path);
}

// Sends placement log lines to `sink` (a Python callable taking a str), or to stderr when
// `sink` is None. Ops run without the GIL, so the sink takes it for each line.
void set_log_sink(nb::object sink) {
  if (sink.is_none()) {
    debugging::set_log_sink(nullptr);
    return;
  }
  auto held = std::make_shared<nb::object>(std::move(sink));
  debugging::set_log_sink([held](std::string_view line) {
    nb::gil_scoped_acquire acquire;
    (*held)(nb::str(line.data(), line.size()));
  });
}

}  // namespace

nb::dict memory_info_dict(const MemoryInfo& info) {
  nb::dict d;
  d["current"] = info.current;
  d["peak"] = info.peak;
  d["reserved"] = info.reserved;
  d["limit"] = info.limit;
  d["num_allocs"] = info.num_allocs;
  d["largest_free_block"] = info.largest_free_block;
  d["fragmentation"] = info.fragmentation;
  return d;
}

void bind_config(nb::module_& m) {
  bind_devices(m);
  bind_configuration(m);
  m.def("set_log_device_placement", &debugging::set_log_device_placement, nb::arg("enabled"));
  m.def("get_log_device_placement", &debugging::get_log_device_placement);
  m.def("set_log_sink", &set_log_sink, nb::arg("sink").none());
}

}  // namespace mt::python
