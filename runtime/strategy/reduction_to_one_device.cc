// ReductionToOneDevice (cross_device_ops.h): AddN of every replica's value on one device,
// then a copy of the result to each replica's device, with the eager ops, so placement,
// logging and the trace show each step.
#include "absl/strings/str_cat.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/error.h"
#include "runtime/ops/constant.h"
#include "runtime/ops/ops.h"
#include "runtime/strategy/cross_device_ops.h"
#include "runtime/strategy/status_of.h"

namespace mt::internal {
namespace {

class ReductionToOneDevice final : public CrossDeviceOps {
 public:
  ReductionToOneDevice(std::vector<std::string> devices, std::string reduce_to)
      : devices_(std::move(devices)), reduce_to_(std::move(reduce_to)) {}

  const char* name() const override { return "ReductionToOneDevice"; }

  absl::StatusOr<PerReplicaValues> batch_all_reduce(distribute::ReduceOp op,
                                                    const PerReplicaValues& in) override {
    PerReplicaValues out(in.size());
    absl::Status status = status_of([&] {
      std::vector<Tensor> parts(in.size());
      for (size_t k = 0; k < in[0].size(); ++k) {
        for (size_t r = 0; r < in.size(); ++r) parts[r] = in[r][k];
        Tensor reduced = reduce(op, parts);
        for (size_t r = 0; r < in.size(); ++r) {
          DeviceScope scope(devices_[r]);
          out[r].push_back(reduced.device() == devices_[r] ? reduced : identity(reduced));
        }
      }
    });
    if (!status.ok()) return status;
    return out;
  }

 private:
  Tensor reduce(distribute::ReduceOp op, const std::vector<Tensor>& parts) const {
    DeviceScope scope(reduce_to_);
    Tensor sum = parts.size() == 1 ? identity(parts[0]) : add_n(parts);
    if (op == distribute::ReduceOp::kSum) return sum;
    return div(sum, fill({}, static_cast<double>(parts.size()), sum.dtype()));
  }

  std::vector<std::string> devices_;
  std::string reduce_to_;
};

}  // namespace

std::unique_ptr<CrossDeviceOps> make_reduction_to_one_device(std::vector<std::string> devices,
                                                             std::string reduce_to) {
  return std::make_unique<ReductionToOneDevice>(std::move(devices), std::move(reduce_to));
}

}  // namespace mt::internal
