#pragma once
// mt::config placement policies: how an op that no device scope and no variable input pins
// chooses its device.
//
//   mt::config::set_placement_policy(mt::config::PlacementPolicy::kCost);
//   mt::config::load_placement_history("history.txt");   // start calibrated, if saved
//   ... run the program ...
//   mt::config::save_placement_history("history.txt");
//
// kPriority (the default) is TensorFlow's eager placer: the best device with a kernel (GPU
// before CPU), then the small-op rule. kCost measures: it runs each op where its estimated
// finish is earliest (execution time measured online, copies from a bus calibration,
// queued work; a device whose pool cannot take the output is skipped), and uses priority
// placement while it calibrates. docs/placement.md, "The cost policy", says how it decides,
// what it measures and where it keeps its files. Errors are thrown as mt::Error.

#include <string>

namespace mt::config {

enum class PlacementPolicy {
  kPriority,  // TensorFlow's rules (the default)
  kCost,      // the earliest estimated finish
};

// Sets the policy of unscoped ops. May change at any time; takes effect at the next op.
void set_placement_policy(PlacementPolicy policy);
PlacementPolicy get_placement_policy();

// Writes the cost policy's measurements to `path` (initialises the runtime). Throws
// InvalidArgument when the file cannot be written.
void save_placement_history(const std::string& path);

// Replaces the cost policy's measurements by those saved in `path` (initialises the
// runtime). Returns false, with a warning on stderr and nothing changed, when the file is
// missing, corrupt or written on another machine.
bool load_placement_history(const std::string& path);

// Returns the path of the bus calibration cache ("" when there is none): delete the file to
// measure the bus again.
std::string get_bus_calibration_path();

}  // namespace mt::config
