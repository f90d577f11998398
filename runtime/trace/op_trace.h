#pragma once
// The trace's op observer (internal): trace_control.cc registers it for every thread while
// a recording runs, and it times and records each op's steps (runtime/eager/op_observer.h).

namespace mt::internal {

class OpObserver;

// Returns the trace's observer (one for the process; it lives as long as the program).
OpObserver* trace_observer();

}  // namespace mt::internal
