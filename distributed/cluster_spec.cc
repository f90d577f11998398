#include "distributed/cluster_spec.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace mt::distributed::internal {
namespace {

absl::Status invalid(std::string_view caller, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("[", std::string(caller), "] invalid cluster spec: ", std::string(what)));
}

bool is_job_name(std::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(s[0])) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// "host:port" with a port in [1, 65535]; IPv6 hosts are written "[::1]:port".
bool has_port(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  int port = 0;
  return absl::SimpleAtoi(address.substr(colon + 1), &port) && port > 0 && port < 65536;
}

}  // namespace

absl::Status validate_cluster(const ClusterSpec& spec, std::string_view caller) {
  if (spec.empty()) return invalid(caller, "it has no job");
  std::set<std::string> seen;
  for (const auto& [job, tasks] : spec) {
    if (!is_job_name(job)) {
      return invalid(caller, absl::StrCat("job name '", job, "' is not [A-Za-z][A-Za-z0-9_]*"));
    }
    if (tasks.empty()) return invalid(caller, absl::StrCat("job '", job, "' has no task"));
    for (size_t i = 0; i < tasks.size(); ++i) {
      const std::string& address = tasks[i];
      std::string who = absl::StrCat("task ", i, " of job '", job, "'");
      if (address.empty()) return invalid(caller, absl::StrCat(who, " has an empty address"));
      if (!has_port(address)) {
        return invalid(caller, absl::StrCat(who, " has address '", address, "', not host:port"));
      }
      if (!seen.insert(address).second) {
        return invalid(caller, absl::StrCat(who, " repeats address '", address, "'"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> task_address(const ClusterSpec& spec, std::string_view job, int task) {
  auto it = spec.find(std::string(job));
  if (it == spec.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job '", std::string(job), "' is not in the cluster spec"));
  }
  if (task < 0 || task >= static_cast<int>(it->second.size())) {
    return absl::InvalidArgumentError(absl::StrCat("task index ", task, " is outside job '",
                                                   std::string(job), "', which has ",
                                                   it->second.size(), " tasks"));
  }
  return it->second[task];
}

std::string task_name(std::string_view job, int task) {
  return absl::StrCat("/job:", std::string(job), "/replica:0/task:", task);
}

}  // namespace mt::distributed::internal
