#include "runtime/trace/trace_recorder.h"

#include <chrono>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/mutex.h"
#include "runtime/eager/context.h"
#include "runtime/eager/error.h"
#include "runtime/trace/trace.h"
#include "runtime/trace/trace_state.h"

namespace mt::internal {

TraceState& trace_state() {
  static auto* state = new TraceState();
  return *state;
}

int64_t trace_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TickScale TickScale::of(const TraceState& s) {
  TickScale scale;
  if (s.in_ns) return scale;
  scale.identity = false;
  scale.ticks0 = s.start_ticks;
  scale.ns0 = s.start_ns;
  const int64_t ticks = trace_ticks();
  const int64_t ns = trace_now_ns();
  if (ticks > s.start_ticks) {
    scale.ns_per_tick =
        static_cast<double>(ns - s.start_ns) / static_cast<double>(ticks - s.start_ticks);
  }
  return scale;
}

namespace {

// Returns the index of `spec` in s.specs, adding it when new.
int16_t intern_spec(TraceState& s, const DeviceSpec& spec) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
  for (size_t i = s.specs.size(); i-- > 0;) {
    if (s.specs[i] == spec) return static_cast<int16_t>(i);
  }
  if (s.specs.size() >= 32767) return -1;
  s.specs.push_back(spec);
  return static_cast<int16_t>(s.specs.size() - 1);
}

// Stores `event` and its details; returns whether its pool reached a new peak.
bool store(TraceState& s, TraceEvent& event, const TraceDetails& d)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
  // Note [Writing ahead]
  // The tables outgrow the caches, so each event's stores would miss, and the next locked
  // instruction (this lock's release, a tensor's reference count) would wait for them.
  // Prefetching for write a few events ahead takes the misses off the op path; and `event`
  // is filled in before the tables are written, as a copy that reads fields just written
  // waits for every earlier store.
  constexpr size_t kAhead = 4;
  const char* next = reinterpret_cast<const char*>(s.events.data() + s.events.size() + kAhead);
  __builtin_prefetch(next, 1);
  __builtin_prefetch(next + sizeof(TraceEvent) - 1, 1);
  __builtin_prefetch(s.dims.data() + s.dims.size() + 8 * kAhead, 1);
  event.dims_begin = static_cast<uint32_t>(s.dims.size());
  if (d.requested != nullptr) event.requested = intern_spec(s, *d.requested);
  if (!d.text.empty()) {
    event.text = static_cast<int32_t>(s.texts.size());
    s.texts.push_back(d.text);
  }
  s.events.push_back(event);
  s.dims.insert(s.dims.end(), d.shapes.begin(), d.shapes.end());
  if (d.pool == nullptr || event.in_use <= s.peak[event.device]) return false;
  s.peak[event.device] = event.in_use;
  return true;
}

// Indexes the blocks that events recorded since the last call allocated (Note [Allocation
// map]); a later event at the same address replaces an earlier one.
void index_allocations(TraceState& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
  for (; s.indexed < s.events.size(); ++s.indexed) {
    const void* data = s.events[s.indexed].data;
    if (data != nullptr) {
      s.allocations[reinterpret_cast<uintptr_t>(data)] = static_cast<uint32_t>(s.indexed);
    }
  }
}

// Returns "(2, 3)": the last shape of `e` (an op's output, a copy's tensor).
std::string last_shape_text(const TraceEvent& e, const std::vector<int64_t>& dims) {
  size_t at = e.dims_begin;
  for (int i = 0; i + 1 < e.num_shapes; ++i) at += 1 + dims[at];
  const int64_t rank = dims[at];
  absl::Span<const int64_t> shape(dims.data() + at + 1, rank);
  if (rank == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

}  // namespace

void trace_record(TraceEvent& event, const TraceDetails& details) {
  TraceState& s = trace_state();
  if (details.pool != nullptr) {
    const MemoryUsage m = details.pool->allocator().usage();
    event.has_counter = true;
    event.in_use = m.bytes_in_use;
    event.reserved = m.bytes_reserved;
  }
  {
    MutexLock lock(&s.mu);
    if (s.recording && s.events.size() < kMaxTraceEvents) {
      if (!store(s, event, details)) return;
    } else {
      if (s.recording) ++s.dropped;
      if (event.mark_begin == nullptr) return;  // not kept: free the marks
      s.rt->device(event.mark_device).release_mark(event.mark_begin);
      s.rt->device(event.mark_device).release_mark(event.mark_end);
      return;
    }
  }
  // A new peak: snapshot outside the lock, as the snapshot reads the allocation map.
  MemorySnapshot snapshot = take_snapshot(*details.pool);
  MutexLock lock(&s.mu);
  if (snapshot.totals.current >= s.peak_snapshots[event.device].totals.current) {
    s.peak_snapshots[event.device] = std::move(snapshot);
  }
}

bool trace_lookup_allocation(uintptr_t data, MemoryChunk* chunk) {
  TraceState& s = trace_state();
  MutexLock lock(&s.mu);
  index_allocations(s);
  auto it = s.allocations.find(data);
  if (it == s.allocations.end()) return false;
  const TraceEvent e = TickScale::of(s).apply(s.events[it->second]);
  chunk->op = e.kind == TraceEvent::Kind::kCopy ? "copy" : op_name(e.op);
  chunk->dtype = dtype_name(e.dtype);
  chunk->shape = last_shape_text(e, s.dims);
  chunk->time_us = static_cast<double>(e.ts_ns - s.start_ns) / 1000.0;
  return true;
}

void trace_oom(Device& device, const std::string& message) {
  keep_oom_snapshot(device);
  if (!tracing()) return;
  TraceEvent e;
  e.kind = TraceEvent::Kind::kOom;
  e.device = device_index(device);
  e.ts_ns = trace_ticks();
  TraceDetails details;
  details.text = message;
  trace_record(e, details);
}

void trace_config(std::string text) {
  TraceEvent e;
  e.kind = TraceEvent::Kind::kConfig;
  e.ts_ns = trace_ticks();
  TraceDetails details;
  details.text = std::move(text);
  trace_record(e, details);
}

void trace_collective(Device& device, int64_t bytes, std::string text, void* mark_begin,
                      void* mark_end) {
  TraceEvent e;
  e.kind = TraceEvent::Kind::kCollective;
  e.device = e.mark_device = device_index(device);
  e.bytes = bytes;
  e.ts_ns = trace_ticks();
  e.mark_begin = mark_begin;
  e.mark_end = mark_end;
  TraceDetails details;
  details.text = std::move(text);
  trace_record(e, details);
}

}  // namespace mt::internal
