#include "runtime/function/function_plan.h"

#include <algorithm>

namespace mt::internal {
namespace {

struct Interval {
  ValueId id;
  int first;
  int last;
  int64_t bytes;
  int64_t offset = 0;
};

int64_t aligned(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

}  // namespace

// Greedy by size: the largest value first, each at the lowest offset where it overlaps no
// value already placed whose lifetime meets its own.
absl::StatusOr<ArenaPlan> plan_arenas(const FunctionGraph& graph) {
  const int n = static_cast<int>(graph.steps.size());
  std::vector<int> first(graph.values.size(), -1);
  std::vector<int> last(graph.values.size(), -1);
  for (int i = 0; i < n; ++i) {
    for (ValueId id : graph.steps[i].outputs) {
      if (first[id] < 0) first[id] = i;
      last[id] = std::max(last[id], i);
    }
    for (ValueId id : graph.steps[i].inputs) last[id] = std::max(last[id], i);
  }
  for (ValueId id : graph.outputs) last[id] = n;
  ArenaPlan plan;
  std::vector<std::vector<Interval>> per_device;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const FunctionValue& v = graph.values[id];
    if (v.kind != ValueKind::kMade) continue;
    size_t d = 0;
    while (d < plan.arenas.size() && plan.arenas[d].device != v.device) ++d;
    if (d == plan.arenas.size()) {
      plan.arenas.push_back({v.device, 0, {}});
      per_device.emplace_back();
    }
    // A value no step makes is a graph's argument buffer: it lives through the whole
    // replay and beyond, since the next replay may reuse its content (Note [Function replay]).
    const int start = first[id] < 0 ? -1 : first[id];
    const int end = first[id] < 0 ? n : std::max(last[id], start);
    per_device[d].push_back(
        Interval{static_cast<ValueId>(id), start, end, aligned(static_cast<int64_t>(v.bytes))});
  }
  for (size_t d = 0; d < plan.arenas.size(); ++d) {
    std::vector<Interval>& values = per_device[d];
    std::stable_sort(values.begin(), values.end(),
                     [](const Interval& a, const Interval& b) { return a.bytes > b.bytes; });
    std::vector<const Interval*> placed;
    for (Interval& v : values) {
      // The placed values alive at the same time, by offset.
      std::vector<const Interval*> clashes;
      for (const Interval* p : placed) {
        if (p->first <= v.last && v.first <= p->last) clashes.push_back(p);
      }
      std::sort(clashes.begin(), clashes.end(),
                [](const Interval* a, const Interval* b) { return a->offset < b->offset; });
      int64_t offset = 0;
      for (const Interval* c : clashes) {
        if (offset + v.bytes <= c->offset) break;
        offset = std::max(offset, c->offset + c->bytes);
      }
      v.offset = offset;
      placed.push_back(&v);
      plan.arenas[d].bytes = std::max(plan.arenas[d].bytes, offset + v.bytes);
      plan.arenas[d].offsets.emplace_back(v.id, offset);
    }
    plan.arenas[d].bytes = std::max<int64_t>(plan.arenas[d].bytes, kArenaAlignment);
  }
  return plan;
}

}  // namespace mt::internal
