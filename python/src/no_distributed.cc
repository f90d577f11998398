// The names of distributed.cc for a package built without the distributed layer (CMake
// found no gRPC): each raises UnimplementedError saying so.
#include "absl/status/status.h"
#include "python/src/bindings.h"
#include "runtime/eager/error.h"

namespace mt::python {
namespace {

[[noreturn]] void not_built(nb::args, nb::kwargs) {
  internal::throw_error(absl::UnimplementedError(
      "minitensor was built without the distributed layer (CMake found no gRPC and protobuf: "
      "scripts/install-deps.sh installs them, docs/distributed.md); remote tasks are not "
      "available"));
}

}  // namespace

void bind_distributed(nb::module_& m) {
  m.attr("distributed_enabled") = false;
  for (const char* name : {"connect_to_cluster", "Server", "pick_unused_loopback_port",
                           "_MultiWorkerMirroredStrategy"}) {
    m.def(name, &not_built);
  }
}

}  // namespace mt::python
