// Cross-worker ops (worker_collective.h): this worker's replicas with its own cross-device
// ops, then the workers through the WorkerCollective, with the eager ops around it.
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "runtime/eager/device_scope.h"
#include "runtime/ops/constant.h"
#include "runtime/ops/ops.h"
#include "runtime/strategy/status_of.h"
#include "runtime/strategy/worker_collective.h"

namespace mt::internal {
namespace {

bool is_half(DType dtype) { return dtype == DType::kBFloat16 || dtype == DType::kFloat16; }

class CrossWorkerOps final : public CrossDeviceOps {
 public:
  CrossWorkerOps(std::unique_ptr<CrossDeviceOps> local, std::shared_ptr<WorkerCollective> workers,
                 int num_replicas_in_sync)
      : local_(std::move(local)),
        workers_(std::move(workers)),
        num_replicas_in_sync_(num_replicas_in_sync) {}

  const char* name() const override { return "CollectiveAllReduce"; }

  absl::StatusOr<PerReplicaValues> batch_all_reduce(distribute::ReduceOp op,
                                                    const PerReplicaValues& in) override {
    // One local replica (a CPU worker) has its sum already: no copy for the local stage.
    PerReplicaValues local;
    if (in.size() > 1) {
      MT_ASSIGN_OR_RETURN(local, local_->batch_all_reduce(distribute::ReduceOp::kSum, in));
    }
    const std::vector<Tensor>& mine = in.size() > 1 ? local[0] : in[0];
    MT_ASSIGN_OR_RETURN(std::vector<Tensor> reduced,
                        all_reduce_between_workers(*workers_, mine, op, num_replicas_in_sync_));
    PerReplicaValues out(in.size());
    MT_RETURN_IF_ERROR(status_of([&] {
      for (size_t r = 0; r < in.size(); ++r) {
        for (size_t k = 0; k < reduced.size(); ++k) {
          const std::string& device = in[r][k].device();
          DeviceScope scope(device);
          out[r].push_back(reduced[k].device() == device ? reduced[k] : identity(reduced[k]));
        }
      }
    }));
    return out;
  }

 private:
  std::unique_ptr<CrossDeviceOps> local_;
  std::shared_ptr<WorkerCollective> workers_;
  const int num_replicas_in_sync_;
};

}  // namespace

absl::StatusOr<std::vector<Tensor>> all_reduce_between_workers(WorkerCollective& workers,
                                                               const std::vector<Tensor>& values,
                                                               distribute::ReduceOp op,
                                                               double count) {
  std::vector<Tensor> summable;
  MT_RETURN_IF_ERROR(status_of([&] {
    for (const Tensor& v : values)
      summable.push_back(is_half(v.dtype()) ? cast(v, DType::kFloat32) : v);
  }));
  MT_ASSIGN_OR_RETURN(std::vector<Tensor> sums, workers.all_reduce_sum(summable));
  std::vector<Tensor> out;
  MT_RETURN_IF_ERROR(status_of([&] {
    for (size_t k = 0; k < values.size(); ++k) {
      DeviceScope scope(values[k].device());
      Tensor sum = sums[k];
      if (op == distribute::ReduceOp::kMean) sum = div(sum, fill({}, count, sum.dtype()));
      if (sum.dtype() != values[k].dtype()) sum = cast(sum, values[k].dtype());
      out.push_back(sum.device() == values[k].device() ? sum : identity(sum));
    }
  }));
  return out;
}

std::unique_ptr<CrossDeviceOps> make_cross_worker_ops(std::unique_ptr<CrossDeviceOps> local,
                                                      std::shared_ptr<WorkerCollective> workers,
                                                      int num_replicas_in_sync) {
  return std::make_unique<CrossWorkerOps>(std::move(local), std::move(workers),
                                          num_replicas_in_sync);
}

}  // namespace mt::internal
