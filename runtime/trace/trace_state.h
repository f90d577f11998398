#pragma once
// Declarations only: its users are trace_recorder.cc and trace_control.cc.
// The state of the process's recording (internal), shared by the recorder, start/stop and
// the writers of the trace and the report. Every field is guarded by `mu`.

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "core/mutex.h"
#include "runtime/eager/context.h"
#include "runtime/trace/memory_snapshot.h"
#include "runtime/trace/trace_recorder.h"

namespace mt::internal {

// A recording keeps at most this many events (about 100 MiB with their shapes); later ones are
// counted in TraceState::dropped and reported in the JSON's otherData.
inline constexpr size_t kMaxTraceEvents = size_t{1} << 20;

struct TraceState {
  Mutex mu;
  bool recording ABSL_GUARDED_BY(mu) = false;
  Runtime* rt ABSL_GUARDED_BY(mu) = nullptr;  // the runtime recorded; null before any start
  int64_t start_ns ABSL_GUARDED_BY(mu) = 0;
  int64_t start_ticks ABSL_GUARDED_BY(mu) = 0;         // Note [Ticks]
  bool in_ns ABSL_GUARDED_BY(mu) = true;               // events' times are in ns (stop() ran)
  std::vector<TraceEvent> events ABSL_GUARDED_BY(mu);  // keeps its capacity across starts
  std::vector<int64_t> dims ABSL_GUARDED_BY(mu);       // TraceEvent::dims_begin
  std::vector<DeviceSpec> specs ABSL_GUARDED_BY(mu);   // TraceEvent::requested
  std::vector<std::string> texts ABSL_GUARDED_BY(mu);  // TraceEvent::text
  int64_t dropped ABSL_GUARDED_BY(mu) = 0;             // events not kept (kMaxTraceEvents)
  // Per device: the bytes in use at its latest peak, and the snapshot taken then.
  std::vector<int64_t> peak ABSL_GUARDED_BY(mu);
  std::vector<MemorySnapshot> peak_snapshots ABSL_GUARDED_BY(mu);
  // Per device: the reference timing mark and its host time (Note [Device time]).
  std::vector<void*> ref_marks ABSL_GUARDED_BY(mu);
  std::vector<int64_t> ref_ns ABSL_GUARDED_BY(mu);
  // A block's address -> the latest event that allocated it, for events[0, indexed)
  // (Note [Allocation map]).
  absl::flat_hash_map<uintptr_t, uint32_t> allocations ABSL_GUARDED_BY(mu);
  size_t indexed ABSL_GUARDED_BY(mu) = 0;
};

// Turns the host ticks of a recording's events into steady-clock nanoseconds (Note [Ticks]).
struct TickScale {
  int64_t ticks0 = 0, ns0 = 0;
  double ns_per_tick = 1;
  bool identity = true;

  // Returns the scale of `s`: identity once stopped, else the line through start and now.
  static TickScale of(const TraceState& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  // Returns `e` with its times in nanoseconds.
  TraceEvent apply(TraceEvent e) const {
    if (identity || e.device_time) return e;
    e.ts_ns = ns0 + static_cast<int64_t>(static_cast<double>(e.ts_ns - ticks0) * ns_per_tick);
    e.dur_ns = static_cast<int64_t>(static_cast<double>(e.dur_ns) * ns_per_tick);
    return e;
  }
};

// Returns the process's recording state.
TraceState& trace_state();

// Returns the recording as Chrome Trace Event JSON (trace_json.cc). Takes s.mu.
std::string trace_json(TraceState& s);

// Writes `text` to the file at `path`; throws mt::Error NotFound when it cannot.
void write_file(std::string_view path, const std::string& text);

// Returns the peak snapshots of the recording as a JSON array. Takes s.mu.
std::string peak_snapshots_json(TraceState& s);

}  // namespace mt::internal
