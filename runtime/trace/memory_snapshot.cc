#include "runtime/trace/memory_snapshot.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/mutex.h"
#include "runtime/eager/context.h"
#include "runtime/eager/error.h"
#include "runtime/trace/json_writer.h"
#include "runtime/trace/memory_labels.h"
#include "runtime/trace/trace_recorder.h"

namespace mt {
namespace internal {
namespace {

const char* state_name(ChunkInfo::State state) {
  switch (state) {
    case ChunkInfo::State::kFree:
      return "free";
    case ChunkInfo::State::kInUse:
      return "in_use";
    case ChunkInfo::State::kCached:
      return "cached";
  }
  return "unknown";
}

struct OomSnapshots {
  Mutex mu;
  absl::flat_hash_map<const Device*, MemorySnapshot> by_device ABSL_GUARDED_BY(mu);
};

OomSnapshots& oom_snapshots() {
  static auto* snapshots = new OomSnapshots();
  return *snapshots;
}

Device& device_or_throw(std::string_view name) {
  Runtime* rt = value_or_throw(Context::get().runtime());
  return rt->device(value_or_throw(rt->find_device(name)));
}

void append_chunk(std::string* out, const MemoryChunk& c) {
  absl::StrAppend(out, "{\"offset\":", c.offset, ",\"size\":", c.size, ",\"state\":");
  append_json_string(out, c.state);
  out->append(",\"op\":");
  append_json_string(out, c.op);
  out->append(",\"dtype\":");
  append_json_string(out, c.dtype);
  out->append(",\"shape\":");
  append_json_string(out, c.shape);
  out->append(",\"time_us\":");
  append_json_number(out, c.time_us);
  out->push_back('}');
}

}  // namespace

MemorySnapshot take_snapshot(Device& device) {
  MemorySnapshot s;
  s.device = device.name();
  s.allocator = std::string(device.allocator().name());
  for (const RegionInfo& r : device.allocator().regions()) {
    MemoryRegion& region = s.regions.emplace_back();
    region.address = r.address;
    region.size = r.size;
    for (const ChunkInfo& c : r.chunks) {
      MemoryChunk& chunk = region.chunks.emplace_back();
      chunk.offset = static_cast<int64_t>(c.address - r.address);
      chunk.size = c.size;
      chunk.state = state_name(c.state);
      if (c.state == ChunkInfo::State::kInUse && !find_block_label(c.address, &chunk.op)) {
        trace_lookup_allocation(c.address, &chunk);
      }
    }
  }
  // Read the totals last, so that they are at least as new as the chunks.
  MemoryStats m = device.allocator().stats();
  s.totals = MemoryInfo{m.bytes_in_use, m.peak_bytes_in_use,  m.bytes_reserved, m.bytes_limit,
                        m.num_allocs,   m.largest_free_block, m.fragmentation};
  return s;
}

void keep_oom_snapshot(Device& device) {
  MemorySnapshot s = take_snapshot(device);
  OomSnapshots& oom = oom_snapshots();
  MutexLock lock(&oom.mu);
  oom.by_device[&device] = std::move(s);
}

}  // namespace internal

std::string MemorySnapshot::to_json() const {
  std::string out = "{\"device\":";
  internal::append_json_string(&out, device);
  out.append(",\"allocator\":");
  internal::append_json_string(&out, allocator);
  absl::StrAppend(&out, ",\"totals\":{\"current\":", totals.current, ",\"peak\":", totals.peak,
                  ",\"reserved\":", totals.reserved, ",\"limit\":", totals.limit,
                  ",\"num_allocs\":", totals.num_allocs,
                  ",\"largest_free_block\":", totals.largest_free_block, ",\"fragmentation\":");
  internal::append_json_number(&out, totals.fragmentation);
  out.append("},\"regions\":[");
  for (size_t i = 0; i < regions.size(); ++i) {
    absl::StrAppend(&out, i ? "," : "", "{\"address\":", regions[i].address,
                    ",\"size\":", regions[i].size, ",\"chunks\":[");
    for (size_t j = 0; j < regions[i].chunks.size(); ++j) {
      if (j) out.push_back(',');
      internal::append_chunk(&out, regions[i].chunks[j]);
    }
    out.append("]}");
  }
  out.append("]}");
  return out;
}

namespace config {

MemorySnapshot memory_snapshot(std::string_view device) {
  return internal::take_snapshot(internal::device_or_throw(device));
}

std::optional<MemorySnapshot> last_oom_snapshot(std::string_view device) {
  const internal::Device* key = &internal::device_or_throw(device);
  internal::OomSnapshots& oom = internal::oom_snapshots();
  internal::MutexLock lock(&oom.mu);
  auto it = oom.by_device.find(key);
  if (it == oom.by_device.end()) return std::nullopt;
  return it->second;
}

}  // namespace config
}  // namespace mt
