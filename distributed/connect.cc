// mt::config::experimental_connect_to_cluster: asks every other task for its devices and
// hands the runtime a RemoteCluster that adds them at initialisation.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "distributed/bulk_service.h"
#include "distributed/cluster_spec.h"
#include "distributed/distributed.h"
#include "distributed/remote_device.h"
#include "distributed/task_client.h"
#include "runtime/eager/error.h"
#include "runtime/eager/remote.h"

namespace mt::distributed::internal {
namespace {

constexpr const char* kConnect = "[experimental_connect_to_cluster] ";

// Remote kernels run on their task; the placer only asks whether one exists.
absl::Status remote_kernel(const KernelContext&) {
  return absl::InternalError("a remote device's kernel runs on its task");
}

struct RemoteTask {
  std::shared_ptr<TaskClient> client;
  proto::GetDevicesResponse devices;
  std::unique_ptr<KernelRegistry> registry;  // what the task can run
};

class Cluster final : public mt::internal::RemoteCluster {
 public:
  explicit Cluster(std::vector<RemoteTask> tasks) : tasks_(std::move(tasks)) {}

  std::vector<mt::internal::RemoteDeviceEntry> make_devices() override {
    std::vector<mt::internal::RemoteDeviceEntry> out;
    for (const RemoteTask& task : tasks_) {
      for (int i = 0; i < task.devices.devices_size(); ++i) {
        const proto::DeviceAttrs& d = task.devices.devices(i);
        auto type = static_cast<DeviceType>(d.type());
        out.push_back({std::make_unique<RemoteDevice>(task.client, i, type, d.id()),
                       DeviceInfo{type, d.id(), task.client->job(), task.client->task(),
                                  task.registry.get()}});
      }
    }
    return out;
  }

 private:
  std::vector<RemoteTask> tasks_;
};

// Checks the task's answer and builds the registry of its kernels.
absl::Status check_devices(RemoteTask& task) {
  const proto::GetDevicesResponse& r = task.devices;
  if (r.num_ops() != kNumOps || r.num_dtypes() != kNumDTypes) {
    return absl::FailedPreconditionError(absl::StrCat(
        kConnect, "task ", task.client->name(), " was built with ", r.num_ops(), " ops and ",
        r.num_dtypes(), " dtypes, this process with ", kNumOps, " and ", kNumDTypes));
  }
  task.registry = std::make_unique<KernelRegistry>();
  for (const proto::DeviceAttrs& d : r.devices()) {
    if (d.type() < 0 || d.type() >= kNumDeviceTypes ||
        d.kernels().size() != static_cast<size_t>(kNumOps * kNumDeviceTypes * kNumDTypes)) {
      return absl::FailedPreconditionError(
          absl::StrCat(kConnect, "task ", task.client->name(), " sent a malformed device"));
    }
    size_t k = static_cast<size_t>(d.type()) * kNumDTypes;
    for (int op = 0; op < kNumOps; ++op, k += kNumDeviceTypes * kNumDTypes) {
      for (int dtype = 0; dtype < kNumDTypes; ++dtype) {
        if (d.kernels()[k + dtype] == 0) continue;
        (void)task.registry->add(static_cast<OpId>(op), static_cast<DeviceType>(d.type()),
                                 static_cast<DType>(dtype), remote_kernel);  // twice: same
      }
    }
  }
  return absl::OkStatus();
}

absl::Status check_options(const config::ConnectOptions& o) {
  if (o.rpc_timeout_ms <= 0 || o.connect_timeout_ms <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(kConnect, "timeouts must be positive"));
  }
  // Deadlines are steady_clock time points in nanoseconds: a timeout near INT64_MAX ms would
  // overflow into the past. 2^31 ms is 24.8 days.
  constexpr int64_t kMaxTimeoutMs = int64_t{1} << 31;
  if (o.rpc_timeout_ms >= kMaxTimeoutMs || o.connect_timeout_ms >= kMaxTimeoutMs) {
    return absl::InvalidArgumentError(
        absl::StrCat(kConnect, "timeouts must be below 2^31 ms (24.8 days), got rpc_timeout_ms ",
                     o.rpc_timeout_ms, " and connect_timeout_ms ", o.connect_timeout_ms));
  }
  if (o.max_message_bytes <= 0 || o.max_message_bytes > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        kConnect, "max_message_bytes must be in [1, 2^31), got ", o.max_message_bytes));
  }
  if (o.bulk_connections < 0 || o.bulk_connections > kMaxParts) {
    return absl::InvalidArgumentError(absl::StrCat(kConnect, "bulk_connections must be in [0, ",
                                                   kMaxParts, "], got ", o.bulk_connections));
  }
  return absl::OkStatus();
}

absl::Status connect(const ClusterSpec& spec, std::string_view job_name, int task_index,
                     const config::ConnectOptions& options) {
  MT_RETURN_IF_ERROR(validate_cluster(spec, "experimental_connect_to_cluster"));
  MT_RETURN_IF_ERROR(check_options(options));
  bool member = spec.count(std::string(job_name)) > 0;
  if (member || task_index != 0) {
    absl::StatusOr<std::string> own = task_address(spec, job_name, task_index);
    if (!own.ok())
      return absl::InvalidArgumentError(absl::StrCat(kConnect, own.status().message()));
  }
  std::vector<RemoteTask> tasks;
  for (const auto& [job, addresses] : spec) {
    for (int i = 0; i < static_cast<int>(addresses.size()); ++i) {
      if (job == job_name && i == task_index) continue;  // this process: its devices are local
      RemoteTask task;
      task.client = std::make_shared<TaskClient>(job, i, addresses[i], options);
      MT_ASSIGN_OR_RETURN(task.devices, task.client->get_devices());
      MT_RETURN_IF_ERROR(check_devices(task));
      tasks.push_back(std::move(task));
    }
  }
  return mt::internal::set_remote_cluster(std::make_shared<Cluster>(std::move(tasks)));
}

}  // namespace
}  // namespace mt::distributed::internal

namespace mt::config {

void experimental_connect_to_cluster(const distributed::ClusterSpec& cluster,
                                     std::string_view job_name, int task_index,
                                     const ConnectOptions& options) {
  mt::internal::throw_if_error(
      distributed::internal::connect(cluster, job_name, task_index, options));
}

}  // namespace mt::config
