// MultiWorkerMirroredStrategy (multi_worker_strategy.h): the server of this worker's task,
// its CollectiveGroup, and the WorkerCollective that hands the runtime's values to it.
#include "distributed/multi_worker_strategy.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "distributed/cluster_spec.h"
#include "distributed/collective_group.h"
#include "runtime/eager/context.h"
#include "runtime/eager/error.h"
#include "runtime/eager/placement_log.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/strategy/worker_collective.h"

namespace mt::distribute {
namespace {

using mt::internal::TensorImpl;
using mt::internal::throw_if_error;

constexpr double kDefaultTimeoutSeconds = 300;

// The runtime's values through a CollectiveGroup: each run of values of one dtype packed
// into one host buffer, summed by one ring, and copied out (Note [Gradient buckets] in
// runtime/cuda/nccl_all_reduce.cc says why one call per value would not do).
class ClusterCollective final : public mt::internal::WorkerCollective {
 public:
  ClusterCollective(std::unique_ptr<distributed::Server> server,
                    std::unique_ptr<distributed::internal::CollectiveGroup> group)
      : server_(std::move(server)), group_(std::move(group)) {}
  ~ClusterCollective() override {
    group_.reset();  // before the server it reads from
  }

  int num_workers() const override { return group_->size(); }
  int worker_index() const override { return group_->rank(); }

  absl::StatusOr<std::vector<Tensor>> all_reduce_sum(const std::vector<Tensor>& values) override {
    std::vector<Tensor> out;
    for (size_t begin = 0, end = 0; begin < values.size(); begin = end) {
      int64_t elements = 0;
      for (end = begin; end < values.size() && values[end].dtype() == values[begin].dtype();
           ++end) {
        elements += values[end].num_elements();
      }
      MT_RETURN_IF_ERROR(reduce_run(values, begin, end, elements, out));
    }
    return out;
  }

 private:
  // Sums values [begin, end), of one dtype and `elements` elements in all, into `out`.
  absl::Status reduce_run(const std::vector<Tensor>& values, size_t begin, size_t end,
                          int64_t elements, std::vector<Tensor>& out) {
    const DType dtype = values[begin].dtype();
    MT_ASSIGN_OR_RETURN(mt::internal::Runtime * rt, mt::internal::Context::get().runtime());
    MT_ASSIGN_OR_RETURN(int cpu, rt->find_device("/CPU:0"));
    mt::internal::Device& host = rt->device(cpu);
    // One value is summed in its output; several in one buffer, then copied out.
    const bool single = end - begin == 1;
    MT_ASSIGN_OR_RETURN(Shape flat, Shape::make({elements}));
    MT_ASSIGN_OR_RETURN(
        TensorImpl * buffer,
        mt::internal::allocate_tensor(host, dtype, single ? values[begin].shape() : flat));
    Tensor packed(buffer);
    char* at = static_cast<char*>(buffer->data);
    for (size_t k = begin; k < end; ++k) {
      const TensorImpl& value = *values[k].impl();
      if (value.bytes() == 0) continue;
      // Waits for the value, on whatever device it is.
      MT_RETURN_IF_ERROR(value.device->copy_to_host(at, value.data, value.bytes()));
      at += value.bytes();
    }
    MT_RETURN_IF_ERROR(group_->all_reduce_sum(dtype, buffer->data, elements));
    if (single) {
      out.push_back(std::move(packed));
      return absl::OkStatus();
    }
    const char* from = static_cast<const char*>(buffer->data);
    for (size_t k = begin; k < end; ++k) {
      MT_ASSIGN_OR_RETURN(TensorImpl * value,
                          mt::internal::allocate_tensor(host, dtype, values[k].shape()));
      if (value->bytes() > 0) std::memcpy(value->data, from, value->bytes());
      from += value->bytes();
      out.push_back(Tensor(value));
    }
    return absl::OkStatus();
  }

