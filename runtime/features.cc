// The features that listen to the eager core from its start (runtime/eager/op_observer.h):
// the core calls install_features() when a runtime starts, and this file, outside the core,
// registers them.
#include "runtime/eager/op_observer.h"
#include "runtime/trace/trace_recorder.h"

namespace mt::internal {

void install_features() {
  set_oom_listener(&trace_oom);  // keeps the pool's snapshot, and records the OOM in a trace
}

}  // namespace mt::internal
