#pragma once
// Memory snapshots: every region of a logical device's pool and every chunk in it, so that
// fragmentation can be seen, as PyTorch's memory snapshots show it.
//
//   mt::MemorySnapshot s = mt::config::memory_snapshot("GPU:0");
//   for (const mt::MemoryRegion& r : s.regions)
//     for (const mt::MemoryChunk& c : r.chunks)
//       std::cout << c.offset << " " << c.size << " " << c.state << " " << c.op << "\n";
//   std::string json = s.to_json();
//
// A chunk's op, dtype, shape and time are known when it was allocated while a trace was
// recording (runtime/trace/trace.h); otherwise they are empty. An mt::Function's arena
// reads as op "function 'name'" (runtime/trace/memory_labels.h). A chunk is "free", "in_use" or
// "cached" (free, but kept by the pool's central lists for reuse; blocks in a thread's
// cache read as "in_use"). After an OOM the failing pool's snapshot at that moment stays
// available from last_oom_snapshot. Functions throw mt::Error: NotFound for an unknown
// device, InvalidArgument for a malformed name.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/config.h"

namespace mt {

struct MemoryChunk {
  int64_t offset = 0;   // from the region's start
  int64_t size = 0;     // bytes
  std::string state;    // "free", "in_use" or "cached"
  std::string op;       // the op that allocated it ("MatMul", "copy"); "" when unknown
  std::string dtype;    // "float32"; "" when unknown
  std::string shape;    // "(2, 3)"; "" when unknown
  double time_us = -1;  // when, in the trace's clock (µs since its start); -1 when unknown
};

struct MemoryRegion {
  uint64_t address = 0;
  int64_t size = 0;
  std::vector<MemoryChunk> chunks;  // in address order, covering the region
};

struct MemorySnapshot {
  std::string device;                 // full name of the logical device
  std::string allocator;              // "CPU_0_bfc"
  MemoryInfo totals;                  // what get_memory_info returns
  std::vector<MemoryRegion> regions;  // in address order

  // Returns the snapshot as one JSON object with the fields above.
  std::string to_json() const;
};

namespace config {

// Returns a snapshot of `device`'s pool ("GPU:0", "/device:CPU:1", a full name).
MemorySnapshot memory_snapshot(std::string_view device);

// Returns the snapshot taken when `device`'s pool last ran out of memory, if it has.
std::optional<MemorySnapshot> last_oom_snapshot(std::string_view device);

}  // namespace config
}  // namespace mt
