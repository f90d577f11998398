// Writes a recording as Chrome Trace Event JSON (the format Perfetto and chrome://tracing
// open): {"traceEvents": [...]}, times in microseconds since the recording started.

#include "absl/strings/str_cat.h"
#include "runtime/eager/explain.h"
#include "runtime/trace/json_writer.h"
#include "runtime/trace/trace_state.h"

namespace mt::internal {
namespace {

using Kind = TraceEvent::Kind;

// Returns "(2, 3), (3,) -> (2,)": an op's input shapes, then its output.
std::string shapes_text(const TraceEvent& e, const std::vector<int64_t>& dims) {
  std::string out;
  size_t at = e.dims_begin;
  for (int i = 0; i < e.num_shapes; ++i) {
    const bool output = i + 1 == e.num_shapes;
    absl::StrAppend(&out, output ? (i ? " -> " : "-> ") : (i ? ", " : ""), "(");
    const int64_t rank = dims[at++];
    for (int64_t d = 0; d < rank; ++d) absl::StrAppend(&out, d ? ", " : "", dims[at++]);
    out.append(rank == 1 ? ",)" : ")");
  }
  return out;
}

// Appends `"name":"...","ph":"X","ts":..` and the fields every event has.
void append_head(std::string* out, std::string_view name, const char* cat, const char* ph,
                 const TraceEvent& e, int64_t start_ns) {
  out->append("{\"name\":");
  append_json_string(out, name);
  absl::StrAppend(out, ",\"cat\":\"", cat, "\",\"ph\":\"", ph, "\",\"pid\":1,\"tid\":", e.device,
                  ",\"ts\":");
  append_json_number(out, static_cast<double>(e.ts_ns - start_ns) / 1000.0);
}

void append_op(std::string* out, const TraceEvent& e, const TraceState& s)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
  Runtime& rt = *s.rt;
  append_head(out, op_name(e.op), "op", "X", e, s.start_ns);
  out->append(",\"dur\":");
  append_json_number(out, static_cast<double>(e.dur_ns) / 1000.0);
  absl::StrAppend(out, ",\"args\":{\"dtype\":\"", dtype_name(e.dtype), "\",\"shapes\":");
  append_json_string(out, shapes_text(e, s.dims));
  out->append(",\"device\":");
  append_json_string(out, rt.device(e.device).name());
  absl::StrAppend(out, ",\"reason\":\"", reason_code(e.reason), "\",\"detail\":");
  const Placement p{e.device, nullptr, e.reason};
  const DeviceSpec none;
  const DeviceSpec& requested = e.requested >= 0 ? s.specs[e.requested] : none;
  // An op the cost policy placed carries its estimates (recorded when it ran).
  append_json_string(
      out, e.text >= 0 ? s.texts[e.text] : placement_detail(e.op, e.dtype, &requested, p));
  // A remote op's time is its issue's (the task runs it later).
  const char* timing =
      e.device_time ? "device" : (rt.device(e.device).remote() != nullptr ? "issue" : "host");
  absl::StrAppend(out, ",\"bytes_allocated\":", e.bytes, ",\"timing\":\"", timing, "\"}}");
}

void append_copy(std::string* out, const TraceEvent& e, Runtime& rt, int64_t start_ns) {
  Device& src = rt.device(e.src_device);
  Device& dst = rt.device(e.device);
  append_head(out, absl::StrCat("copy ", short_name(src), " -> ", short_name(dst)), "copy", "X", e,
              start_ns);
  out->append(",\"dur\":");
  append_json_number(out, static_cast<double>(e.dur_ns) / 1000.0);
  out->append(",\"args\":{\"source\":");
  append_json_string(out, src.name());
  out->append(",\"destination\":");
  append_json_string(out, dst.name());
  absl::StrAppend(out, ",\"bytes\":", e.bytes, ",\"GB/s\":");
  append_json_number(out, e.dur_ns > 0 ? static_cast<double>(e.bytes) / e.dur_ns : 0);
  absl::StrAppend(out, ",\"timing\":\"", e.device_time ? "device" : "host", "\"}}");
}

// Appends the pool counter `e` carries, at the end of `e`.
void append_counter(std::string* out, const TraceEvent& e, Runtime& rt, int64_t start_ns) {
  TraceEvent at_end;
  at_end.device = e.device;
  at_end.ts_ns = e.ts_ns + e.dur_ns;
  append_head(out, rt.device(e.device).allocator().name(), "memory", "C", at_end, start_ns);
  absl::StrAppend(out, ",\"args\":{\"in_use\":", e.in_use, ",\"reserved\":", e.reserved, "}}");
}

void append_event(std::string* out, const TraceEvent& e, const TraceState& s)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
  Runtime& rt = *s.rt;
  const int64_t start_ns = s.start_ns;
  static const std::string kNone;
  const std::string& text = e.text >= 0 ? s.texts[e.text] : kNone;
  switch (e.kind) {
    case Kind::kOp:
      return append_op(out, e, s);
    case Kind::kCopy:
      return append_copy(out, e, rt, start_ns);
    case Kind::kOom:
      append_head(out, "OOM", "oom", "i", e, start_ns);
      out->append(",\"s\":\"t\",\"args\":{\"device\":");
      append_json_string(out, rt.device(e.device).name());
      out->append(",\"message\":");
      append_json_string(out, text);
      out->append("}}");
      return;
    case Kind::kConfig:
      append_head(out, "configuration", "config", "i", e, start_ns);
      absl::StrAppend(out, ",\"s\":\"g\",\"args\":", text, "}");
      return;
    case Kind::kCollective:
      append_head(out, "NcclAllReduce", "collective", "X", e, start_ns);
      out->append(",\"dur\":");
      append_json_number(out, static_cast<double>(e.dur_ns) / 1000.0);
      out->append(",\"args\":{\"device\":");
      append_json_string(out, rt.device(e.device).name());
      absl::StrAppend(out, ",\"bytes\":", e.bytes, ",\"detail\":");
      append_json_string(out, text);
      absl::StrAppend(out, ",\"timing\":\"", e.device_time ? "device" : "host", "\"}}");
      return;
  }
}

