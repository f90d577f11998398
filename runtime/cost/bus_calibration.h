#pragma once
// Bus calibration (internal): what the cost policy knows of copies between this machine's
// devices (runtime/cost/bus_model.h). The first time the policy decides, it reads the cache
// file; when that is missing, unreadable or of another machine, it times a small and a
// large copy over each kind of link the devices have (CPU to CPU, CPU to GPU, GPU to CPU,
// GPU to GPU: a few milliseconds) and writes the file for the next process.
//
// The file: $XDG_CACHE_HOME/minitensor/bus_calibration.txt, else
// $HOME/.cache/minitensor/bus_calibration.txt (none when neither variable is set). Deleting
// it makes the next process measure again.

#include <optional>
#include <string>

#include "runtime/cost/bus_model.h"

namespace mt::internal {

class Runtime;

// Returns the cache file's path, or "" when neither XDG_CACHE_HOME nor HOME is set.
std::string bus_cache_path();

// Returns the bus figures of `rt`'s local devices on machine `machine`: from the file at
// `path` when it holds this machine's, else measured (and written to `path` unless "").
BusModel load_or_measure_bus(const Runtime& rt, const std::string& machine,
                             const std::string& path);

// Times copies over each kind of link among `rt`'s local devices.
BusModel measure_bus(const Runtime& rt);

// Times fetching a 4 KiB and a 1 MiB tensor from the first device of another task (each
// fetch an RPC that waits for the task): Link::kNetwork's figures, or nullopt when no task
// is connected or a call fails. Measured in each process, never cached (the network
// depends on the cluster, not the machine); tens of milliseconds on loopback.
std::optional<LinkCost> measure_network(const Runtime& rt);

}  // namespace mt::internal
