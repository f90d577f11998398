// mt::trace's start and stop, and the writers of its files.

#include <fstream>

#include "absl/strings/str_cat.h"
#include "runtime/eager/context.h"
#include "runtime/eager/error.h"
#include "runtime/eager/op_observer.h"
#include "runtime/trace/json_writer.h"
#include "runtime/trace/op_trace.h"
#include "runtime/trace/trace.h"
#include "runtime/trace/trace_state.h"

namespace mt::internal {
namespace {

// Serialises start() and stop() with each other.
Mutex& control_mu() {
  static auto* mu = new Mutex();
  return *mu;
}

// Returns the configuration at the start of a recording, as a JSON object.
std::string configuration_json(Runtime& rt) {
  std::string out = "{\"devices\":[";
  for (int i = 0; i < rt.num_devices(); ++i) {
    const MemoryStats m = rt.device(i).allocator().stats();
    absl::StrAppend(&out, i ? "," : "", "{\"name\":");
    append_json_string(&out, rt.device(i).name());
    out.append(",\"allocator\":");
    append_json_string(&out, rt.device(i).allocator().name());
    absl::StrAppend(&out, ",\"limit\":", m.bytes_limit, "}");
  }
  Context& ctx = Context::get();
  absl::StrAppend(&out, "],\"soft_device_placement\":", ctx.soft_placement() ? "true" : "false",
                  ",\"log_device_placement\":", ctx.log_placement() ? "true" : "false", "}");
  return out;
}

// Turns the timing marks of the stopped recording into host-clock times (Note [Device
// time]) and frees them.
void resolve_marks(TraceState& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
  for (TraceEvent& e : s.events) {
    if (e.mark_begin == nullptr) continue;
    Device& device = s.rt->device(e.mark_device);
    const double from_ref = device.mark_elapsed_ms(s.ref_marks[e.mark_device], e.mark_begin);
    const double dur = device.mark_elapsed_ms(e.mark_begin, e.mark_end);
    if (from_ref >= 0 && dur >= 0) {
      e.ts_ns = s.ref_ns[e.mark_device] + static_cast<int64_t>(from_ref * 1e6);
      e.dur_ns = static_cast<int64_t>(dur * 1e6);
      e.device_time = true;
    }
    device.release_mark(e.mark_begin);
    device.release_mark(e.mark_end);
    e.mark_begin = e.mark_end = nullptr;
  }
  for (size_t i = 0; i < s.ref_marks.size(); ++i) s.rt->device(i).release_mark(s.ref_marks[i]);
  s.ref_marks.assign(s.ref_marks.size(), nullptr);
}

// Drops the last recording's events and side tables (keeping their capacity).
void clear_recording(TraceState& s) {
  MutexLock lock(&s.mu);
  s.events.clear();
  s.dims.clear();
  s.specs.clear();
  s.texts.clear();
  s.dropped = 0;
  s.allocations.clear();
  s.indexed = 0;
}

}  // namespace

void write_file(std::string_view path, const std::string& text) {
  std::ofstream out{std::string(path), std::ios::binary};
  out << text;
  out.close();
  if (!out) {
    throw_error(
        absl::NotFoundError(absl::StrCat("[trace] cannot write '", std::string(path), "'")));
  }
}

}  // namespace mt::internal

namespace mt::trace {

using internal::MutexLock;
using internal::TraceState;

void start() {
  internal::Runtime* rt = internal::value_or_throw(internal::Context::get().runtime());
  MutexLock control(&internal::control_mu());
  if (internal::g_tracing.load()) {
    internal::throw_error(absl::FailedPreconditionError("[trace] a recording is already running"));
  }
  // Ops seen before the recording starts below are dropped by trace_record.
  internal::throw_if_error(internal::add_process_observer(internal::trace_observer()));
  TraceState& s = internal::trace_state();
  const int n = rt->num_devices();
  internal::clear_recording(s);
  std::vector<MemorySnapshot> snapshots;
  std::vector<void*> marks;
  std::vector<int64_t> ref_ns;
  for (int i = 0; i < n; ++i) {
    snapshots.push_back(internal::take_snapshot(rt->device(i)));
    (void)rt->device(i).wait_idle();  // a failing device simply keeps host times
    marks.push_back(rt->device(i).record_mark());
    ref_ns.push_back(internal::trace_now_ns());
  }
  MutexLock lock(&s.mu);
  s.rt = rt;
  s.start_ns = internal::trace_now_ns();
  s.start_ticks = internal::trace_ticks();
  s.in_ns = false;
  s.peak.clear();
  for (const MemorySnapshot& snapshot : snapshots) s.peak.push_back(snapshot.totals.current);
  s.peak_snapshots = std::move(snapshots);
  s.ref_marks = std::move(marks);
  s.ref_ns = std::move(ref_ns);
  internal::TraceEvent config;
  config.kind = internal::TraceEvent::Kind::kConfig;
  config.ts_ns = s.start_ticks;
  config.text = 0;
  s.texts.push_back(internal::configuration_json(*rt));
  s.events.push_back(config);
  s.recording = true;
  internal::g_tracing.store(true, std::memory_order_relaxed);
}

void stop() {
  MutexLock control(&internal::control_mu());
  if (!internal::g_tracing.load()) {
    internal::throw_error(absl::FailedPreconditionError("[trace] no recording is running"));
  }
  internal::g_tracing.store(false, std::memory_order_relaxed);
  internal::remove_process_observer(internal::trace_observer());
  TraceState& s = internal::trace_state();
  internal::Runtime* rt;
  {
    MutexLock lock(&s.mu);
    s.recording = false;
    rt = s.rt;
  }
  for (int i = 0; i < rt->num_devices(); ++i) (void)rt->device(i).wait_idle();
  MutexLock lock(&s.mu);
  const internal::TickScale scale = internal::TickScale::of(s);
  for (internal::TraceEvent& e : s.events) e = scale.apply(e);
  s.in_ns = true;
  internal::resolve_marks(s);
}

bool is_recording() { return internal::g_tracing.load(std::memory_order_relaxed); }

std::string to_json() { return internal::trace_json(internal::trace_state()); }

void save(std::string_view path) { internal::write_file(path, to_json()); }

}  // namespace mt::trace
