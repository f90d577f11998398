#pragma once
// The trace recorder (internal): what mt::trace records and how the op path reaches it.
//
// Note [Recording off costs one load]
// While a recording runs, the trace's op observer (op_trace.cc) is registered for every
// thread (runtime/eager/op_observer.h): it times and records each step the execute body
// takes (TensorFlow's TraceMe, ggml's eval callback). Everything else (copy events, timing
// marks, counters, the allocation map) happens only through it, so an untraced op pays the
// core's one load of its observer count (Note [Observers cost one load when off]).
//
// Note [Device time]
// A GPU op gets a timing mark (a CUDA event) on its stream before and after its kernel.
// start() takes one reference mark per device after synchronising it, together with the
// host clock; stop() synchronises again and turns each mark into reference host time plus
// the device's elapsed time since the reference. CPU devices return no marks; their ops
// take host time.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/op_id.h"
#include "placement/placer.h"
#include "runtime/eager/device.h"
#include "runtime/trace/memory_snapshot.h"

namespace mt::internal {

// Set while a recording runs (Note [Recording off costs one load]).
inline std::atomic<bool> g_tracing{false};

inline bool tracing() { return __builtin_expect(g_tracing.load(std::memory_order_relaxed), 0); }

// Note [Ticks]
// Events take their host times from trace_ticks(): the time-stamp counter on x86-64 (a few
// nanoseconds to read, where the steady clock's call costs tens), steady-clock nanoseconds
// elsewhere. start() and stop() read both clocks; stop() turns every event's ticks into
// steady-clock nanoseconds by the line through those two points, and a reader of a running
// recording uses the line through start() and now (TickScale).

// Returns the host clock in nanoseconds (steady).
int64_t trace_now_ns();

// Returns the host clock in ticks (Note [Ticks]).
inline int64_t trace_ticks() {
#if defined(__x86_64__)
  return static_cast<int64_t>(__builtin_ia32_rdtsc());
#else
  return trace_now_ns();
#endif
}

// Note [Allocation map]
// Snapshots label each block in use with the op (or copy) that allocated it. Recording an
// event only stores the block's address in it; trace_lookup_allocation() indexes the events
// recorded since its last call (address -> event) before it looks up, so the op path never
// touches a hash map and each event is indexed at most once.

// One recorded event. Trivially copyable and small (about 100 bytes), so that recording
// costs a copy; shapes, the requested spec and texts live in TraceState's side tables.
struct TraceEvent {
  enum class Kind : uint8_t { kOp, kCopy, kOom, kConfig, kCollective };
  Kind kind = Kind::kOp;
  OpId op{};
  DType dtype{};
  PlacementReason reason{};
  bool device_time = false;  // ts and dur come from timing marks
  bool has_counter = false;  // in_use and reserved hold the pool's after the op
  uint8_t num_shapes = 0;    // an op's inputs, then its output, at dims_begin
  int16_t requested = -1;    // the op's device scope in TraceState::specs; -1: none
  // An OOM message, configuration JSON or an op's cost estimates in TraceState::texts.
  int32_t text = -1;
  uint32_t dims_begin = 0;  // each shape's rank, then its dims, in TraceState::dims
  int device = 0;           // the op's, or the copy's destination
  int src_device = 0;       // a copy's source
  int mark_device = 0;      // the device whose stream holds the marks
  int64_t ts_ns = 0;        // host ticks until stop() (Note [Ticks]), then steady-clock ns
  int64_t dur_ns = 0;
  int64_t bytes = 0;  // allocated by the op (output and copies), or copied
  int64_t in_use = 0, reserved = 0;
  const void* data = nullptr;  // the block it allocated (its last shape); Note [Allocation map]
  void* mark_begin = nullptr;  // Note [Device time]
  void* mark_end = nullptr;
};

// What goes with an event into the side tables, and what it allocated.
struct TraceDetails {
  absl::InlinedVector<int64_t, 16> shapes;  // per shape: its rank, then its dims
  const DeviceSpec* requested = nullptr;
  std::string text;
  Device* pool = nullptr;  // record its counters and, at a new peak, snapshot it

  void add_shape(const Shape& shape) {
    shapes.push_back(shape.rank());
    shapes.insert(shapes.end(), shape.dims().begin(), shape.dims().end());
  }
};

// Appends `event` (completing its table indices and counters) and its details to the
// running recording (drops it when none runs), in one lock.
void trace_record(TraceEvent& event, const TraceDetails& details);

// Returns what trace_record knows of the in-use block at `data`; false when nothing.
bool trace_lookup_allocation(uintptr_t data, MemoryChunk* chunk);

// Records an OOM of `device` with `message`; called on every OOM, recording or not, to
// keep the pool's last snapshot (config::last_oom_snapshot).
void trace_oom(Device& device, const std::string& message);

// Records a configuration change ("set_soft_device_placement: true").
void trace_config(std::string text);
// Records `device`'s part of a collective (an NCCL all-reduce of `bytes` on each device),
// `text` saying what it reduced, timed by `mark_begin` and `mark_end` on its stream; does
// nothing (but free the marks) when no recording runs.
void trace_collective(Device& device, int64_t bytes, std::string text, void* mark_begin,
                      void* mark_end);

// Returns a snapshot of `device`'s pool, its chunks labelled from the allocation map.
MemorySnapshot take_snapshot(Device& device);

// Keeps a snapshot of `device`'s pool as its last OOM snapshot.
void keep_oom_snapshot(Device& device);

}  // namespace mt::internal
