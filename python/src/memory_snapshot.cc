// mt.config.experimental.memory_snapshot and last_oom_snapshot (runtime/trace/
// memory_snapshot.h): every region of a logical device's pool and every chunk in it.
//
//   s = mt.config.experimental.memory_snapshot("CPU:0")
//   [(c.offset, c.size, c.state, c.op) for r in s.regions for c in r.chunks]
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "absl/strings/str_cat.h"
#include "python/src/bindings.h"
#include "runtime/minitensor.h"

namespace mt::python {

void bind_memory_snapshot(nb::module_& m) {
  nb::class_<MemoryChunk>(m, "MemoryChunk")
      .def_ro("offset", &MemoryChunk::offset)
      .def_ro("size", &MemoryChunk::size)
      .def_ro("state", &MemoryChunk::state)
      .def_ro("op", &MemoryChunk::op)
      .def_ro("dtype", &MemoryChunk::dtype)
      .def_ro("shape", &MemoryChunk::shape)
      .def_ro("time_us", &MemoryChunk::time_us)
      .def("__repr__", [](const MemoryChunk& c) {
        return absl::StrCat("MemoryChunk(offset=", c.offset, ", size=", c.size, ", state='",
                            c.state, "', op='", c.op, "')");
      });
  nb::class_<MemoryRegion>(m, "MemoryRegion")
      .def_ro("address", &MemoryRegion::address)
      .def_ro("size", &MemoryRegion::size)
      .def_ro("chunks", &MemoryRegion::chunks)
      .def("__repr__", [](const MemoryRegion& r) {
        return absl::StrCat("MemoryRegion(address=", r.address, ", size=", r.size,
                            ", chunks=", r.chunks.size(), ")");
      });
  nb::class_<MemorySnapshot>(m, "MemorySnapshot")
      .def_ro("device", &MemorySnapshot::device)
      .def_ro("allocator", &MemorySnapshot::allocator)
      .def_prop_ro("totals", [](const MemorySnapshot& s) { return memory_info_dict(s.totals); })
      .def_ro("regions", &MemorySnapshot::regions)
      .def("to_json", &MemorySnapshot::to_json)
      .def("__repr__", [](const MemorySnapshot& s) {
        return absl::StrCat("MemorySnapshot(device='", s.device, "', allocator='", s.allocator,
                            "', regions=", s.regions.size(), ")");
      });
  m.def("memory_snapshot", &config::memory_snapshot, nb::arg("device"),
        nb::call_guard<nb::gil_scoped_release>());
  m.def("last_oom_snapshot", &config::last_oom_snapshot, nb::arg("device"),
        nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace mt::python
