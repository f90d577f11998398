// MirroredStrategy (mirrored_strategy.h): its devices, its cross-device ops, run() and
// reduce(). Variables and optimizers reach it through replica_hooks.cc.
#include "runtime/strategy/mirrored_strategy.h"

#include <atomic>
#include <exception>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/eager/context.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/error.h"
#include "runtime/eager/placement_log.h"
#include "runtime/function/function_recorder.h"
#include "runtime/ops/constant.h"
#include "runtime/ops/ops.h"
#include "runtime/strategy/strategy_state.h"

namespace mt::distribute {
namespace {

using mt::internal::CrossDeviceOps;
using mt::internal::Device;
using mt::internal::PerReplicaValues;
using mt::internal::throw_if_error;
using mt::internal::value_or_throw;

// Returns the replicas' devices: those named, or every local GPU, else the host CPU.
std::vector<Device*> choose_devices(const std::vector<std::string>& requested) {
  mt::internal::Runtime* rt = value_or_throw(mt::internal::Context::get().runtime());
  std::vector<Device*> devices;
  for (const std::string& name : requested) {
    Device* device = &rt->device(value_or_throw(rt->find_device(name)));
    for (Device* seen : devices) {
      if (seen == device) {
        throw_if_error(absl::InvalidArgumentError(
            absl::StrCat("[MirroredStrategy] device ", device->name(), " is named twice")));
      }
    }
    devices.push_back(device);
  }
  if (!requested.empty()) return devices;
  for (int i = 0; i < rt->num_devices(); ++i) {
    Device& device = rt->device(i);
    if (device.type() == DeviceType::kGPU && device.remote() == nullptr) devices.push_back(&device);
  }
  if (devices.empty()) devices.push_back(&rt->device(value_or_throw(rt->find_device("/CPU:0"))));
  return devices;
}

// Returns why NCCL cannot serve `devices`, or "" when it can: local GPUs on distinct cards.
std::string nccl_unsuitable(const std::vector<Device*>& devices) {
  std::set<int> cards;
  for (Device* device : devices) {
    if (device->type() != DeviceType::kGPU || device->remote() != nullptr) {
      return absl::StrCat(device->name(), " is not a local GPU");
    }
    if (!cards.insert(device->hardware_ordinal()).second) {
      return absl::StrCat("two replicas share physical GPU ", device->hardware_ordinal(),
                          " (virtual GPUs)");
    }
  }
  return devices.size() < 2 ? "one replica" : "";
}

// Note [Choosing the cross-device ops]
// As TensorFlow's MirroredStrategy: NCCL all-reduce when every replica is a local GPU on
// a card of its own and NCCL loads (an optional run-time dependency, nccl_library.h); else
// ReductionToOneDevice, for virtual GPUs of one card (NCCL refuses two ranks on one GPU),
// CPUs or a single replica. When NCCL would suit the devices but cannot load or start,
// the strategy warns once, as TensorFlow warns that its NCCL kernel is not found, and
// reduces to one device. An explicit kNcclAllReduce that cannot run is FailedPrecondition.
std::unique_ptr<CrossDeviceOps> choose_ops(const CrossDeviceOptions& options,
                                           const std::vector<Device*>& devices,
                                           const std::vector<std::string>& names) {
  using Kind = CrossDeviceOptions::Kind;
  if (options.kind != Kind::kReductionToOneDevice) {
    const std::string unsuitable = nccl_unsuitable(devices);
    if (unsuitable.empty()) {
      auto nccl = mt::internal::make_nccl_all_reduce(devices, options.bucket_bytes);
      if (nccl.ok()) return *std::move(nccl);
      if (options.kind == Kind::kNcclAllReduce) throw_if_error(nccl.status());
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true)) {
        mt::internal::log_line(absl::StrCat("WARNING:minitensor:NCCL is not available (",
                                            nccl.status().message(),
                                            "); MirroredStrategy reduces to one device"));
      }
    } else if (options.kind == Kind::kNcclAllReduce) {
      throw_if_error(absl::FailedPreconditionError(
          absl::StrCat("[MirroredStrategy] NCCL all-reduce cannot run: ", unsuitable)));
    }
  }
  std::string reduce_to = names[0];
  if (!options.reduce_to_device.empty()) {
    mt::internal::Runtime* rt = value_or_throw(mt::internal::Context::get().runtime());
    reduce_to = rt->device(value_or_throw(rt->find_device(options.reduce_to_device))).name();
  }
  return mt::internal::make_reduction_to_one_device(names, reduce_to);
}

