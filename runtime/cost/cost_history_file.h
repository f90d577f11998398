#pragma once
// The cost policy's history as a file (mt::config::save_placement_history): every measured
// (op, dtype, footprint bucket, device) with its count, mean time and mean footprint, so
// that a second run of a program starts calibrated. Text, one entry a line:
//
//   minitensor-placement-history 1
//   machine <key>
//   <device> <op> <dtype> <bucket> <count> <mean_ns> <mean_bytes>
//   GPU:0 MatMul float32 21 12 8345.2 1048576
//
// Ops and dtypes go by name, devices by short name, so a file survives a rebuild that adds
// ops. A file of another version or machine, or one a line of which does not parse, is
// refused whole with InvalidArgument; entries naming a device or op this process lacks
// are skipped.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/cost/cost_model.h"

namespace mt {

// Returns the file's text for `records` of `model`'s devices on machine `machine`.
std::string serialize_cost_history(const CostModel& model, absl::Span<const CostRecord> records,
                                   std::string_view machine);

// Parses a file's text for `model`'s devices on machine `machine`.
absl::StatusOr<std::vector<CostRecord>> parse_cost_history(const CostModel& model,
                                                           std::string_view text,
                                                           std::string_view machine);

}  // namespace mt
