#pragma once
// The memory plan of a function (internal): every value it makes gets an offset in its
// device's arena, and values whose lifetimes do not overlap share bytes (Note [Function
// replay] in concrete_function.h).

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/function/function_graph.h"

namespace mt::internal {

struct ArenaPlan {
  struct Arena {
    Device* device = nullptr;
    int64_t bytes = 0;
    std::vector<std::pair<ValueId, int64_t>> offsets;  // each made value's byte offset
  };
  std::vector<Arena> arenas;  // one per device with made values
};

// Plans the arenas of `graph`'s kMade values. A value lives from the step that makes it to
// its last use (to the end for an output); one that no step makes (a graph's argument
// buffer) lives throughout. Offsets are aligned to kArenaAlignment.
absl::StatusOr<ArenaPlan> plan_arenas(const FunctionGraph& graph);

inline constexpr int64_t kArenaAlignment = 256;

}  // namespace mt::internal