  std::unique_ptr<distributed::Server> server_;  // null: the process runs its own
  std::unique_ptr<distributed::internal::CollectiveGroup> group_;
};

const char* implementation_name(CommunicationImplementation implementation) {
  switch (implementation) {
    case CommunicationImplementation::kRing:
      return "RING";
    case CommunicationImplementation::kNccl:
      return "NCCL";
    default:
      return "AUTO";
  }
}

std::shared_ptr<mt::internal::WorkerCollective> join_cluster(
    const distributed::ClusterSpec& cluster, std::string_view task_type, int task_id,
    const CommunicationOptions& communication, const MultiWorkerSecurity& security) {
  const std::string job(task_type);
  if (communication.implementation == CommunicationImplementation::kNccl) {
    throw_if_error(absl::UnimplementedError(
        "[MultiWorkerMirroredStrategy] NCCL between worker processes is not implemented yet; "
        "use CommunicationImplementation.RING or AUTO (the ring over the cluster's servers)"));
  }
  if (job != "chief" && job != "worker") {
    throw_if_error(absl::InvalidArgumentError(absl::StrCat(
        "[MultiWorkerMirroredStrategy] task ", distributed::internal::task_name(job, task_id),
        " takes no part in the collectives: only the tasks of jobs 'chief' and 'worker' do")));
  }
  const double seconds =
      communication.timeout_seconds == 0 ? kDefaultTimeoutSeconds : communication.timeout_seconds;
  if (!(seconds > 0) || seconds * 1000 >= double(int64_t{1} << 31)) {
    throw_if_error(absl::InvalidArgumentError(
        absl::StrCat("[MultiWorkerMirroredStrategy] timeout_seconds must be positive and below "
                     "2^31 ms, got ",
                     communication.timeout_seconds)));
  }
  distributed::internal::CollectiveOptions options;
  options.timeout_ms = std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000));
  options.connect = security.connect;
  throw_if_error(distributed::internal::validate_cluster(cluster, "MultiWorkerMirroredStrategy"));
  absl::StatusOr<std::string> own = distributed::internal::task_address(cluster, job, task_id);
  if (!own.ok()) {
    throw_if_error(absl::InvalidArgumentError(
        absl::StrCat("[MultiWorkerMirroredStrategy] ", own.status().message())));
  }
  std::unique_ptr<distributed::Server> server;
  if (distributed::internal::local_mailbox(*own) == nullptr) {
    server = std::make_unique<distributed::Server>(cluster, job, task_id, security.server);
  }
  const uint64_t number = distributed::internal::next_collective_group(*own);
  auto group =
      distributed::internal::CollectiveGroup::create(cluster, job, task_id, number, options);
  throw_if_error(group.status());
  distributed::internal::joined_collective_group(*own, number);
  return std::make_shared<ClusterCollective>(std::move(server), *std::move(group));
}

std::string describe(const distributed::ClusterSpec& cluster) {
  std::vector<std::string> jobs;
  for (const auto& [job, tasks] : cluster) {
    jobs.push_back(absl::StrCat("'", job, "': ['", absl::StrJoin(tasks, "', '"), "']"));
  }
  return absl::StrCat("{", absl::StrJoin(jobs, ", "), "}");
}

}  // namespace

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(const distributed::ClusterSpec& cluster,
                                                         std::string_view task_type, int task_id,
                                                         const CommunicationOptions& communication,
                                                         const MultiWorkerSecurity& security)
    : MultiWorkerMirroredStrategy(
          join_cluster(cluster, task_type, task_id, communication, security)) {
  std::vector<std::string> quoted;
  for (const std::string& name : devices()) quoted.push_back(absl::StrCat("'", name, "'"));
  mt::internal::log_line(absl::StrCat(
      "INFO:minitensor:MultiWorkerMirroredStrategy with cluster_spec = ", describe(cluster),
      ", task_type = '", std::string(task_type), "', task_id = ", task_id,
      ", num_workers = ", num_workers(), ", local_devices = (", absl::StrJoin(quoted, ", "),
      quoted.size() == 1 ? ",)" : ")", ", communication = CommunicationImplementation.",
      implementation_name(communication.implementation)));
}

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(
    std::shared_ptr<mt::internal::WorkerCollective> workers)
    : MirroredStrategy({}, workers), workers_(std::move(workers)) {}

MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() = default;

int MultiWorkerMirroredStrategy::num_workers() const { return workers_->num_workers(); }
int MultiWorkerMirroredStrategy::worker_index() const { return workers_->worker_index(); }

}  // namespace mt::distribute