// Names the process and one track per logical device.
void append_metadata(std::string* out, Runtime& rt) {
  out->append(
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
      "\"args\":{\"name\":\"minitensor\"}}");
  for (int i = 0; i < rt.num_devices(); ++i) {
    absl::StrAppend(out, ",{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":", i,
                    ",\"args\":{\"name\":");
    append_json_string(out, rt.device(i).name());
    absl::StrAppend(out, "}},{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":", i,
                    ",\"args\":{\"sort_index\":", i, "}}");
  }
}

}  // namespace

std::string trace_json(TraceState& s) {
  MutexLock lock(&s.mu);
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  if (s.rt != nullptr) {
    append_metadata(&out, *s.rt);
    const TickScale scale = TickScale::of(s);
    for (const TraceEvent& ticks : s.events) {
      const TraceEvent e = scale.apply(ticks);
      out.append(",\n");
      append_event(&out, e, s);
      if (e.has_counter) {
        out.append(",\n");
        append_counter(&out, e, *s.rt, s.start_ns);
      }
    }
  }
  absl::StrAppend(&out, "],\"otherData\":{\"dropped_events\":\"", s.dropped, "\"}}\n");
  return out;
}

std::string peak_snapshots_json(TraceState& s) {
  MutexLock lock(&s.mu);
  std::string out = "[";
  for (size_t i = 0; i < s.peak_snapshots.size(); ++i) {
    absl::StrAppend(&out, i ? ",\n" : "", s.peak_snapshots[i].to_json());
  }
  out.append("]");
  return out;
}

}  // namespace mt::internal
