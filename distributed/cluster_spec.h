#pragma once
// Checks on cluster specs and task names (internal).
//
//   MT_RETURN_IF_ERROR(validate_cluster(spec, "Server"));
//   MT_ASSIGN_OR_RETURN(std::string address, task_address(spec, "worker", 1));
//   task_name("worker", 1);  // "/job:worker/replica:0/task:1"

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "distributed/distributed.h"

namespace mt::distributed::internal {

// Returns InvalidArgument naming the fault: no job, a job name that is not an identifier,
// a job without tasks, an empty address, an address without ":port", the same address
// twice. The message starts "[<caller>] invalid cluster spec: ".
absl::Status validate_cluster(const ClusterSpec& spec, std::string_view caller);

// Returns the address of task `task` of `job`: InvalidArgument when the job is absent or
// the index is outside it. `spec` must be valid.
absl::StatusOr<std::string> task_address(const ClusterSpec& spec, std::string_view job, int task);

// Returns "/job:<job>/replica:0/task:<task>".
std::string task_name(std::string_view job, int task);

}  // namespace mt::distributed::internal