std::vector<std::string> names_of(const std::vector<Device*>& devices) {
  std::vector<std::string> names;
  for (Device* device : devices) names.push_back(device->name());
  return names;
}

void check_cross_replica(const char* caller) {
  if (internal::replica_binding().state != nullptr) {
    throw_if_error(absl::FailedPreconditionError(absl::StrCat(
        "[MirroredStrategy.", caller, "] called inside run(): call it outside the replicas")));
  }
}

}  // namespace

namespace internal {
namespace {

uint64_t next_strategy_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

StrategyState::StrategyState(std::vector<std::string> names_in,
                             std::vector<mt::internal::Device*> devices_in,
                             std::unique_ptr<mt::internal::CrossDeviceOps> ops_in,
                             std::shared_ptr<mt::internal::WorkerCollective> workers_in)
    : id(next_strategy_id()),
      names(std::move(names_in)),
      devices(std::move(devices_in)),
      ops(std::move(ops_in)),
      workers(std::move(workers_in)),
      num_replicas_in_sync(static_cast<int>(names.size()) *
                           (workers == nullptr ? 1 : workers->num_workers())),
      first_replica(static_cast<int>(names.size()) *
                    (workers == nullptr ? 0 : workers->worker_index())),
      merge(static_cast<int>(names.size())),
      threads(static_cast<int>(names.size())) {
  for (int r = 0; r < static_cast<int>(names.size()); ++r)
    contexts.push_back(ReplicaContext(this, r));
}

}  // namespace internal

MirroredStrategy::MirroredStrategy(std::vector<std::string> devices,
                                   CrossDeviceOptions cross_device_ops) {
  std::vector<Device*> chosen = choose_devices(devices);
  std::vector<std::string> names = names_of(chosen);
  std::unique_ptr<CrossDeviceOps> ops = choose_ops(cross_device_ops, chosen, names);
  std::vector<std::string> quoted;
  for (const std::string& name : names) quoted.push_back(absl::StrCat("'", name, "'"));
  mt::internal::log_line(absl::StrCat("INFO:minitensor:Using MirroredStrategy with devices (",
                                      absl::StrJoin(quoted, ", "), names.size() == 1 ? ",)" : ")"));
  state_ = std::make_unique<internal::StrategyState>(std::move(names), std::move(chosen),
                                                     std::move(ops));
}

MirroredStrategy::MirroredStrategy(std::vector<std::string> devices,
                                   std::shared_ptr<mt::internal::WorkerCollective> workers) {
  std::vector<Device*> chosen = choose_devices(devices);
  std::vector<std::string> names = names_of(chosen);
  const int replicas = static_cast<int>(names.size()) * workers->num_workers();
  std::unique_ptr<CrossDeviceOps> ops = mt::internal::make_cross_worker_ops(
      mt::internal::make_reduction_to_one_device(names, names[0]), workers, replicas);
  state_ = std::make_unique<internal::StrategyState>(std::move(names), std::move(chosen),
                                                     std::move(ops), std::move(workers));
}

MirroredStrategy::~MirroredStrategy() = default;

int MirroredStrategy::num_replicas_in_sync() const { return state_->num_replicas_in_sync; }
const std::vector<std::string>& MirroredStrategy::devices() const { return state_->names; }
const char* MirroredStrategy::cross_device_ops_name() const { return state_->ops->name(); }

MirroredStrategy::Scope::Scope(internal::StrategyState* state) : state_(state) {
  std::vector<internal::StrategyState*>& stack = internal::scope_stack();
  if (!stack.empty() && stack.back() != state) {
    throw_if_error(absl::InvalidArgumentError(
        "[MirroredStrategy.scope] another MirroredStrategy's scope is active on this thread: "
        "strategies do not mix"));
  }
  stack.push_back(state);
}

MirroredStrategy::Scope::~Scope() {
  if (state_ != nullptr) internal::scope_stack().pop_back();
}

MirroredStrategy::Scope MirroredStrategy::scope() { return Scope(state_.get()); }

void MirroredStrategy::run_replicas(const std::function<void(ReplicaContext&)>& fn) {
  check_cross_replica("run");
  if (mt::internal::FunctionRecorder* recorder = mt::internal::active_recorder()) {
    // The replicas run on threads of their own, which this thread's trace does not see.
    recorder->set_unreplayable(absl::UnimplementedError(
        "[MirroredStrategy.run] the replicas run on threads this trace does not see; call the "
        "function inside run() instead, where each replica replays its own"));
  }
  internal::StrategyState& state = *state_;
  std::lock_guard<std::mutex> lock(state.run_mu);
  state.merge.reset();
  std::vector<std::exception_ptr> errors(state.names.size());
  std::atomic<int> first_failed{-1};
  state.threads.run_all([&](int r) {
    internal::replica_binding() = {&state, r};
    try {
      DeviceScope scope(state.names[r]);
      fn(state.context(r));
    } catch (...) {
      errors[r] = std::current_exception();
      if (state.merge.abort(absl::CancelledError(absl::StrCat("[MirroredStrategy.run] replica ", r,
                                                              " failed; this replica stopped")))) {
        first_failed = r;
      }
    }
    state.merge.finish(r);
    internal::replica_binding() = {};
  });
  if (first_failed >= 0) std::rethrow_exception(errors[first_failed]);
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

Tensor MirroredStrategy::reduce(ReduceOp op, absl::Span<const Tensor> per_replica,
                                std::optional<int> axis) {
  check_cross_replica("reduce");
  const size_t local = state_->names.size();
  if (per_replica.size() != local) {
    throw_if_error(absl::InvalidArgumentError(absl::StrCat(
        "[MirroredStrategy.reduce] got ", per_replica.size(), " values for ", local, " replicas")));
  }
  std::vector<Tensor> parts;
  double count = static_cast<double>(per_replica.size());
  if (axis.has_value()) count = 0;
  for (const Tensor& value : per_replica) {
    if (!axis.has_value()) {
      parts.push_back(value);
      continue;
    }
    const int rank = value.shape().rank();
    if (*axis < -rank || *axis >= rank) {
      throw_if_error(absl::InvalidArgumentError(absl::StrCat(
          "[MirroredStrategy.reduce] axis ", *axis, " is out of range for rank ", rank)));
    }
    count += static_cast<double>(value.shape().dim(*axis < 0 ? *axis + rank : *axis));
    parts.push_back(reduce_sum(value, *axis));
  }
  DeviceScope scope(state_->names[0]);
  Tensor sum = parts.size() == 1 ? identity(parts[0]) : add_n(parts);
  if (state_->workers != nullptr) return reduce_between_workers(op, sum, count);
  if (op == ReduceOp::kSum) return sum;
  return div(sum, fill({}, count, sum.dtype()));
}

Tensor MirroredStrategy::reduce_between_workers(ReduceOp op, const Tensor& sum, double count) {
  std::vector<Tensor> values = {sum};
  if (op == ReduceOp::kMean) values.push_back(fill({}, count, DType::kFloat64));  // uneven axes
  std::vector<Tensor> sums = value_or_throw(
      mt::internal::all_reduce_between_workers(*state_->workers, values, ReduceOp::kSum, 1));
  if (op == ReduceOp::kSum) return sums[0];
  return div(sums[0], cast(sums[1], sums[0].dtype()));
}

int ReplicaContext::num_replicas_in_sync() const { return state_->num_replicas_in_sync; }

int ReplicaContext::replica_id_in_sync_group() const { return state_->first_replica + id_; }

const std::string& ReplicaContext::device() const { return state_->names[id_]; }

Tensor ReplicaContext::all_reduce(ReduceOp op, const Tensor& value) {
  return all_reduce(op, absl::MakeConstSpan(&value, 1))[0];
}

ReplicaContext* get_replica_context() {
  internal::ReplicaBinding& binding = internal::replica_binding();
  return binding.state == nullptr ? nullptr : &binding.state->context(binding.replica);
}

}  // namespace mt::distribute
